"""bluecap-bench harness: runs every workload against bluez-sim for every peer, writes
Benchmarks/results/<date>.json and .png, and the results table of BENCHMARKS.md.

    python run.py [--quick] [--runs N] [--scan-seconds S] [--notify-count N] [--reads N]
                  [--workloads p1d,p1,p2,p3,p4,scale,paced,gateway] [--peers baseline,bluecap,bleak,simplepyble]
                  [--scale-seconds S] [--paced-seconds S]

`p1d` is the default path (each peer's default subscription on FFF1); `p1` the forced StartNotify
path; `scale` the scale curve (scale.py): P1 at 1, 10, 100 devices and P3 at 1 ... 5,000 devices;
`paced` 1, 10, 50 devices notifying 50 Hz each (paced.py); `gateway` one process with several
managers (gateway.py). `gateway-scale` names the gateway-scale curves: scale, paced and gateway.

Each workload runs `runs` times; the peers take turns inside each run so that a change of load
on the machine affects them alike. Every figure is also given as a ratio to the C baseline of
the same run (min / median / max over the runs).
"""
import argparse
import datetime
import json
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from gateway import gateway, gateway_rows  # noqa: E402
from clients import ClientFailed, Peers, UUID_CHAR, UUID_INDICATE, record_run, run_at_once, run_client, stopped  # noqa: E402
from machine import describe_machine, load_average  # noqa: E402
from report import rows, write_chart, write_markdown  # noqa: E402
from paced import paced, print_paced  # noqa: E402
from scale import print_scale, scale_p1, scale_p3, write_scale_chart  # noqa: E402
from simulator import Simulator  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEVICES = ["B0:00:00:00:00:%02X" % i for i in range(1, 11)]


def log(*parts):
    print(*parts, file=sys.stderr, flush=True)


def stats(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"min": min(values), "median": statistics.median(values), "max": max(values), "n": len(values)}


def summarize(samples, metrics, baseline="baseline"):
    """samples: {peer: [run dict or None]} -> {peer: {metric: stats, metric_ratio: stats}}."""
    out = {}
    for peer, runs in samples.items():
        entry = {}
        for m in metrics:
            entry[m] = stats([r.get(m) if r else None for r in runs])
            base = samples.get(baseline, [])
            ratios = []
            for i, r in enumerate(runs):
                b = base[i] if i < len(base) else None
                if r and b and r.get(m) is not None and b.get(m):
                    ratios.append(r[m] / b[m])
            entry[m + "_ratio"] = stats(ratios)
        entry["failures"] = sum(1 for r in runs if r is None)
        out[peer] = entry
    return out


def advertiser(sim, peer, devices):
    """SimpleBLE only uses devices its scan reported, and a connected device does not advertise:
    while a simplepyble client starts, the devices' RSSI changes (an advertising report). The
    step is 10 dBm: bluetoothd (and bluez-sim) only update Device1.RSSI, and so only emit the
    PropertiesChanged SimpleBLE's scan reacts to, when it moves by RSSI_THRESHOLD (8 dBm) or more
    (src/device.c, device_set_rssi_with_delta)."""
    if peer != "simplepyble":
        return None
    state = {"rssi": -40}

    def nudge():
        state["rssi"] = -50 if state["rssi"] == -40 else -40
        for d in devices:
            sim.control("SetRSSI", "sn", [d, state["rssi"]])
    return nudge


# Peers that failed their first attempt of a P1/P2 figure: skipped in the later P1/P2 figures
# too (each failure costs its timeout; simplepyble's is 20-25 s), reported as failures.
GIVEN_UP = {}


def attempt(samples, peer, body, sticky=False):
    if sticky and peer in GIVEN_UP:
        samples.setdefault(peer, []).append(None)
        samples.setdefault("_errors", {}).setdefault(peer, "skipped, failed earlier: " + GIVEN_UP[peer])
        return
    if samples.get("_errors", {}).get(peer) and not any(samples.get(peer, [])):
        samples[peer].append(None)  # failed every time so far: not retried in later runs
        return
    try:
        samples.setdefault(peer, []).append(body())
    except (ClientFailed, Exception) as e:  # a peer that cannot run is reported, not fatal
        log(f"    {peer}: FAILED: {e}")
        samples.setdefault(peer, []).append(None)
        samples.setdefault("_errors", {}).setdefault(peer, str(e)[-600:])
        if sticky and not any(samples.get(peer, [])):
            GIVEN_UP[peer] = str(e)[-300:]


