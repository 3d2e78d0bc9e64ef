"""A/B of two builds on the P3 scan storm: the C baseline and each given `bluecap-bench` binary
scan the same storm at once, run after run; prints each client's CPU per event, its ratio to the
baseline of the same run, and the paired ratio of every build to the first.

    python ab_scan.py before=/tmp/bench-a,after=.build/release/bluecap-bench [--runs 6] [--seconds 8]

Builds of the same code give paired ratios within ~1 %; a difference below the spread of the
pairs (printed as min–max) is not a result.
"""
import argparse
import os
import statistics
import sys
import threading

sys.path.insert(0, os.path.dirname(__file__))
from clients import run_client  # noqa: E402
from simulator import Simulator  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("builds", help="name=path[,name=path...] of bluecap-bench binaries")
    p.add_argument("--runs", type=int, default=6)
    p.add_argument("--seconds", type=float, default=8.0)
    p.add_argument("--devices", type=int, default=1000)
    p.add_argument("--hz", type=float, default=10.0)
    args = p.parse_args()
    builds = dict(b.split("=", 1) for b in args.builds.split(","))
    for name, path in builds.items():
        if not os.access(path, os.X_OK):
            sys.exit(f"{name}: {path} is not an executable bluecap-bench (build one with `swift build -c release --product bluecap-bench`)")
    baseline = os.path.join(ROOT, ".build", "bench", "baseline")
    if not os.access(baseline, os.X_OK):
        sys.exit(f"no C baseline at {baseline}: run `make bench` once (it builds it)")
    names = ["baseline"] + list(builds)
    ratios = {n: [] for n in names}
    sim = Simulator(os.path.join(ROOT, ".build", "release", "bluez-sim"), adapters=1)
    try:
        sim.start_storm(args.devices, args.hz)
        for run in range(args.runs):
            cost = {}

            def measure(name):
                argv = ([baseline, "scan", "--count", "0", "--inflight", "1", "--seconds", str(args.seconds)] if name == "baseline"
                        else [builds[name], "client", "scan", "--variant", "futurestream", "--seconds", str(args.seconds)])
                r = run_client(argv, sim.address, timeout=args.seconds + 120)
                events = r.get("events", r.get("changed", 0) + r.get("added", 0))
                cost[name] = r["cpu_s"] * 1e6 / max(events, 1)

            threads = [threading.Thread(target=measure, args=(n,)) for n in names]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            if len(cost) != len(names):
                sys.exit(f"run {run + 1}: a client failed (see above)")
            print(f"run {run + 1}/{args.runs}: " + "  ".join(f"{n} {cost[n]:.2f} µs ({cost[n] / cost['baseline']:.2f}x)" for n in names), flush=True)
            for n in names:
                ratios[n].append(cost[n] / cost["baseline"])
        print("median ratio to the C baseline: " + "  ".join(f"{n} {statistics.median(ratios[n]):.3f}" for n in names[1:]))
        first = names[1]
        for n in names[2:]:
            paired = [a / b for a, b in zip(ratios[n], ratios[first])]
            print(f"{n} / {first}, paired per run: median {statistics.median(paired):.3f} ({min(paired):.3f}–{max(paired):.3f})")
    finally:
        sim.stop()


if __name__ == "__main__":
    main()
