# BlueCap for Linux: build, test, demo.
#
#   make test      install what is missing (apt), then run every test tier:
#                  unit + bus (swift test, private dbus-daemons), the examples built as a user's
#                  package (examples-package) and real BlueZ (qemu VM)
#   make examples-package  copy Examples/ into a fresh package that depends on this one by path
#                  and only on its products BlueCapKit and BlueZSimulator, and build it
#                  (Scripts/examples-as-package; scratch .build/examples-as-package, incremental)
#   make demo      install what is missing, then stream 20 samples from a simulated SensorTag
#   make test-vm   the real-BlueZ tier alone (Scripts/bluez-vm)
#   make docs      the DocC reference as a static site in .build/docs; fails on an undocumented
#                  public symbol, any docc warning or a public type left out of its module's topic
#                  groups (about a minute once built)
#   make tsan      every unit and bus-tier suite under ThreadSanitizer (SANITIZE_SUITES='A|B' for some)
#   make asan      the same under AddressSanitizer
#   make fuzz      each libFuzzer target for FUZZ_SECONDS (60), or FUZZ_RUNS executions, growing
#                  its working corpus in .build/fuzz (kept between runs: a campaign resumes)
#   make fuzz-merge  add what the working corpora cover beyond Tests/Fuzz/corpus to it (minimized)
#   make soak      SOAK_CYCLES (1000) connect cycles, a SOAK_SECONDS (600) scan storm, RSS/fd
#                  table, then a leak check (LeakSanitizer) over a short cycle run
#   make soak-vm   by hand, never in `make test`: SOAK_VM_MINUTES (30) in the real-BlueZ VM of
#                  connect → discover → 100 numbered notifications → disconnect cycles between
#                  our peripheral (hci1) and central (hci0) processes, bluetoothd killed and
#                  restarted every SOAK_VM_RESTART_MINUTES (5); every notification checked once
#                  and in order, RSS/fds of both sampled each minute, table + verdict
#                  (Scripts/bluez-vm/steps/soak; SOAK_VM_MINUTES=2 SOAK_VM_RESTART_MINUTES=1 to try it)
#   make bench     benchmarks against the C libdbus baseline, bleak and simplepyble (BENCHMARKS.md);
#                  BENCH_ARGS=--quick: the regression check (< 5 min, prints every ratio)
#
# Every target installs the Debian packages it needs when they are absent, so a fresh
# machine needs nothing but Swift and this repository.

SWIFT ?= $(shell command -v swift 2>/dev/null || echo /opt/swift/usr/bin/swift)
export PATH := $(dir $(SWIFT)):$(PATH)

# Debian packages the build and the bus-tier tests need (libmosquitto-dev for the ble-gateway
# example, mosquitto for its tests and its --simulate, mosquitto-clients to watch it by hand).
APT_BUILD := libdbus-1-dev pkg-config dbus python3-dbus python3-gi libmosquitto-dev mosquitto mosquitto-clients

.PHONY: all build deps docs test vm-setup-ahead test-bus examples-package test-vm tsan asan asan-if-changed fuzz fuzz-merge soak soak-vm demo bench clean

all: build

## deps: install the missing Debian packages (root, or sudo when available).
deps:
	@Scripts/apt-ensure $(APT_BUILD)

build: deps
	$(SWIFT) build

## test: every tier, in order: unit + bus, the examples as a package, then real BlueZ in a VM
## (Scripts/bluez-vm/test-vm: the harness smoke test, both examples talking across real
## bluetoothd, and the VMTests target) on every bluetoothd our users run: Debian 12's 5.66 and
## Debian 13's 5.82 in full, Debian 11's 5.55 for the subset (smoke, examples, connect / read /
## write / notify, reconnection, pairing); BLUEZ_VERSIONS narrows it (e.g. BLUEZ_VERSIONS=5.66).
## The VM tier's setup (kernel, each version's bluetoothd, the third-party venv) starts first, in
## the background at the lowest priority (Scripts/bluez-vm/setup-ahead): its downloads and builds
## overlap with the first tiers, and test-vm waits for it.
BLUEZ_VERSIONS ?= 5.66 5.82 5.55:subset
test: deps vm-setup-ahead test-bus examples-package docs
	$(SWIFT) build --build-tests
	BLUEZ_VERSIONS="$(BLUEZ_VERSIONS)" Scripts/bluez-vm/test-vm

vm-setup-ahead:
	@Scripts/bluez-vm/setup-ahead "$(BLUEZ_VERSIONS)"

