"""Profiles one client on one workload with `perf record -g` (CPU after "ready" only).

    python profile.py <peer> <notify|acquire|read|scan> [--count N] [--inflight K] [--seconds S] [--out FILE]

`scan` profiles the P3 storm (1,000 devices x 10 RSSI updates/s; `--devices`, `--hz`) for
`--seconds` (10). `--call-graph dwarf` records DWARF call graphs (frame pointers otherwise).
`--paced HZ` makes the simulator send the `--count` values of notify/acquire at HZ to a live
client (a sensor's rate: a wake-up per value) instead of a burst to a stopped one.

Prints the top of `perf report --no-children` (self time by symbol), then with `--children`
the top of the inclusive report (each frame's share with everything it calls).
"""
import argparse
import os
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from clients import Peers, UUID_CHAR, UUID_INDICATE, run_client, stopped  # noqa: E402
from simulator import Simulator  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEVICE = "B0:00:00:00:00:01"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("peer")
    p.add_argument("workload")
    p.add_argument("--count", type=int, default=50_000)
    p.add_argument("--inflight", type=int, default=1)
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--out", default="/tmp/bluecap-bench.perf")
    p.add_argument("--devices", type=int, default=1000)
    p.add_argument("--hz", type=float, default=10.0)
    p.add_argument("--call-graph", default="fp")
    p.add_argument("--children", action="store_true")
    p.add_argument("--paced", type=float, default=0.0,
                   help="notify/acquire: the simulator sends --count values at this rate (StartNotifyPace) to a live client, instead of a burst")
    args = p.parse_args()
    peers = Peers(ROOT, os.path.join(ROOT, ".build", "release"), os.path.join(ROOT, ".build", "bench", "baseline"), sys.executable)
    sim = Simulator(os.path.join(ROOT, ".build", "release", "bluez-sim"), os.path.join(ROOT, "Benchmarks", "scenario.json"))
    perf = {}
    try:
        if args.workload == "scan":
            sim.start_storm(args.devices, args.hz)
            argv = peers.command(args.peer, "scan", [], [], seconds=args.seconds)
        else:
            uuid = UUID_INDICATE if args.workload == "notify" else UUID_CHAR
            (path,) = sim.setup([DEVICE], uuid)
            argv = peers.command(args.peer, args.workload, [DEVICE], [path], count=args.count, inflight=args.inflight, uuid=uuid)

        def on_ready(pid):
            perf["p"] = subprocess.Popen(["perf", "record", "-e", "cpu-clock", "-F", "4000", "--call-graph", args.call_graph,
                                          "-o", args.out, "-p", str(pid)],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if args.paced > 0 and args.workload in ("notify", "acquire"):
                target = "FFF2" if args.workload == "notify" else "FFF1"
                sim.control("StartNotifyPace", "assdu", [[DEVICE], target, args.paced, args.count])
            elif args.workload == "notify":
                stopped(pid, lambda: sim.control("Burst", "ssu", [DEVICE, "FFF2", args.count]))
            elif args.workload == "acquire":
                sim.control("Burst", "ssu", [DEVICE, "FFF1", args.count])

        r = run_client(argv, sim.address, on_ready)
        print(r)
    finally:
        if "p" in perf:
            perf["p"].send_signal(signal.SIGINT)
            perf["p"].wait()
        sim.stop()
    report = subprocess.run(["perf", "report", "-i", args.out, "--no-children", "--stdio", "--percent-limit", "1.5",
                             "-g", "none", "--sort", "dso,symbol"], capture_output=True, text=True)
    print("\n".join(l for l in report.stdout.splitlines() if l and not l.startswith("#"))[:6000])
    if args.children:
        report = subprocess.run(["perf", "report", "-i", args.out, "--children", "--stdio", "--percent-limit", "3",
                                 "-g", "none", "--sort", "symbol"], capture_output=True, text=True)
        print("inclusive:")
        print("\n".join(l for l in report.stdout.splitlines() if l and not l.startswith("#"))[:8000])


if __name__ == "__main__":
    main()
