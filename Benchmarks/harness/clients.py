"""Client processes: how each peer is started, and how one run of it is measured.

Every client is a separate process speaking BlueZ's D-Bus API to the simulator's bus (as the
SYSTEM bus). It prints "ready" once set up, then "result {json}" when its work is done. The
harness measures the CPU it used between "ready" and its exit (/proc at ready, wait4 rusage at
exit) and its peak RSS (ru_maxrss), so the simulator's and the daemon's CPU never count.
"""
import json
import os
import signal
import subprocess
import threading
import time

from simulator import process_cpu_seconds

UUID_SERVICE = "0000fff0-0000-1000-8000-00805f9b34fb"
UUID_CHAR = "0000fff1-0000-1000-8000-00805f9b34fb"  # read, notify: AcquireNotify and reads
UUID_INDICATE = "0000fff2-0000-1000-8000-00805f9b34fb"  # read, indicate: StartNotify (PropertiesChanged)


class Peers:
    """Command lines of every peer."""

    def __init__(self, root, release_dir, baseline, python):
        self.root = root
        self.bench = os.path.join(release_dir, "bluecap-bench")
        self.baseline = baseline
        self.python = python
        self.have_bluecap = False

    def command(self, peer, workload, addresses, chars, count=0, inflight=1, seconds=0.0, uuid=UUID_CHAR):
        """argv for `peer` doing `workload` ("notify", "acquire", "read", "scan")."""
        if peer.startswith("baseline"):
            argv = [self.baseline, workload]
            for c in chars:
                argv += ["--char", c]
            return argv + ["--count", str(count), "--inflight", str(inflight), "--seconds", str(seconds)]
        if peer.startswith("bluecap"):
            variant = peer.split("-", 1)[1] if "-" in peer else "futurestream"
            argv = [self.bench, "client", workload, "--variant", variant]
            for a in addresses:
                argv += ["--address", a]
            return argv + ["--service", UUID_SERVICE, "--uuid", uuid, "--count", str(count),
                           "--inflight", str(inflight), "--seconds", str(seconds)]
        # "bleak-acquire" is the same bleak peer on a "notify" characteristic, where bleak's
        # default start_notify takes AcquireNotify.
        script = {"bleak": "peer_bleak.py", "simplepyble": "peer_simplepyble.py"}[peer.split("-")[0]]
        argv = [self.python, os.path.join(self.root, "Benchmarks", "peers", script), workload]
        for a in addresses:
            argv += ["--address", a]
        if peer == "simplepyble" and uuid == UUID_INDICATE:
            argv.append("--indicate")
        return argv + ["--uuid", uuid, "--count", str(count), "--inflight", str(inflight), "--seconds", str(seconds)]


class ClientFailed(Exception):
    pass


# How long a client may take to set up (connect, discover, subscribe) before it prints "ready".
# Every peer needs 1-10 s here, even on a loaded machine; a client that stalls in setup (as
# simplepyble does against the simulator, in D-Bus timeouts) is stopped then and reported as
# failed with the reason, instead of holding up the run until its overall timeout.
READY_TIMEOUT = 45.0


def run_client(argv, bus_address, on_ready=None, timeout=300.0, while_starting=None, ready_timeout=READY_TIMEOUT):
    """Starts one client, calls `on_ready(pid)` once it is set up, waits for its result.
    `while_starting()` is called every 200 ms until the client is ready (for peers that must see
    the devices advertise before they can use them). A client not ready after `ready_timeout`
    seconds is killed and reported as failed (ClientFailed says so).

    Returns the client's result dict plus "cpu_s" (CPU after ready) and "maxrss_kb": the peak RSS
    the client reports ("hwm_kb", its VmHWM) if it does, else wait4's ru_maxrss, which also counts
    the harness's own pages (Python starts the child with vfork, and the kernel carries the
    pre-exec high-water mark into ru_maxrss): at least the harness's ~30 MB whatever the client.
    """
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=bus_address)
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env, text=True)
    killer = threading.Timer(timeout, lambda: _kill(proc))
    killer.start()
    stalled = threading.Event()

    def setup_watchdog():
        if not is_ready.wait(ready_timeout):
            stalled.set()
            _kill(proc)
    watchdog = threading.Thread(target=setup_watchdog, daemon=True)
    stderr_lines = []
    drain = threading.Thread(target=lambda: stderr_lines.extend(proc.stderr), daemon=True)
    drain.start()
    result = None
    cpu_ready = None
    is_ready = threading.Event()
    watchdog.start()
    if while_starting:
        def nudge():
            while not is_ready.wait(0.2):
                try:
                    while_starting()
                except Exception:
                    pass
        threading.Thread(target=nudge, daemon=True).start()
    try:
        for line in proc.stdout:
            line = line.strip()
            if line == "ready":
                is_ready.set()
                cpu_ready = process_cpu_seconds(proc.pid)
                if on_ready:
                    on_ready(proc.pid)
            elif line.startswith("result "):
                result = json.loads(line[len("result "):])
    finally:
        is_ready.set()
        if result is None:
            _kill(proc)  # never poll(): it would reap the child before wait4 gets its rusage
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        killer.cancel()
        drain.join(2)
    if result is None or cpu_ready is None:
        tail = "".join(stderr_lines[-15:])
        if stalled.is_set():
            raise ClientFailed(f"{os.path.basename(argv[0])} {' '.join(argv[1:3])} not ready after {ready_timeout:g} s "
                               f"(stalled in setup), stopped:\n{tail}")
        raise ClientFailed(f"{os.path.basename(argv[0])} {' '.join(argv[1:3])} exited {proc.returncode} "
                           f"without a result:\n{tail}")
    result["cpu_s"] = max(0.0, usage.ru_utime + usage.ru_stime - cpu_ready)
    result["maxrss_kb"] = result["hwm_kb"] if result.get("hwm_kb", -1) > 0 else usage.ru_maxrss
    return result


def _kill(proc):
    # os.kill, not Popen.kill: Popen polls first, which would reap the child before wait4.
    try:
        os.kill(proc.pid, signal.SIGCONT)
        os.kill(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def stopped(pid, body):
    """Runs `body` with process `pid` stopped (SIGSTOP/SIGCONT): whatever the simulator sends
    meanwhile queues in the bus daemon, so the client's drain rate is measured alone."""
    os.kill(pid, signal.SIGSTOP)
    try:
        return body()
    finally:
        os.kill(pid, signal.SIGCONT)


def monotonic():
    return time.monotonic()


def run_at_once(peers, body_for, attempt):
    """Runs every peer's client at the same time, each on its own thread: `body_for(peer)` is the
    body `attempt` measures. Returns each peer's result (None when it failed) and, under
    "_errors", what went wrong."""
    out = {}

    def one(peer):
        tmp = {}
        attempt(tmp, peer, body_for(peer))
        out[peer] = tmp[peer][0]
        if tmp.get("_errors"):
            out.setdefault("_errors", {}).update(tmp["_errors"])

    threads = [threading.Thread(target=one, args=(p,)) for p in peers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def record_run(samples, out, names, describe, log):
    """Appends one run_at_once run to `samples` (None for a peer that failed or did not run),
    logs each result as `describe(result)` and keeps the errors under "_errors"."""
    for peer in names:
        r = out.get(peer)
        samples.setdefault(peer, []).append(r)
        if r:
            log(f"    {peer:24s} {describe(r)}")
    if out.get("_errors"):
        samples.setdefault("_errors", {}).update(out["_errors"])