# MARK: P1 notifications

def notify_client(sim, peers, peer, workload, devices, paths, count, uuid, on_ready, delivered):
    """Runs one notification client until it has received `count` values; its rate and CPU
    per notification. `delivered` collects what the simulator's bursts reported sending."""
    argv = peers.command(peer, workload, devices, paths, count=count, uuid=uuid)
    r = run_client(argv, sim.address, on_ready, timeout=600, while_starting=advertiser(sim, peer, devices))
    n = r["count"]
    r["delivered"] = sum(delivered)
    r["rate"] = n / r["seconds"] if r["seconds"] > 0 else None
    r["cpu_us"] = r["cpu_s"] / n * 1e6 if n else None
    if n != count:
        raise ClientFailed(f"received {n} of {count}")
    log(f"    {peer:24s} {n:7d} in {r['seconds']:.3f}s = {r['rate'] or 0:9.0f}/s, "
        f"{r['cpu_us'] or 0:6.2f} us CPU each")
    return r


def p1(sim, peers, chars, indicate_chars, runs, count, names):
    """StartNotify peers use the indicate-only characteristic FFF2 (so that BlueCapKit, which
    prefers AcquireNotify on "notify" characteristics, takes the PropertiesChanged path like the
    others); the acquire variants use FFF1."""
    result = {}
    for label, devices in (("one characteristic", DEVICES[:1]), ("10 characteristics of 10 devices", DEVICES)):
        per = count // len(devices)
        samples = {}
        variants = [p for p in names if not (p.endswith("acquire") and len(devices) > 1)]
        for run in range(runs):
            log(f"  P1 {label}: run {run + 1}/{runs}")
            for peer in variants:
                acquire = peer.endswith("acquire")
                workload = "acquire" if acquire else "notify"
                delivered = []

                target = "FFF1" if acquire else "FFF2"
                paths = [(chars if acquire else indicate_chars)[d] for d in devices]

                def burst():
                    for d in devices:
                        delivered.append(sim.control("Burst", "ssu", [d, target, per])[0])

                def on_ready(pid):
                    if acquire:
                        burst()  # a datagram socket drops what the client cannot take: run live
                    else:
                        stopped(pid, burst)

                def body():
                    return notify_client(sim, peers, peer, workload, devices, paths, per * len(devices),
                                         UUID_CHAR if acquire else UUID_INDICATE, on_ready, delivered)

                attempt(samples, peer, body, sticky=True)
                sim.ensure_connected(devices)
        errors = samples.pop("_errors", {})
        result[label] = {"count": per * len(devices), "summary": summarize(samples, ["rate", "cpu_us"]),
                         "runs": samples, "errors": errors}
    return result


# MARK: P1 default path

# Peers whose default on a "notify" characteristic is AcquireNotify (a socket per subscription):
# they run live, since a datagram socket has no queue in the bus daemon to stop them behind.
def acquires_by_default(peer):
    return peer.endswith("acquire") or peer.startswith("bluecap-default")