## docs: DocC archives for BlueCapKit, BlueZSimulator, Futures, Timing and BlueCapTesting in .build/docs
## (static hosting). Fails when a public symbol declared in Sources/ lacks a doc comment
## (Scripts/docs-coverage over the symbol graphs), when docc warns (--warnings-as-errors), or when
## a module's landing page leaves a symbol to docc's automatic topic groups (Scripts/docs-topics).
docs: deps
	SWIFT=$(SWIFT) Scripts/docs

## test-bus: unit tests and bus-tier tests (private dbus-daemon + BlueZSimulator), one parallel run.
## The timeout, retry and scan-timeout tests run the manager on a manual clock (CentralRig's
## manualClock), so the Futures stress tests loading every core cannot stretch their deadlines.
test-bus: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

## examples-package: Examples/ as a user who copies them has it: a package of its own depending on
## this one by path, through the products BlueCapKit and BlueZSimulator alone. Fails when an
## example imports a module no product offers, or when the copy does not build. Its own scratch
## path: the first run compiles BlueCapKit again there, later runs only the examples. `make test`
## runs it after test-bus (prerequisites in order).
examples-package: deps
	SWIFT=$(SWIFT) Scripts/examples-as-package

## test-vm: real bluetoothd + btvirt in a qemu VM (installs qemu & co. when missing): the python
## smoke test, the examples against each other, the VMTests target (BLUECAP_VM=1), on each of
## BLUEZ_VERSIONS.
test-vm: deps
	$(SWIFT) build --build-tests
	BLUEZ_VERSIONS="$(BLUEZ_VERSIONS)" Scripts/bluez-vm/test-vm

## Sanitizers (Scripts/sanitize): own scratch paths, so they never invalidate the plain build;
## FuturesTests, then every other suite one test at a time. SANITIZE_SUITES='A|B' for only those.
## tsan: every lock is a pthread mutex (Locking.Locked), which TSan sees: no build flag needed.
## CI runs tsan always, and asan when Sources/DBus or Sources/Futures changed since the run
## recorded in .ci/asan-checked (a clean `make asan` records it: commit that file).
tsan: deps
	Scripts/sanitize thread

asan: deps
	Scripts/sanitize address

asan-if-changed: deps
	Scripts/sanitize address --if-changed

## fuzz: libFuzzer builds, optimized (-c release; -enable-testing for the targets' @testable imports;
## -DFUZZING selects libFuzzer's driver), each target run for FUZZ_SECONDS or, when FUZZ_RUNS is
## set, for that many executions (several hours: run it in the background). Each grows its working
## corpus .build/fuzz/corpus-<target>, seeded from Tests/Fuzz/corpus/<target> and kept between runs;
## crashes land in .build/fuzz/artifacts. The D-Bus targets run under ASan (their code reads and
## writes through unsafe pointers and libdbus), without allocation stacks (malloc_context_size=0:
## a third of each execution otherwise; reproduce a crash with the replay build for the full
## report). SerDeFuzzer runs without ASan, 2.5x faster: the code under test makes no unsafe memory
## access, and Swift's own bounds and overflow checks stay on in -O builds. Its inputs are capped
## at 512 bytes, the largest attribute value ATT allows.
FUZZ_SECONDS ?= 60
FUZZ_RUNS ?=
FUZZ_TARGETS := DBusMessageFuzzer SerDeFuzzer ExportedObjectFuzzer
fuzz_sanitizers = $(if $(filter SerDeFuzzer,$(1)),fuzzer,fuzzer$(comma)address)
fuzz_options = $(if $(filter SerDeFuzzer,$(1)),-max_len=512)
comma := ,
fuzz_scratch = .build/fuzz/$(call fuzz_sanitizers,$(1))
fuzz_build = $(SWIFT) build -c release -Xswiftc -enable-testing -Xswiftc -DFUZZING \
	-Xswiftc -sanitize=$(call fuzz_sanitizers,$(1)) --scratch-path $(call fuzz_scratch,$(1)) --product $(1)
FUZZ_ENV = LSAN_OPTIONS=suppressions=$(CURDIR)/Tests/Sanitizers/lsan.supp ASAN_OPTIONS=quarantine_size_mb=64:malloc_context_size=0
FUZZ_LIMIT = $(if $(FUZZ_RUNS),-runs=$(FUZZ_RUNS),-max_total_time=$(FUZZ_SECONDS))

