"""The scale curve: a client's CPU per event as the number of devices grows.

    run.py --workloads scale [--scale-seconds S] [--notify-count N] [--runs R]

- P1 at 1, 10 and 100 devices: one StartNotify characteristic (FFF2, indicate) per device, all
  subscribed by the client, the notifications spread evenly over them (the client stopped while
  the simulator emits, as in P1); and the AcquireNotify variant (FFF1, one socket per device).
- P3 at 1, 10, 100, 1,000 and 5,000 devices: an RSSI storm of the same total rate at every size
  (`SCAN_RATE` updates/s: 1 device at 2,000 Hz ... 5,000 devices at 0.4 Hz), every client
  scanning it at the same time, for at least 4 ticks of the storm; each client's peak RSS (its
  VmHWM) and its RSS at the end of the window (VmRSS, the steady state) are reported per size.
  BlueCapKit's client prints "ready" once it has reported every device
  (`--warm N`), so its per-device set-up (a `Peripheral` per device) is not counted: the curve
  is the steady state.

The figure is the CPU per event (and its ratio to the C baseline of the same run); flat means
no work per event grows with the devices. The devices of this workload come from a scenario
written here (`scale_scenario`), so the other workloads' scenario is untouched.
"""
import json
import os
import tempfile

from clients import UUID_CHAR, UUID_INDICATE, record_run, run_at_once, run_client, stopped
from simulator import Simulator

P1_SIZES = (1, 10, 100)
P3_SIZES = (1, 10, 100, 1000, 5000)
SCAN_RATE = 2000.0  # RSSI updates per second, in all, at every size


def scale_addresses(n):
    return ["B1:00:00:00:%02X:%02X" % (i >> 8, i & 0xFF) for i in range(1, n + 1)]