def p1_default(sim, peers, chars, runs, count, names):
    """Every peer as a user gets it: its default subscription on the "notify" characteristic
    FFF1. BlueCapKit and bleak take AcquireNotify there; the C baseline (StartNotify, the
    ratios' reference) and simplepyble take StartNotify, and are stopped while the simulator
    emits as in P1 (their drain rate); `baseline-acquire` is the C reference for the socket path.
    Ten devices: one FFF1 each, a tenth of the values each, emitted device after device."""
    result = {}
    for label, devices in (("default path, one characteristic", DEVICES[:1]),
                           ("default path, 10 devices × 1 characteristic", DEVICES)):
        per = count // len(devices)
        samples = {}
        for run in range(runs):
            log(f"  P1 {label}: run {run + 1}/{runs}")
            for peer in names:
                live = acquires_by_default(peer)
                delivered = []
                paths = [chars[d] for d in devices]

                def burst():
                    for d in devices:
                        delivered.append(sim.control("Burst", "ssu", [d, "FFF1", per])[0])

                def on_ready(pid, live=live):
                    if live:
                        burst()
                    else:
                        stopped(pid, burst)

                def body(peer=peer, live=live, delivered=delivered, on_ready=on_ready):
                    workload = "acquire" if peer.startswith("baseline") and live else "notify"
                    return notify_client(sim, peers, peer, workload, devices, paths, per * len(devices),
                                         UUID_CHAR, on_ready, delivered)

                attempt(samples, peer, body, sticky=True)
                sim.ensure_connected(devices)
        errors = samples.pop("_errors", {})
        result[label] = {"count": per * len(devices), "summary": summarize(samples, ["rate", "cpu_us"]),
                         "runs": samples, "errors": errors}
    return result


# MARK: P2 reads

def p2(sim, peers, chars, runs, count, names):
    result = {}
    device = DEVICES[0]
    for label, inflight in (("sequential", 1), ("16 in flight", 16)):
        samples = {}
        for run in range(runs):
            log(f"  P2 {label}: run {run + 1}/{runs}")
            for peer in names:
                def body():
                    argv = peers.command(peer, "read", [device], [chars[device]], count=count, inflight=inflight)
                    r = run_client(argv, sim.address, timeout=600, while_starting=advertiser(sim, peer, [device]))
                    r["rate"] = r["count"] / r["seconds"]
                    r["cpu_us"] = r["cpu_s"] / r["count"] * 1e6
                    extra = f", p50 {r['p50_us']:.0f} us, p99 {r['p99_us']:.0f} us" if "p50_us" in r else ""
                    if r.get("lost_replies"):
                        extra += f", {r['lost_replies']} replies lost (30 s each)"
                    log(f"    {peer:24s} {r['rate']:8.0f} reads/s, {r['cpu_us']:6.1f} us CPU each{extra}")
                    return r

                attempt(samples, peer, body, sticky=True)
                sim.ensure_connected([device])
        errors = samples.pop("_errors", {})
        metrics = ["rate", "cpu_us"] + (["p50_us", "p99_us"] if inflight == 1 else [])
        result[label] = {"count": count, "inflight": inflight, "summary": summarize(samples, metrics),
                         "runs": samples, "errors": errors}
    return result


# MARK: P3 scan storm

def p3(sim_binary, peers, runs, seconds, devices, hz, names):
    """All peers scan the same storm at once (their CPU is measured per process)."""
    samples = {}
    sim = Simulator(sim_binary, adapters=1)
    try:
        sim.start_storm(devices, hz)
        for run in range(runs):
            log(f"  P3 scan storm ({devices} devices x {hz} Hz, {seconds:g} s): run {run + 1}/{runs}")
            def body_for(peer):
                def body():
                    r = run_client(peers.command(peer, "scan", [], [], seconds=seconds), sim.address,
                                   timeout=seconds + 120)
                    r["cpu_pct"] = r["cpu_s"] / seconds * 100
                    r["rss_mb"] = r["maxrss_kb"] / 1024
                    events = r.get("events", r.get("changed", 0) + r.get("added", 0))
                    r["events_per_s"] = events / seconds
                    return r
                return body

            # A peer that failed every run so far is not started again: its timeout would hold up
            # the whole storm run (simplepyble's scan hangs in a D-Bus timeout).
            active = [p for p in names if not (samples.get(p) and not any(samples[p]))]
            out = run_at_once(active, body_for, attempt)
            record_run(samples, out, names, lambda r: f"{r['cpu_pct']:5.1f}% CPU, {r['rss_mb']:6.1f} MB peak RSS, "
                                                      f"{r['events_per_s']:7.0f} events/s", log)
        sim.control("StopRSSIStorm")
    finally:
        sim.stop()
    errors = samples.pop("_errors", {})
    return {"devices": devices, "hz": hz, "seconds": seconds, "concurrent": True,
            "summary": summarize(samples, ["cpu_pct", "rss_mb", "events_per_s"]), "runs": samples, "errors": errors}


