# BlueCap for Linux: build, test, demo.
#
#   make test      install what is missing (apt), then run every test tier:
#                  unit + bus (swift test, private dbus-daemons) and real BlueZ (qemu VM)
#   make demo      install what is missing, then stream 20 samples from a simulated SensorTag
#   make test-vm   the real-BlueZ tier alone (Scripts/bluez-vm)
#   make tsan      the unit and bus tiers under ThreadSanitizer
#   make asan      the unit and bus tiers under AddressSanitizer
#   make bench     benchmarks against the C libdbus baseline, bleak and simplepyble (BENCHMARKS.md);
#                  BENCH_ARGS=--quick for a short run
#
# Every target installs the Debian packages it needs when they are absent, so a fresh
# machine needs nothing but Swift and this repository.

SWIFT ?= $(shell command -v swift 2>/dev/null || echo /opt/swift/usr/bin/swift)
export PATH := $(dir $(SWIFT)):$(PATH)

# Debian packages the build and the bus-tier tests need.
APT_BUILD := libdbus-1-dev pkg-config dbus python3-dbus python3-gi

.PHONY: all build deps test test-bus test-vm tsan asan demo bench clean

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

## test-vm: real bluetoothd + btvirt in a qemu VM (installs qemu & co. when missing): the python
## smoke test, the examples against each other, the VMTests target (BLUECAP_VM=1).
test-vm: deps
	$(SWIFT) build --build-tests
	Scripts/bluez-vm/test-vm

tsan: deps
	$(SWIFT) test --sanitize=thread --scratch-path .build/tsan

asan: deps
	$(SWIFT) test --sanitize=address --scratch-path .build/asan

demo: deps
	$(SWIFT) run -c release central-scanner --accelerometer --simulate --samples 20

## bench: release build, C baseline, peers in a venv (PyPI), then every workload.
BENCH_VENV := .build/bench-venv
BENCH_PY := $(BENCH_VENV)/bin/python
BENCH_ARGS ?=

bench: deps
	@Scripts/apt-ensure gcc libdbus-1-dev python3-venv
	$(SWIFT) build -c release --product bluez-sim
	$(SWIFT) build -c release --product bluecap-bench
	@mkdir -p .build/bench
	gcc -O2 -Wall -Wextra -o .build/bench/baseline Benchmarks/baseline/baseline.c $$(pkg-config --cflags --libs dbus-1)
	@test -x $(BENCH_PY) || /usr/bin/python3 -m venv $(BENCH_VENV)
	@$(BENCH_PY) -c "import bleak, simplepyble, matplotlib" 2>/dev/null || \
		$(BENCH_VENV)/bin/pip install -q bleak simplepyble matplotlib
	$(BENCH_PY) Benchmarks/harness/run.py $(BENCH_ARGS)

clean:
	rm -rf .build
