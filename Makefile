# BlueCap for Linux: build, test, demo.
#
#   make test      install what is missing (apt), then run every test tier:
#                  unit + bus (swift test, private dbus-daemons) and real BlueZ (qemu VM)
#   make demo      install what is missing, then stream 20 samples from a simulated SensorTag
#   make test-vm   the real-BlueZ tier alone (Scripts/bluez-vm)
#   make tsan      the unit and bus tiers under ThreadSanitizer
#   make asan      the unit and bus tiers under AddressSanitizer
#
# Every target installs the Debian packages it needs when they are absent, so a fresh
# machine needs nothing but Swift and this repository.

SWIFT ?= $(shell command -v swift 2>/dev/null || echo /opt/swift/usr/bin/swift)
export PATH := $(dir $(SWIFT)):$(PATH)

# Debian packages the build and the bus-tier tests need.
APT_BUILD := libdbus-1-dev pkg-config dbus python3-dbus python3-gi

.PHONY: all build deps test test-bus test-vm tsan asan demo clean

all: build

## deps: install the missing Debian packages (root, or sudo when available).
deps:
	@Scripts/apt-ensure $(APT_BUILD)

build: deps
	$(SWIFT) build

## test: every tier, in order: unit + bus, then real BlueZ in a VM.
test: test-bus test-vm

## test-bus: unit tests and bus-tier tests (private dbus-daemon + BlueZSimulator).
test-bus: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

## test-vm: real bluetoothd + btvirt in a qemu VM (installs qemu & co. when missing).
test-vm: deps
	$(SWIFT) build
	Scripts/bluez-vm/test-vm

tsan: deps
	$(SWIFT) test --sanitize=thread --scratch-path .build/tsan

asan: deps
	$(SWIFT) test --sanitize=address --scratch-path .build/asan

demo: deps
	$(SWIFT) run -c release central-scanner --accelerometer --simulate --samples 20

clean:
	rm -rf .build
