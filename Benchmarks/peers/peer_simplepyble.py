"""simplepyble peer for bluecap-bench: the same client work as Benchmarks/baseline/baseline.c.

    peer_simplepyble.py notify --address A [--address A ...] --service S --uuid U --count N
    peer_simplepyble.py read   --address A --service S --uuid U --count N [--inflight K]
    peer_simplepyble.py scan   --seconds S

SimpleBLE talks to BlueZ on the SYSTEM bus (DBUS_SYSTEM_BUS_ADDRESS). Its calls block and its
callbacks run on its own thread; 16 reads in flight use 16 Python threads. Prints "ready", then
"result {json}"; exits with os._exit so the devices stay connected for the next client.
"""
import argparse
import json
import os
import sys
import threading
import time

import simplepyble

# peer_common.py stands next to this script (sys.path[0] already, unless Python runs with -P).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_common import emit, latency_result, notification_counter, shares  # noqa: E402


def adapter():
    adapters = simplepyble.Adapter.get_adapters()
    if not adapters:
        raise SystemExit("peer_simplepyble: no adapter")
    return adapters[0]


# A read whose reply SimpleDBus lost is made again, at most this many times in all (a device that
# really stopped answering still fails the run instead of holding it until the harness's timeout).
MAX_READ_ATTEMPTS = 3


def scan_start(a):
    """Adapter.scan_start, tried a second time when its StartDiscovery reply was lost.

    SimpleDBus (SimpleBLE 1.2.0's D-Bus layer) can lose a method reply: Connection::send_with_reply
    sends the call, then sets the pending call's notify function; when its own event thread has
    already dispatched the reply in between, the call is complete, the notify never runs and the
    caller waits out its 30 s timeout ("D-Bus call timed out"). BlueZ did start the discovery
    session: stop it, then start again.
    """
    try:
        a.scan_start()
    except RuntimeError as e:
        if "timed out" not in str(e):
            raise
        try:
            a.scan_stop()
        except RuntimeError:
            pass
        a.scan_start()


def connect(addresses):
    a = adapter()
    wanted = {x.upper() for x in addresses}
    # The harness keeps the devices connected, but SimpleBLE 1.2.0 cannot list them: its Linux
    # backend does not implement get_connected_peripherals() (AdapterLinux has no override, so
    # AdapterBase's returns an empty list) and it builds a Peripheral only for a device whose
    # Device1 object changes while its own scan runs. So the scan must see each device: the
    # harness moves the devices' RSSI by 10 dBm every 200 ms until this client is ready.
    found = {}
    done = threading.Event()

    def on_found(p):
        if p.address().upper() in wanted:
            found[p.address().upper()] = p
            if len(found) == len(wanted):
                done.set()

    a.set_callback_on_scan_found(on_found)
    scan_start(a)
    done.wait(20)
    a.scan_stop()
    for p in a.scan_get_results():
        if p.address().upper() in wanted:
            found.setdefault(p.address().upper(), p)
    if len(found) != len(wanted):
        raise SystemExit(f"peer_simplepyble: found {sorted(found)} of {sorted(wanted)}")
    peripherals = [found[x.upper()] for x in addresses]
    for p in peripherals:
        p.connect()
    return peripherals


def notify(args):
    peripherals = connect(args.address)
    done = threading.Event()
    on_value, result = notification_counter(args.count, done)

    for p in peripherals:
        (p.indicate if args.indicate else p.notify)(args.service, args.uuid, on_value)
    emit("ready")
    done.wait()
    return result()


def read(args):
    p = connect(args.address)[0]
    lost = [0]
    lost_lock = threading.Lock()

    def read_value():
        # ReadValue goes through the same SimpleDBus call as StartDiscovery (see scan_start): a
        # reply its event thread dispatches before the notify is set is lost and the read ends
        # after 30 s in "D-Bus call timed out". The read is made again, the wait stays in the
        # figure, and the result says how many replies were lost.
        for attempt in range(1, MAX_READ_ATTEMPTS + 1):
            try:
                return p.read(args.service, args.uuid)
            except RuntimeError as e:
                if "timed out" not in str(e) or attempt == MAX_READ_ATTEMPTS:
                    raise
                with lost_lock:
                    lost[0] += 1

    emit("ready")
    start = time.monotonic()
    if args.inflight <= 1:
        latencies, total = [], 0
        for _ in range(args.count):
            t0 = time.monotonic()
            total += sum(read_value())
            latencies.append(time.monotonic() - t0)
        return dict(latency_result(start, total, latencies), lost_replies=lost[0])
    sums = [0] * args.inflight

    def worker(i, n):
        for _ in range(n):
            sums[i] += sum(read_value())

    share = shares(args.count, args.inflight)
    threads = [threading.Thread(target=worker, args=(i, n)) for i, n in enumerate(share)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {"count": args.count, "seconds": time.monotonic() - start, "checksum": sum(sums), "lost_replies": lost[0]}


def scan(args):
    a = adapter()
    seen = {"events": 0, "devices": set()}

    def on_event(p):
        seen["events"] += 1
        seen["devices"].add(p.address())

    a.set_callback_on_scan_found(on_event)
    a.set_callback_on_scan_updated(on_event)
    scan_start(a)
    emit("ready")
    time.sleep(args.seconds)
    return {"events": seen["events"], "devices": len(seen["devices"]), "seconds": args.seconds}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("workload", choices=["notify", "read", "scan"])
    p.add_argument("--address", action="append", default=[])
    p.add_argument("--service", default="0000fff0-0000-1000-8000-00805f9b34fb")
    p.add_argument("--uuid", default="0000fff1-0000-1000-8000-00805f9b34fb")
    p.add_argument("--count", type=int, default=1000)
    p.add_argument("--inflight", type=int, default=1)
    p.add_argument("--indicate", action="store_true", help="the characteristic indicates (SimpleBLE's indicate)")
    p.add_argument("--seconds", type=float, default=10)
    args = p.parse_args()
    result = {"notify": notify, "read": read, "scan": scan}[args.workload](args)
    emit("result " + json.dumps(result))
    os._exit(0)


if __name__ == "__main__":
    main()