fuzz: deps
	@mkdir -p .build/fuzz/artifacts
	@$(foreach t,$(FUZZ_TARGETS), \
		$(call fuzz_build,$(t)) || exit 1; \
		mkdir -p .build/fuzz/corpus-$(t) && cp -n Tests/Fuzz/corpus/$(t)/* .build/fuzz/corpus-$(t)/; \
		echo "== $(t): $(if $(FUZZ_RUNS),$(FUZZ_RUNS) executions,$(FUZZ_SECONDS) s), working corpus .build/fuzz/corpus-$(t)"; \
		$(FUZZ_ENV) $(call fuzz_scratch,$(t))/release/$(t) .build/fuzz/corpus-$(t) $(FUZZ_LIMIT) \
			$(call fuzz_options,$(t)) -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix=.build/fuzz/artifacts/$(t)- 2>&1 \
			| grep -E "^#[0-9]+[[:space:]]+(INITED|DONE|pulse)|stat::number_of_executed_units|stat::average_exec_per_sec|ERROR|SUMMARY|crash-|Done" \
			|| true; \
		test -z "$$(ls .build/fuzz/artifacts/$(t)-* 2>/dev/null)" || { echo "$(t): crash artifacts in .build/fuzz/artifacts"; exit 1; }; \
	)

## fuzz-merge: libFuzzer's -merge=1 adds to Tests/Fuzz/corpus/<target> only the working-corpus
## inputs that cover something it does not (the committed corpus stays minimal); then commit.
fuzz-merge: deps
	@$(foreach t,$(FUZZ_TARGETS), \
		$(call fuzz_build,$(t)) || exit 1; \
		if test -d .build/fuzz/corpus-$(t); then \
			before=$$(ls Tests/Fuzz/corpus/$(t) | wc -l); \
			$(FUZZ_ENV) $(call fuzz_scratch,$(t))/release/$(t) -merge=1 $(call fuzz_options,$(t)) \
				Tests/Fuzz/corpus/$(t) .build/fuzz/corpus-$(t) 2>&1 | grep -E "MERGE-OUTER: [0-9]+ new files" || true; \
			echo "== $(t): Tests/Fuzz/corpus/$(t) $$before → $$(ls Tests/Fuzz/corpus/$(t) | wc -l) inputs"; \
		else echo "$(t): no working corpus (run make fuzz first)"; fi; \
	)

## soak: bounded runs that stop by themselves; then LeakSanitizer over a short cycle run.
SOAK_CYCLES ?= 1000
SOAK_SECONDS ?= 600
LEAK_CYCLES ?= 100

soak: deps
	$(SWIFT) build -c release --product bluecap-soak
	.build/release/bluecap-soak all --count $(SOAK_CYCLES) --duration $(SOAK_SECONDS)
	$(SWIFT) build --sanitize=address --scratch-path .build/asan --product bluecap-soak
	ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$(CURDIR)/Tests/Sanitizers/lsan.supp \
		.build/asan/debug/bluecap-soak cycles --count $(LEAK_CYCLES)

## soak-vm: the real-BlueZ soak (by hand, not in `make test`): release bluecap-soak as the peripheral
## (hci1) and the central (hci0) in one VM run, bluetoothd restarts, table and verdict
## (Scripts/bluez-vm/README.md). The VM's hard limit is the soak plus 15 minutes.
SOAK_VM_MINUTES ?= 30
SOAK_VM_RESTART_MINUTES ?= 5

soak-vm: deps
	$(SWIFT) build -c release --product bluecap-soak
	Scripts/bluez-vm/setup
	SOAK_VM_MINUTES=$(SOAK_VM_MINUTES) SOAK_VM_RESTART_MINUTES=$(SOAK_VM_RESTART_MINUTES) \
		Scripts/bluez-vm/run --timeout $$(( $(SOAK_VM_MINUTES) * 60 + 900 )) -- \
		Scripts/bluez-vm/steps/soak $(CURDIR)/.build/release

demo: deps
	$(SWIFT) run -c release central-scanner --accelerometer --simulate --samples 20

## bench: release build, C baseline, peers in a venv (PyPI), then every workload.
BENCH_VENV := .build/bench-venv
BENCH_PY := $(BENCH_VENV)/bin/python
# Sizes that keep `make bench` near 18 minutes on a 2-core machine (5 runs of every figure);
# BENCH_ARGS="--notify-count 200000 --reads 10000 --scan-seconds 60" for the issue's full sizes.
BENCH_ARGS ?= --notify-count 30000 --reads 3000 --scan-seconds 20

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