def scale_scenario(n):
    """A scenario file with `n` devices like the P1 ones (FFF0: FFF1 read+notify, FFF2 read+indicate)."""
    peripherals = [{"address": a, "name": f"scale-{i + 1}", "rssi": -40, "uuids": ["FFF0"], "adapters": [0],
                    "services": [{"uuid": "FFF0", "characteristics": [
                        {"uuid": "FFF1", "flags": ["read", "notify"], "value": "01020304"},
                        {"uuid": "FFF2", "flags": ["read", "indicate"], "value": "01020304"}]}]}
                   for i, a in enumerate(scale_addresses(n))]
    fd, path = tempfile.mkstemp(prefix="bluecap-scale-", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump({"adapters": 1, "peripherals": peripherals}, f)
    return path


# MARK: P1

def scale_p1(sim_binary, peers, runs, count, names, attempt, summarize, log, sizes=P1_SIZES):
    """{size: summary} of CPU per notification at each number of devices."""
    scenario = scale_scenario(max(sizes))
    sim = Simulator(sim_binary, scenario, adapters=1)
    out = {}
    try:
        addresses = scale_addresses(max(sizes))
        log(f"  scale P1: connecting {len(addresses)} devices")
        indicate = dict(zip(addresses, sim.setup(addresses, UUID_INDICATE)))
        notify = dict(zip(addresses, sim.setup(addresses, UUID_CHAR)))
        for size in sizes:
            devices = addresses[:size]
            per = max(1, count // size)
            samples = {}
            for run in range(runs):
                log(f"  scale P1, {size} device(s), {per * size:,} notifications: run {run + 1}/{runs}")
                for peer in names:
                    acquire = peer.endswith("acquire")
                    if acquire and peer.startswith("baseline"):
                        continue  # the C acquire loop reads one socket only

                    def body(peer=peer, acquire=acquire):
                        target = "FFF1" if acquire else "FFF2"
                        paths = [(notify if acquire else indicate)[d] for d in devices]

                        def burst():
                            for d in devices:
                                sim.control("Burst", "ssu", [d, target, per])

                        def on_ready(pid):
                            if acquire:
                                burst()
                            else:
                                stopped(pid, burst)

                        argv = peers.command(peer, "acquire" if acquire else "notify", devices, paths, count=per * size,
                                             uuid=UUID_CHAR if acquire else UUID_INDICATE)
                        r = run_client(argv, sim.address, on_ready, timeout=600)
                        n = r["count"]
                        if n != per * size:
                            raise RuntimeError(f"received {n} of {per * size}")
                        r["cpu_us"] = r["cpu_s"] / n * 1e6
                        r["rate"] = n / r["seconds"] if r["seconds"] > 0 else None
                        log(f"    {peer:24s} {n:7d}: {r['cpu_us']:6.2f} us CPU each, {r['rate'] or 0:9.0f}/s")
                        return r

                    attempt(samples, peer, body)
                    sim.ensure_connected(devices)
            errors = samples.pop("_errors", {})
            out[str(size)] = {"count": per * size, "summary": summarize(samples, ["cpu_us", "rate"]), "runs": samples,
                              "errors": errors}
    finally:
        sim.stop()
        os.unlink(scenario)
    return out


# MARK: P3

def scale_p3(sim_binary, peers, runs, seconds, names, attempt, summarize, log, sizes=P3_SIZES):
    """{size: summary} of CPU per RSSI update at each number of devices (same total rate)."""
    sim = Simulator(sim_binary, adapters=1)
    out = {}
    try:
        sim.call("/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery")
        for size in sorted(sizes):  # ascending: a storm adds its devices, so exactly `size` exist
            hz = SCAN_RATE / size
            # The storm updates every device once per tick: the window holds at least 4 ticks
            # (5,000 devices at 0.4 Hz: 10 s), or the count of events depends on where it falls.
            window = max(seconds, 4 / hz)
            sim.control("StartRSSIStorm", "ud", [size, float(hz)])
            samples = {}
            for run in range(runs):
                log(f"  scale P3, {size} device(s) x {hz:g} Hz, {window:g} s: run {run + 1}/{runs}")
                def body_for(peer):
                    def body():
                        argv = peers.command(peer, "scan", [], [], seconds=window)
                        if peer.startswith("bluecap"):
                            argv += ["--warm", str(size)]
                        r = run_client(argv, sim.address, timeout=window + 120)
                        events = r.get("events", r.get("changed", 0) + r.get("added", 0))
                        r["events_per_s"] = events / window
                        r["cpu_us"] = r["cpu_s"] / events * 1e6 if events else None
                        r["rss_mb"] = r["maxrss_kb"] / 1024
                        r["steady_rss_mb"] = r["rss_kb"] / 1024 if r.get("rss_kb", -1) > 0 else None
                        return r
                    return body

                results = run_at_once(names, body_for, attempt)
                record_run(samples, results, names, lambda r: f"{r['events_per_s']:7.0f} events/s, "
                                                              f"{r['cpu_us'] or 0:6.2f} us CPU each, {r['rss_mb']:5.1f} MB peak, "
                                                              f"{r['steady_rss_mb'] or 0:5.1f} MB at the end", log)
            errors = samples.pop("_errors", {})
            out[str(size)] = {"hz": hz, "seconds": window, "summary": summarize(samples, ["cpu_us", "events_per_s", "rss_mb", "steady_rss_mb"]),
                              "runs": samples, "errors": errors}
        sim.control("StopRSSIStorm")
    finally:
        sim.stop()
    return out


# MARK: Report

def scale_rows(scale):
    """(workload, devices, client, CPU µs per event, ratio to baseline, ratio to its own 1-device cost) rows."""
    rows = []
    for key, label in (("p1", "P1 notifications"), ("p3", "P3 RSSI updates")):
        block = scale.get(key) or {}
        firsts = {}
        for size in sorted(block, key=int):
            for peer, e in block[size]["summary"].items():
                s = e.get("cpu_us")
                r = e.get("cpu_us_ratio")
                if not s:
                    rows.append((label, size, peer, "n/a", "n/a", "n/a"))
                    continue
                firsts.setdefault(peer, s["median"])
                ratio = f"{r['median']:.2f}x ({r['min']:.2f}–{r['max']:.2f})" if r and not peer.startswith("baseline") else "–"
                rows.append((label, size, peer, f"{s['median']:.2f} ({s['min']:.2f}–{s['max']:.2f})", ratio,
                             f"{s['median'] / firsts[peer]:.2f}x"))
    return rows


def scale_rss_rows(scale):
    """(devices, client, peak RSS MB, RSS MB at the end of the window) rows of the P3 storm."""
    def mb(e, m):
        s = e.get(m)
        return f"{s['median']:.1f} ({s['min']:.1f}–{s['max']:.1f})" if s else "n/a"
    block = scale.get("p3") or {}
    return [(size, peer, mb(e, "rss_mb"), mb(e, "steady_rss_mb"))
            for size in sorted(block, key=int) for peer, e in block[size]["summary"].items()]


def print_scale(scale, log):
    for r in scale_rows(scale):
        log(f"    {r[0]:17s} {r[1]:>5s} devices  {r[2]:22s} {r[3]:>22s} us  vs baseline {r[4]:>20s}  vs 1 device {r[5]}")
    for r in scale_rss_rows(scale):
        log(f"    P3 RSS MB         {r[0]:>5s} devices  {r[1]:22s} peak {r[2]:>20s}  at the end {r[3]:>20s}")


def write_scale_chart(results, path):
    """Two panels per workload: CPU per event (µs) and its ratio to the baseline, against devices."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    scale = results["workloads"].get("scale") or {}
    blocks = [(k, t) for k, t in (("p1", "P1 notifications"), ("p3", "P3 scan, RSSI updates")) if scale.get(k)]
    if not blocks:
        return None
    fig, axes = plt.subplots(2, len(blocks), figsize=(6 * len(blocks), 7), squeeze=False)
    colors = {"baseline": "#555", "bluecap-futurestream": "#3b7dd8", "bluecap-acquire": "#2a9d5c", "bluecap-async": "#8a5cd8"}
    for col, (key, title) in enumerate(blocks):
        block = scale[key]
        sizes = sorted(block, key=int)
        peers = sorted({p for s in sizes for p in block[s]["summary"]})
        for row, (metric, ylabel) in enumerate((("cpu_us", "CPU µs per event"), ("cpu_us_ratio", "× C baseline (same run)"))):
            ax = axes[row][col]
            for peer in peers:
                if metric.endswith("_ratio") and peer.startswith("baseline"):
                    continue
                xs, med, lo, hi = [], [], [], []
                for s in sizes:
                    st = (block[s]["summary"].get(peer) or {}).get(metric)
                    if st:
                        xs.append(int(s))
                        med.append(st["median"])
                        lo.append(st["median"] - st["min"])
                        hi.append(st["max"] - st["median"])
                if xs:
                    ax.errorbar(xs, med, yerr=[lo, hi], marker="o", capsize=3, label=peer, color=colors.get(peer))
            ax.set_xscale("log")
            ax.set_xticks([int(s) for s in sizes])
            ax.set_xticklabels([f"{int(s):,}" for s in sizes])
            ax.set_ylim(bottom=0)
            if metric.endswith("_ratio"):
                ax.axhline(1.0, color="black", linewidth=0.8)
            ax.set_xlabel("devices")
            ax.set_ylabel(ylabel)
            ax.set_title(f"{title}: {ylabel}", fontsize=9)
            ax.legend(fontsize=7)
            ax.grid(alpha=0.3)
    # The scale curve runs fewer times than the other workloads: count what its summaries hold.
    runs = max((st.get("n", 0) for b in scale.values() for size in b.values()
                for e in size["summary"].values() for st in e.values() if isinstance(st, dict)), default=0)
    fig.suptitle(f"bluecap-bench scale curve {results['date']}: median and min–max of {runs} runs "
                 f"(load {results['load_before'][0]})", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path
