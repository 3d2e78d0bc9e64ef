#!/usr/bin/env python3
"""ble-gateway's throughput: readings per second it publishes with N simulated devices notifying.

For each notification rate: a private mosquitto on a free loopback port, a subscriber
(mosquitto_sub) counting the readings, and `ble-gateway --simulate --simulated-devices N
--notify-hz R` publishing to it. Once every device's first reading has arrived (all connected
and subscribed), a window of --seconds is measured: readings the subscriber received per
second, the gateway process's CPU (utime + stime over the window; the simulated bluetoothd runs
in the same process, so this is gateway + simulator) and the private dbus-daemon's, and the
gateway's RSS (VmRSS at the end, VmHWM). The gateway's own final counts give the baseline of the
same run: readings it took from BlueCapKit against messages the broker acknowledged and readings
it dropped.

    python3 Benchmarks/harness/mqtt_gateway.py [--bin .build/release] [--devices 50]
            [--rates 2,5,10,20,40] [--seconds 10] [--json out.json]

"sustained" is the highest offered rate at which the subscriber received at least 95 % of what
the devices sent and the gateway dropped nothing.
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

TICKS = os.sysconf("SC_CLK_TCK")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS
    except OSError:
        return 0.0


def status(pid, key):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) / 1024  # MiB
    except OSError:
        pass
    return 0.0


def children(pid):
    out = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                out += [int(p) for p in f.read().split()]
    except OSError:
        pass
    return out


def start_broker(directory):
    port = free_port()
    conf = os.path.join(directory, f"mosquitto-{port}.conf")
    with open(conf, "w") as f:
        f.write(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n"
                "max_queued_messages 100000\nlog_dest stderr\nlog_type notice\nlog_type information\n")
    broker = subprocess.Popen(["mosquitto", "-c", conf], stderr=subprocess.PIPE, text=True)
    for line in broker.stderr:
        if " running" in line:
            break
    threading.Thread(target=lambda: [None for _ in broker.stderr], daemon=True).start()
    return broker, port


class Subscriber:
    """mosquitto_sub on the counters; counts lines and the devices heard, as they arrive."""

    def __init__(self, port):
        self.count = 0
        self.devices = set()
        self.lock = threading.Lock()
        self.all_heard = threading.Event()
        self.expected = 0
        self.proc = subprocess.Popen(["mosquitto_sub", "-h", "127.0.0.1", "-p", str(port), "-q", "1",
                                      "-t", "bluecap/bench/+/counter", "-v"], stdout=subprocess.PIPE, text=True)
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        for line in self.proc.stdout:
            topic = line.split(" ", 1)[0]
            with self.lock:
                self.count += 1
                self.devices.add(topic)
                if self.expected and len(self.devices) >= self.expected:
                    self.all_heard.set()

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def measure(binary, devices, hz, seconds, directory, log):
    broker, port = start_broker(directory)
    sub = Subscriber(port)
    sub.expected = devices
    gw = subprocess.Popen([binary, "--simulate", "--simulated-devices", str(devices), "--notify-hz", str(hz),
                           "--broker", f"127.0.0.1:{port}", "--gateway", "bench", "--json", "--queue", "10000"],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    events = []
    threading.Thread(target=lambda: [events.append(l) for l in gw.stdout], daemon=True).start()
    result = {"devices": devices, "hz": hz, "offered": devices * hz}
    try:
        if not sub.all_heard.wait(120):
            result["error"] = f"only {len(sub.devices)} of {devices} devices heard within 120 s"
            return result
        daemons = children(gw.pid)
        c0, d0, n0, t0 = cpu_seconds(gw.pid), sum(cpu_seconds(p) for p in daemons), sub.count, time.monotonic()
        time.sleep(seconds)
        c1, d1, n1, t1 = cpu_seconds(gw.pid), sum(cpu_seconds(p) for p in daemons), sub.count, time.monotonic()
        result.update({
            "received_per_s": round((n1 - n0) / (t1 - t0), 1),
            "gateway_cpu_pct": round(100 * (c1 - c0) / (t1 - t0), 1),
            "dbus_daemon_cpu_pct": round(100 * (d1 - d0) / (t1 - t0), 1),
            "rss_mib": round(status(gw.pid, "VmRSS"), 1),
            "hwm_mib": round(status(gw.pid, "VmHWM"), 1),
        })
    finally:
        gw.terminate()
        try:
            gw.wait(15)
        except subprocess.TimeoutExpired:
            gw.kill()
            gw.wait()
        time.sleep(0.3)
        sub.stop()
        broker.terminate()
        broker.wait()
    stats = [json.loads(l) for l in events if '"event":"stats"' in l]
    if stats:
        last = stats[-1]
        result.update({k: last.get(k) for k in ("readings", "published", "dropped", "reconnects")})
        if last.get("readings"):
            result["published_over_readings"] = round(last["published"] / last["readings"], 3)
    result["delivered_ratio"] = round(result.get("received_per_s", 0) / result["offered"], 3)
    log(json.dumps(result))
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", default=".build/release")
    p.add_argument("--devices", type=int, default=50)
    p.add_argument("--rates", default="2,5,10,20,40")
    p.add_argument("--seconds", type=float, default=10)
    p.add_argument("--json")
    a = p.parse_args()
    binary = os.path.join(a.bin, "ble-gateway")
    if not os.access(binary, os.X_OK):
        sys.exit(f"{binary} is not built: swift build -c release --product ble-gateway")
    log = lambda s: print(s, file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory() as directory:
        results = [measure(binary, a.devices, float(r), a.seconds, directory, log) for r in a.rates.split(",")]
    ok = [r for r in results if "error" not in r and r["delivered_ratio"] >= 0.95 and not r.get("dropped")]
    summary = {"results": results, "sustained_per_s": max((r["received_per_s"] for r in ok), default=None)}
    print(f"{'devices':>7} {'Hz':>5} {'offered/s':>9} {'received/s':>10} {'ratio':>6} {'dropped':>7} "
          f"{'gw CPU %':>8} {'dbus CPU %':>10} {'RSS MiB':>7} {'HWM MiB':>7}")
    for r in results:
        if "error" in r:
            print(f"{r['devices']:>7} {r['hz']:>5} {r['offered']:>9} {r['error']}")
            continue
        print(f"{r['devices']:>7} {r['hz']:>5g} {r['offered']:>9g} {r['received_per_s']:>10} {r['delivered_ratio']:>6} "
              f"{r.get('dropped', '?'):>7} {r['gateway_cpu_pct']:>8} {r['dbus_daemon_cpu_pct']:>10} {r['rss_mib']:>7} {r['hwm_mib']:>7}")
    print(f"sustained: {summary['sustained_per_s']} readings/s (≥ 95 % delivered, nothing dropped)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(summary, f, indent=2)


if __name__ == "__main__":
    main()
