"""A/B on the P2 read workload: clients take turns reading one simulated characteristic, round
after round (the order reversed every other round), and the script prints each client's CPU per
read and the paired ratio of every client to the first.

    python ab_read.py before=/tmp/bench-a,after=.build/release/bluecap-bench [--variant async-executor]
    python ab_read.py .build/release/bluecap-bench --variants futurestream,async-executor,async

The first form compares builds on one client variant; the second compares variants of one
build (async ÷ FutureStream within a binary). `--rounds` (16), `--count` reads per run (3,000),
`--inflight` reads kept in flight (1). A difference below the spread of the pairs (printed as
min–max) is not a result.
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(__file__))
from clients import UUID_CHAR, UUID_SERVICE, run_client  # noqa: E402
from simulator import Simulator  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEVICE = "B0:00:00:00:00:01"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("builds", help="name=path[,name=path...] of bluecap-bench binaries, or one path with --variants")
    p.add_argument("--variant", default="async-executor")
    p.add_argument("--variants", help="comma-separated client variants of one build")
    p.add_argument("--rounds", type=int, default=16)
    p.add_argument("--count", type=int, default=3000)
    p.add_argument("--inflight", type=int, default=1)
    args = p.parse_args()
    if args.variants:
        clients = [(v, args.builds, v) for v in args.variants.split(",")]
    else:
        clients = [(n, path, args.variant) for n, path in (b.split("=", 1) for b in args.builds.split(","))]
    if len(clients) < 2:
        sys.exit("give two builds (name=path,name=path) or one build and two --variants")
    for name, path, _ in clients:
        if not os.access(path, os.X_OK):
            sys.exit(f"{name}: {path} is not an executable bluecap-bench (build one with `swift build -c release --product bluecap-bench`)")
    sim = Simulator(os.path.join(ROOT, ".build", "release", "bluez-sim"), os.path.join(ROOT, "Benchmarks", "scenario.json"))
    cpu = {name: [] for name, _, _ in clients}
    try:
        sim.setup([DEVICE], UUID_CHAR)
        for r in range(args.rounds):
            for name, path, variant in (clients if r % 2 == 0 else list(reversed(clients))):
                argv = [path, "client", "read", "--variant", variant, "--address", DEVICE, "--service", UUID_SERVICE,
                        "--uuid", UUID_CHAR, "--count", str(args.count), "--inflight", str(args.inflight), "--seconds", "0"]
                result = run_client(argv, sim.address)
                cpu[name].append(result["cpu_s"] * 1e6 / result["count"])
            print(f"round {r + 1}/{args.rounds}: " + "  ".join(f"{n} {cpu[n][-1]:.1f} µs" for n in cpu), flush=True)
    finally:
        sim.stop()
    first = clients[0][0]
    print(f"CPU µs per read, {args.inflight} in flight, median: " + "  ".join(f"{n} {statistics.median(v):.1f}" for n, v in cpu.items()))
    for name, _, _ in clients[1:]:
        pairs = [a / b for a, b in zip(cpu[name], cpu[first])]
        print(f"  {name} ÷ {first}, paired: {statistics.median(pairs):.3f} ({min(pairs):.3f}–{max(pairs):.3f}, {len(pairs)} pairs)")


if __name__ == "__main__":
    main()