# MARK: P4 futures

FUTURES_LINE = re.compile(r"^\s*(?P<name>[^:]+): min (?P<min>[\d.]+) / median (?P<median>[\d.]+) / max (?P<max>[\d.]+) ns"
                          r"\s+\((?P<ratio>[\d.]+)x (?P<base>[^:]+): median (?P<bmedian>[\d.]+) ns\)")


def p4(bench, runs, elements):
    log(f"  P4 futures ({elements:,} elements)")
    proc = subprocess.run([bench, "futures", "--runs", str(runs), "--elements", str(elements)],
                          capture_output=True, text=True, timeout=600)
    figures = {}
    for line in proc.stdout.splitlines():
        m = FUTURES_LINE.match(line)
        if m:
            figures[m["name"].strip()] = {"min_ns": float(m["min"]), "median_ns": float(m["median"]), "max_ns": float(m["max"]),
                                          "ratio": float(m["ratio"]), "baseline": m["base"].strip(),
                                          "baseline_median_ns": float(m["bmedian"])}
            log("   ", line.strip())
    if not figures:
        return {"error": (proc.stdout + proc.stderr)[-600:]}
    return {"figures": figures}


# MARK: main

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true",
                   help="the regression check: 3 runs, fewer notifications and reads, 5 s storm, our client and the "
                        "baseline only (unless --peers/--runs are given), the scale curve at its ends (P3: 1, 1,000, 5,000 "
                        "devices), the paced workload at 1 and 50 devices for 2 s")
    p.add_argument("--runs", type=int)
    p.add_argument("--notify-count", type=int, default=200_000)
    p.add_argument("--reads", type=int, default=10_000)
    p.add_argument("--scan-seconds", type=float, default=60)
    p.add_argument("--scan-devices", type=int, default=1000)
    p.add_argument("--scan-hz", type=float, default=10)
    p.add_argument("--futures-elements", type=int, default=200_000,
                   help="P4: promises, stream elements (and a tenth as many chain links) per run")
    p.add_argument("--scale-seconds", type=float, default=10.0, help="scale curve: seconds of storm per size and run")
    p.add_argument("--paced-seconds", type=float, default=5.0,
                   help="paced: seconds of 50 Hz notifications per size, path and run")
    p.add_argument("--workloads", default="p1d,p1,p2,p3,p4,scale,paced,gateway",
                   help="p1d: default path (each peer's default subscription on FFF1); p1: forced StartNotify; "
                        "paced: 1, 10, 50 devices notifying 50 Hz each; "
                        "gateway: several managers in one process, one session against a session each, and a whole "
                        "gateway (central scan, adapter scan, peripheral manager) against a lone scan; "
                        "gateway-scale: scale, paced and gateway")
    p.add_argument("--peers")
    p.add_argument("--release-dir", default=os.path.join(ROOT, ".build", "release"))
    p.add_argument("--baseline", default=os.path.join(ROOT, ".build", "bench", "baseline"))
    p.add_argument("--python", default=sys.executable)
    default_out = os.path.join(ROOT, "Benchmarks", "results")
    p.add_argument("--out", default=default_out)
    p.add_argument("--no-markdown", action="store_true")
    args = p.parse_args()
    if args.quick:
        # Sized for < 5 minutes on 2 loaded cores, release builds included: the peers' own
        # set-up (simplepyble's lost replies wait out 30 s each) would take most of it.
        args.runs = args.runs or 3
        args.peers = args.peers or "baseline,bluecap"
        args.notify_count = min(args.notify_count, 10_000)
        args.reads = min(args.reads, 1_000)
        args.scan_seconds = min(args.scan_seconds, 5)
        args.futures_elements = min(args.futures_elements, 50_000)
        args.scale_seconds = min(args.scale_seconds, 3)
        args.paced_seconds = min(args.paced_seconds, 2)
        if args.out == default_out:
            # A quick run is a check, not the results of record: BENCHMARKS.md and
            # Benchmarks/results stay as they are.
            args.out = os.path.join(ROOT, ".build", "bench", "quick")
            args.no_markdown = True
    args.runs = max(args.runs or 5, 1)
    args.peers = args.peers or "baseline,bluecap,bleak,simplepyble"

    peers = Peers(ROOT, args.release_dir, args.baseline, args.python)
    wanted = args.peers.split(",")
    workloads = args.workloads.split(",")
    if "gateway-scale" in workloads:
        workloads += ["scale", "paced", "gateway"]
    bluecap_ok = "bluecap" in wanted and bluecap_client_available(peers.bench)
    if "bluecap" in wanted and not bluecap_ok:
        log("bluecap-bench has no `client` subcommand in this build: BlueCapKit clients skipped")

    def peer_list(kind):
        out = []
        for w in wanted:
            if w == "bluecap":
                if bluecap_ok:
                    out += {"notify": ["bluecap-futurestream", "bluecap-async", "bluecap-async-executor", "bluecap-acquire"],
                            "default": ["bluecap-default", "bluecap-default-async", "bluecap-default-async-executor"],
                            "read": ["bluecap-futurestream", "bluecap-async", "bluecap-async-executor"], "scan": ["bluecap-futurestream"]}[kind]
            elif w == "baseline" and kind in ("notify", "default"):
                out += ["baseline", "baseline-acquire"]
            elif w == "bleak" and kind == "default":
                out.append("bleak-acquire")
            else:
                out.append(w)
        return out

    started = datetime.datetime.now()
    results = {"date": started.isoformat(timespec="seconds"), "machine": describe_machine(),
               "load_before": load_average(), "runs": args.runs,
               "settings": {k: getattr(args, k) for k in ("notify_count", "reads", "scan_seconds", "scan_devices", "scan_hz",
                                                 "futures_elements", "quick", "scale_seconds", "paced_seconds")},
               "workloads": {}}
    sim_binary = os.path.join(args.release_dir, "bluez-sim")
    log(f"bluecap-bench harness: {args.runs} runs, load average {results['load_before']}")
    if "p1d" in workloads or "p1" in workloads or "p2" in workloads:
        sim = Simulator(sim_binary, os.path.join(ROOT, "Benchmarks", "scenario.json"), adapters=1)
        try:
            paths = sim.setup(DEVICES, UUID_CHAR)
            chars = dict(zip(DEVICES, paths))
            indicate_chars = dict(zip(DEVICES, sim.setup(DEVICES, UUID_INDICATE)))
            if "p1d" in workloads:
                results["workloads"]["p1d"] = p1_default(sim, peers, chars, args.runs, args.notify_count, peer_list("default"))
            if "p1" in workloads:
                results["workloads"]["p1"] = p1(sim, peers, chars, indicate_chars, args.runs, args.notify_count, peer_list("notify"))
            if "p2" in workloads:
                results["workloads"]["p2"] = p2(sim, peers, chars, args.runs, args.reads, peer_list("read"))
        finally:
            sim.stop()
    if "p3" in workloads:
        results["workloads"]["p3"] = p3(sim_binary, peers, args.runs, args.scan_seconds, args.scan_devices,
                                        args.scan_hz, peer_list("scan"))
    if "gateway" in workloads and bluecap_ok:
        results["workloads"]["gateway"] = gateway(sim_binary, peers.bench, args.runs, args.scan_seconds, args.scan_devices,
                                                  args.scan_hz, attempt, summarize, log)
    if "p4" in workloads:
        results["workloads"]["p4"] = p4(peers.bench, max(args.runs, 5), args.futures_elements)
    if "scale" in workloads:
        scale_runs = 1 if args.quick else min(args.runs, 3)
        notify = [p for p in peer_list("notify") if p in ("baseline", "bluecap-futurestream", "bluecap-acquire")]
        scan = [p for p in peer_list("scan") if p in ("baseline", "bluecap-futurestream")]
        results["workloads"]["scale"] = {
            # --quick: the two ends of each curve only.
            "p1": scale_p1(sim_binary, peers, scale_runs, args.notify_count, notify, attempt, summarize, log,
                           **({"sizes": (1, 100)} if args.quick else {})),
            "p3": scale_p3(sim_binary, peers, scale_runs, args.scale_seconds, scan, attempt, summarize, log,
                           **({"sizes": (1, 1000, 5000)} if args.quick else {}))}
    if "paced" in workloads:
        # --quick: one run, the two ends (1 and 50 devices), 2 s each.
        notify = [p for p in peer_list("notify") if p in ("baseline", "baseline-acquire", "bluecap-futurestream", "bluecap-acquire")]
        results["workloads"]["paced"] = paced(sim_binary, peers, 1 if args.quick else min(args.runs, 2), args.paced_seconds,
                                              notify, attempt, summarize, log, **({"sizes": (1, 50)} if args.quick else {}))
    results["load_after"] = load_average()
    results["elapsed_s"] = (datetime.datetime.now() - started).total_seconds()

    os.makedirs(args.out, exist_ok=True)
    stem = os.path.join(args.out, started.strftime("%Y-%m-%d-%H%M%S") + ("-quick" if args.quick else ""))
    with open(stem + ".json", "w") as f:
        json.dump(results, f, indent=1)
    chart = write_chart(results, stem + ".png")
    log(f"wrote {stem}.json" + (f" and {chart}" if chart else ""))
    scale_chart = write_scale_chart(results, stem + "-scale.png") if "scale" in results["workloads"] else None
    if scale_chart:
        log(f"wrote {scale_chart}")
    print_ratios(results)
    if not args.no_markdown:
        write_markdown(results, os.path.join(ROOT, "BENCHMARKS.md"), os.path.relpath(stem + ".json", ROOT),
                       os.path.relpath(chart, ROOT) if chart else None,
                       os.path.relpath(scale_chart, ROOT) if scale_chart else None)
        log("updated BENCHMARKS.md")
        remove_earlier_results(args.out, stem)


