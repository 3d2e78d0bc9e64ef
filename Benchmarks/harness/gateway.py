"""The gateway workload: one process holding several managers.

footprint: a CentralManager, a PeripheralManager, an Adapters list and a PairingAgent in one
process, on one BluetoothSession against one session each (what every manager had before
sessions): bus connections (asked of the bus daemon), threads, RSS.

scan pair: the P3 storm scanned by a CentralManager and an Adapters scan together, on one
session against a session each, and a lone CentralManager as the reference of the same run
(CPU per event: every signal is decoded once per connection). `gateway`: the shared pair plus a
PeripheralManager on the same session with a registered GATT application and an advertisement,
a whole gateway in one process. CPU per event is per advertising report (the central's events,
whatever else in the process listens); RSS is the peak (`ru_maxrss`).
"""
from clients import run_client
from simulator import Simulator


def gateway(sim_binary, bench, runs, seconds, devices, hz, attempt, summarize, log):
    out = {"devices": devices, "hz": hz, "seconds": seconds}
    footprint = {}
    sim = Simulator(sim_binary, adapters=1)
    try:
        for run in range(runs):
            log(f"  gateway footprint: run {run + 1}/{runs}")
            for variant in ("four-sessions", "one-session"):
                def body(variant=variant):
                    r = run_client([bench, "client", "footprint", "--variant", variant, "--seconds", "1"], sim.address,
                                   timeout=120)
                    r["rss_mb"] = r["rss_kb"] / 1024
                    log(f"    {variant}: {r['connections']} connections, {r['threads']} threads, {r['rss_mb']:.1f} MB RSS")
                    return r
                attempt(footprint, variant, body)
    finally:
        sim.stop()
    errors = footprint.pop("_errors", {})
    out["footprint"] = summarize(footprint, ["connections", "threads", "rss_mb"], baseline="four-sessions")
    pair = {}
    sim = Simulator(sim_binary, adapters=1)
    try:
        sim.start_storm(devices, hz)
        for run in range(runs):
            log(f"  gateway scan pair ({devices} devices x {hz} Hz, {seconds:g} s): run {run + 1}/{runs}")
            for variant in ("single", "separate", "shared", "gateway"):
                def body(variant=variant):
                    r = run_client([bench, "client", "scan-pair", "--variant", variant, "--seconds", str(seconds)],
                                   sim.address, timeout=seconds + 120)
                    r["cpu_pct"] = r["cpu_s"] / seconds * 100
                    r["rss_mb"] = r["maxrss_kb"] / 1024
                    reports = r.get("central_events", r["events"])
                    r["cpu_us"] = r["cpu_s"] / reports * 1e6 if reports else None
                    log(f"    {variant}: {r['cpu_pct']:5.1f}% CPU, {r['events'] / seconds:7.0f} events/s, "
                        f"{r['cpu_us'] or 0:5.2f} us CPU per report, {r['rss_mb']:.1f} MB")
                    return r
                attempt(pair, variant, body)
        sim.control("StopRSSIStorm")
    finally:
        sim.stop()
    errors.update(pair.pop("_errors", {}))
    out["scan_pair"] = summarize(pair, ["cpu_pct", "cpu_us", "rss_mb"], baseline="single")
    out["errors"] = errors
    return out


def gateway_rows(block):
    """Markdown/console rows: (figure, variant, median (min-max), ratio)."""
    rows = []
    for key, metrics, base in (("footprint", ("connections", "threads", "rss_mb"), "four sessions"),
                               ("scan_pair", ("cpu_pct", "cpu_us", "rss_mb"), "one CentralManager alone")):
        for variant, entry in block.get(key, {}).items():
            for m in metrics:
                s, r = entry.get(m), entry.get(m + "_ratio")
                if not s or s.get("median") is None:
                    continue
                ratio = f"{r['median']:.2f}x ({r['min']:.2f}–{r['max']:.2f}) of {base}" if r and r.get("median") else ""
                rows.append((f"gateway {key.replace('_', ' ')}", variant, m,
                             f"{s['median']:.1f} ({s['min']:.1f}–{s['max']:.1f})", ratio))
    return rows
