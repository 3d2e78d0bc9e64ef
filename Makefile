# BlueCap for Linux: build, test, demo.
#
#   make test    install what is missing (apt), then run every test tier
#   make demo    install what is missing, then stream 20 samples from a simulated SensorTag
#   make bench   benchmarks against the C libdbus baseline, bleak and simplepyble (BENCHMARKS.md);
#                BENCH_ARGS=--quick for a short run
#
# Every target installs the Debian packages it needs when they are absent, so a fresh
# machine needs nothing but Swift and this repository.

SWIFT ?= $(shell command -v swift 2>/dev/null || echo /opt/swift/usr/bin/swift)
export PATH := $(dir $(SWIFT)):$(PATH)

# Debian packages the build and the bus-tier tests need.
APT_BUILD := libdbus-1-dev pkg-config dbus python3-dbus

.PHONY: all build test test-unit deps demo bench clean

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