def remove_earlier_results(out, stem):
    """Keeps only the results BENCHMARKS.md now points at: earlier runs' JSON and charts are
    removed (their figures live on in BENCHMARKS.md's before/after tables and in git history)."""
    keep = {os.path.basename(stem) + ".json", os.path.basename(stem) + ".png", os.path.basename(stem) + "-scale.png"}
    for name in sorted(os.listdir(out)):
        if name.endswith((".json", ".png")) and name[:4].isdigit() and name not in keep:
            os.remove(os.path.join(out, name))
            log(f"removed the earlier {name}")


def print_ratios(results):
    """The run's figures and their ratios to the baseline of the same run, on stderr (the
    regression check of `make bench BENCH_ARGS=--quick`)."""
    log(f"ratios to the C baseline of this run (median, min–max of {results['runs']} runs), "
        f"{results['elapsed_s']:.0f} s, load {results['load_before']} -> {results['load_after']}:")
    for r in rows(results):
        log(f"  {r[0][:38]:38s} {r[1]:22s} {r[2][:34]:34s} {r[3]:>28s}  {r[4].replace('**', '')}")
    if results["workloads"].get("gateway"):
        log("gateway (one process, several managers), median (min–max) and ratio to the same run's reference:")
        for r in gateway_rows(results["workloads"]["gateway"]):
            log(f"  {r[0]:22s} {r[1]:14s} {r[2]:12s} {r[3]:>26s}  {r[4]}")
    if results["workloads"].get("scale"):
        log("scale curve, CPU µs per event (median, min–max):")
        print_scale(results["workloads"]["scale"], log)
    if results["workloads"].get("paced"):
        p = results["workloads"]["paced"]
        log(f"paced notifications ({p['hz']:g} Hz per device, {p['seconds']:g} s), CPU µs per notification (median, min–max):")
        print_paced(p, log)


def bluecap_client_available(bench):
    if not os.path.exists(bench):
        return False
    out = subprocess.run([bench], capture_output=True, text=True)
    return "client" in out.stdout + out.stderr


if __name__ == "__main__":
    main()
