"""The P3 storm held for a long time: is a scanning client's memory flat?

    python rss.py [--seconds 600] [--interval 10] [--devices 1000] [--hz 10] [--peers baseline,bluecap-futurestream]

Starts the simulator's RSSI storm, runs every peer's scan client on it at the same time for
`--seconds`, and samples each client's resident set (`VmRSS` of /proc/<pid>/status) every
`--interval` seconds from "ready" on. Prints the samples, each client's CPU per event, its ratio
to the baseline's (same storm, same time), and its peak RSS (`ru_maxrss`); writes them as JSON
with `--out`.
"""
import argparse
import json
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(__file__))
from clients import Peers, run_client  # noqa: E402
from simulator import Simulator  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, default=600)
    p.add_argument("--interval", type=float, default=10)
    p.add_argument("--devices", type=int, default=1000)
    p.add_argument("--hz", type=float, default=10)
    p.add_argument("--peers", default="baseline,bluecap-futurestream")
    p.add_argument("--release-dir", default=os.path.join(ROOT, ".build", "release"))
    p.add_argument("--baseline", default=os.path.join(ROOT, ".build", "bench", "baseline"))
    p.add_argument("--out")
    args = p.parse_args()
    peers = Peers(ROOT, args.release_dir, args.baseline, sys.executable)
    sim = Simulator(os.path.join(args.release_dir, "bluez-sim"), adapters=1)
    samples = {}
    results = {}
    try:
        sim.start_storm(args.devices, args.hz)

        def one(peer):
            stop = threading.Event()

            def sampler(pid):
                t = 0.0
                while not stop.wait(args.interval if t else 0):
                    kb = rss_kb(pid)
                    if kb is None:
                        return
                    samples.setdefault(peer, []).append((round(t), kb))
                    t += args.interval

            def on_ready(pid):
                threading.Thread(target=sampler, args=(pid,), daemon=True).start()

            try:
                r = run_client(peers.command(peer, "scan", [], [], seconds=args.seconds), sim.address, on_ready,
                               timeout=args.seconds + 120)
                events = r.get("events", r.get("changed", 0) + r.get("added", 0))
                r["cpu_us"] = r["cpu_s"] / events * 1e6 if events else None
                r["events_per_s"] = events / args.seconds
                results[peer] = r
            finally:
                stop.set()

        threads = [threading.Thread(target=one, args=(p,)) for p in args.peers.split(",")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        sim.control("StopRSSIStorm")
    finally:
        sim.stop()
    base = results.get("baseline", {}).get("cpu_us")
    for peer, r in results.items():
        kbs = [kb for _, kb in samples.get(peer, [])]
        ratio = f", {r['cpu_us'] / base:.2f}x the baseline" if base and r.get("cpu_us") else ""
        print(f"{peer}: {r['events_per_s']:.0f} events/s, {r['cpu_us'] or 0:.2f} us CPU per event{ratio}; "
              f"peak RSS {r['maxrss_kb'] / 1024:.1f} MB; VmRSS {min(kbs) / 1024:.1f}-{max(kbs) / 1024:.1f} MB over "
              f"{len(kbs)} samples (first {kbs[0] / 1024:.1f}, last {kbs[-1] / 1024:.1f})" if kbs else "")
        print("  " + " ".join(f"{t}s:{kb / 1024:.1f}" for t, kb in samples.get(peer, [])))
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"settings": vars(args), "results": results, "samples": samples}, f, indent=1)


if __name__ == "__main__":
    main()
