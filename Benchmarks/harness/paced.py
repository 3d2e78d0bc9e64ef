"""Paced notifications: a client's CPU per notification when devices notify at a sensor's rate.

    run.py --workloads paced [--paced-seconds S] [--runs R]

1, 10 and 50 connected devices each notifying 50 times a second (the simulator's
`StartNotifyPace`: every device sends on the simulator's clock, the devices' sends spread
evenly over each 20 ms period), for `--paced-seconds` (5 s, 2 runs; 2 s, one run, 1 and 50
devices with `--quick`). Unlike P1's bursts, the client runs live and wakes for (nearly) every
notification, as a gateway does: the figure is the CPU per notification including the wake-ups,
from the client's own `getrusage` between "ready" and its last value (the harness's /proc
figure has 10 ms ticks, too coarse for a few milliseconds of CPU). Two paths, each with its C reference:

- StartNotify (FFF2, indicate, PropertiesChanged): `baseline` and `bluecap-futurestream`;
- AcquireNotify (FFF1, the default path of BlueCapKit on a "notify" characteristic, one socket
  per device): `baseline-acquire` and `bluecap-acquire`.

Flat across sizes means no per-notification cost grows with the number of subscriptions. The
notifications received are counted against those the simulator delivered, so a loss shows.
"""
import os

from clients import UUID_CHAR, UUID_INDICATE, run_client
from scale import scale_addresses, scale_scenario
from simulator import Simulator

PACED_SIZES = (1, 10, 50)
PACED_HZ = 50.0
# Each path: its peers, the first being the C reference its ratios are taken against.
PATHS = (("StartNotify", "FFF2", UUID_INDICATE, ("baseline", "bluecap-futurestream")),
         ("AcquireNotify", "FFF1", UUID_CHAR, ("baseline-acquire", "bluecap-acquire")))


def paced(sim_binary, peers, runs, seconds, names, attempt, summarize, log, sizes=PACED_SIZES, hz=PACED_HZ):
    """{path: {size: summary}} of CPU µs per notification and notifications received per second."""
    scenario = scale_scenario(max(sizes))
    sim = Simulator(sim_binary, scenario, adapters=1)
    per = max(1, int(hz * seconds))  # values per device
    out = {"hz": hz, "seconds": seconds}
    try:
        addresses = scale_addresses(max(sizes))
        log(f"  paced: connecting {len(addresses)} devices")
        chars = {UUID_INDICATE: dict(zip(addresses, sim.setup(addresses, UUID_INDICATE))),
                 UUID_CHAR: dict(zip(addresses, sim.setup(addresses, UUID_CHAR)))}
        for path, target, uuid, path_peers in PATHS:
            wanted = [p for p in path_peers if p in names]
            if not wanted:
                continue
            block = out.setdefault(path, {})
            for size in sizes:
                devices = addresses[:size]
                samples = {}
                for run in range(runs):
                    log(f"  paced {path}, {size} device(s) x {hz:g} Hz, {per * size:,} notifications: run {run + 1}/{runs}")
                    for peer in wanted:
                        def body(peer=peer):
                            status = {}

                            def on_ready(pid):
                                found = sim.control("StartNotifyPace", "assdu", [devices, target, hz, per])[0]
                                if found != size:
                                    raise RuntimeError(f"StartNotifyPace found {found} of {size} devices")

                            workload = "acquire" if peer.endswith("acquire") else "notify"
                            argv = peers.command(peer, workload, devices, [chars[uuid][d] for d in devices],
                                                 count=per * size, uuid=uuid)
                            r = run_client(argv, sim.address, on_ready, timeout=seconds + 120)
                            sent, delivered, running = sim.control("NotifyPaceStatus")
                            if running:
                                sim.control("StopNotifyPace")
                            status.update(sent=sent, delivered=delivered)
                            n = r["count"]
                            cpu = r.get("self_cpu_s", r["cpu_s"])
                            r.update(delivered=delivered, lost=max(0, delivered - n), cpu_us=cpu / n * 1e6 if n else None,
                                     rate=n / r["seconds"] if r["seconds"] > 0 else None, rss_mb=r["maxrss_kb"] / 1024)
                            log(f"    {peer:24s} {n:6d} of {delivered:6d} delivered, {r['cpu_us'] or 0:6.2f} us CPU each, "
                                f"{r['rate'] or 0:6.0f}/s, {r['rss_mb']:5.1f} MB")
                            return r

                        attempt(samples, peer, body)
                        sim.ensure_connected(devices)
                errors = samples.pop("_errors", {})
                block[str(size)] = {"count": per * size,
                                    "summary": summarize(samples, ["cpu_us", "rate", "lost", "rss_mb"], baseline=wanted[0]),
                                    "runs": samples, "errors": errors}
    finally:
        sim.stop()
        os.unlink(scenario)
    return out


# MARK: Report

def paced_rows(block):
    """(path, devices, client, CPU µs per notification, ratio to the path's C reference, vs its
    own 1-device cost, notifications lost) rows."""
    rows = []
    for path, _, _, _ in PATHS:
        sizes = block.get(path) or {}
        firsts = {}
        for size in sorted(sizes, key=int):
            for peer, e in sizes[size]["summary"].items():
                s, r, lost = e.get("cpu_us"), e.get("cpu_us_ratio"), e.get("lost")
                if not s:
                    rows.append((path, size, peer, "n/a", "n/a", "n/a", "n/a"))
                    continue
                firsts.setdefault(peer, s["median"])
                ratio = f"{r['median']:.2f}x ({r['min']:.2f}–{r['max']:.2f})" if r and not peer.startswith("baseline") else "–"
                rows.append((path, size, peer, f"{s['median']:.2f} ({s['min']:.2f}–{s['max']:.2f})", ratio,
                             f"{s['median'] / firsts[peer]:.2f}x", f"{lost['max']:.0f}" if lost else "n/a"))
    return rows


def print_paced(block, log):
    for r in paced_rows(block):
        log(f"    {r[0]:13s} {r[1]:>3s} devices  {r[2]:22s} {r[3]:>22s} us  vs C {r[4]:>20s}  vs 1 device {r[5]:>6s}  lost {r[6]}")
