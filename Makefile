# BlueCap for Linux: build, test, demo.
#
#   make test    install what is missing (apt), then run every test tier
#   make demo    install what is missing, then stream 20 samples from a simulated SensorTag
#
# Every target installs the Debian packages it needs when they are absent, so a fresh
# machine needs nothing but Swift and this repository.

SWIFT ?= $(shell command -v swift 2>/dev/null || echo /opt/swift/usr/bin/swift)
export PATH := $(dir $(SWIFT)):$(PATH)

# Debian packages the build and the bus-tier tests need.
APT_BUILD := libdbus-1-dev pkg-config dbus python3-dbus

.PHONY: all build test test-unit deps demo clean

all: build

## deps: install the missing Debian packages (root, or sudo when available).
deps:
	@Scripts/apt-ensure $(APT_BUILD)

build: deps
	$(SWIFT) build

## test: every tier (unit + bus). Later tiers append themselves here.
test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

clean:
	rm -rf .build
