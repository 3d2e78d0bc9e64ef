"""bleak peer for bluecap-bench: the same client work as Benchmarks/baseline/baseline.c.

    peer_bleak.py notify --address A [--address A ...] --uuid U --count N
    peer_bleak.py read   --address A --uuid U --count N [--inflight K]
    peer_bleak.py scan   --seconds S

Talks to BlueZ on the SYSTEM bus (set DBUS_SYSTEM_BUS_ADDRESS to the simulator's bus). Prints
"ready" once set up, then "result {json}". Exits with os._exit so that the devices stay connected
for the next client (bleak disconnects on a clean close).
"""
import argparse
import asyncio
import json
import os
import sys
import time

from bleak import BleakClient, BleakScanner
from bleak.backends.device import BLEDevice

# peer_common.py stands next to this script (sys.path[0] already, unless Python runs with -P).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_common import emit, latency_result, notification_counter, shares  # noqa: E402


async def connect(address):
    # The device is already known to BlueZ (and connected by the harness); bleak's scanner only
    # reports advertisements, so the peer names the known D-Bus object, as BLEDevice allows.
    path = "/org/bluez/hci0/dev_" + address.upper().replace(":", "_")
    client = BleakClient(BLEDevice(address, None, {"path": path, "props": None}))
    await client.connect()
    return client


async def notify(args):
    clients = [await connect(a) for a in args.address]
    done = asyncio.Event()
    on_value, result = notification_counter(args.count, done)

    for c in clients:
        await c.start_notify(args.uuid, lambda _characteristic, data: on_value(data))
    emit("ready")
    await done.wait()
    return result()


async def read(args):
    client = await connect(args.address[0])
    char = client.services.get_characteristic(args.uuid)
    emit("ready")
    start = time.monotonic()
    total = 0
    if args.inflight <= 1:
        latencies = []
        for _ in range(args.count):
            t0 = time.monotonic()
            total += sum(await client.read_gatt_char(char))
            latencies.append(time.monotonic() - t0)
        return latency_result(start, total, latencies)

    async def worker(n):
        s = 0
        for _ in range(n):
            s += sum(await client.read_gatt_char(char))
        return s

    share = shares(args.count, args.inflight)
    total = sum(await asyncio.gather(*(worker(n) for n in share)))
    return {"count": args.count, "seconds": time.monotonic() - start, "checksum": total}


async def scan(args):
    seen = {"events": 0, "devices": set()}

    def on_advertisement(device, adv):
        seen["events"] += 1
        seen["devices"].add(device.address)

    scanner = BleakScanner(detection_callback=on_advertisement)
    await scanner.start()
    emit("ready")
    await asyncio.sleep(args.seconds)
    return {"events": seen["events"], "devices": len(seen["devices"]), "seconds": args.seconds}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("workload", choices=["notify", "read", "scan"])
    p.add_argument("--address", action="append", default=[])
    p.add_argument("--uuid", default="0000fff1-0000-1000-8000-00805f9b34fb")
    p.add_argument("--count", type=int, default=1000)
    p.add_argument("--inflight", type=int, default=1)
    p.add_argument("--seconds", type=float, default=10)
    args = p.parse_args()
    result = asyncio.run({"notify": notify, "read": read, "scan": scan}[args.workload](args))
    emit("result " + json.dumps(result))
    os._exit(0)


if __name__ == "__main__":
    main()
