"""The simulator process (bluez-sim on its own private bus) and the harness's control connection.

The harness keeps one D-Bus connection to the simulator's bus for the whole run: it drives the
org.bluecap.Simulator1 control interface (Burst, StartRSSIStorm) and holds a discovery session
and the links, so every client finds the same devices already connected (setup is never part of
a measurement). The connection runs on an asyncio loop in a background thread; the harness calls
it synchronously.
"""
import asyncio
import os
import signal
import subprocess
import threading

from dbus_fast import Message, MessageType
from dbus_fast.aio import MessageBus

BLUEZ = "org.bluez"
CONTROL_PATH = "/org/bluecap/simulator"
CONTROL = "org.bluecap.Simulator1"
SETUP_TIMEOUT = 30.0


def device_path(address, adapter="hci0"):
    return f"/org/bluez/{adapter}/dev_" + address.upper().replace(":", "_")


class CallFailed(Exception):
    pass


class Simulator:
    """bluez-sim --print-address as a child process, plus the control connection."""

    def __init__(self, binary, scenario=None, adapters=1):
        argv = [binary, "--print-address", "--adapters", str(adapters)]
        if scenario:
            argv += ["--scenario", scenario]
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.address = self.proc.stdout.readline().strip()
        if not self.address:
            raise RuntimeError("bluez-sim did not print its bus address")
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.changed = None
        self.discovering = False
        self.bus = self._run(self._connect())

    # MARK: plumbing

    def _run(self, coro, timeout=None):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    async def _connect(self):
        bus = await MessageBus(bus_address=self.address).connect()
        self.changed = asyncio.Event()

        def on_message(m):
            if m.message_type == MessageType.SIGNAL:
                self.changed.set()

        bus.add_message_handler(on_message)
        return bus

    async def _call(self, destination, path, interface, member, signature="", body=()):
        reply = await self.bus.call(Message(destination=destination, path=path, interface=interface, member=member,
                                            signature=signature, body=list(body)))
        if reply.message_type == MessageType.ERROR:
            raise CallFailed(f"{member}: {reply.error_name}: {reply.body}")
        return reply.body

    def call(self, path, interface, member, signature="", body=(), destination=BLUEZ):
        return self._run(self._call(destination, path, interface, member, signature, body))

    def control(self, member, signature="", body=()):
        return self.call(CONTROL_PATH, CONTROL, member, signature, body)

    def start_storm(self, devices, hz):
        """The P3 scan storm: a discovery session on hci0, then `devices` devices changing their
        RSSI `hz` times a second each (stopped with `control("StopRSSIStorm")`)."""
        self.call("/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery")
        self.control("StartRSSIStorm", "ud", [devices, float(hz)])

    # MARK: setup

    async def _wait_until(self, predicate, what):
        """Re-evaluates `predicate` after every signal from the simulator, until it holds."""
        deadline = self.loop.time() + SETUP_TIMEOUT
        while True:
            self.changed.clear()
            if await predicate():
                return
            left = deadline - self.loop.time()
            if left <= 0:
                raise TimeoutError(f"timed out waiting for {what}")
            try:
                await asyncio.wait_for(self.changed.wait(), left)
            except asyncio.TimeoutError:
                pass

    async def _objects(self):
        (objects,) = await self._call(BLUEZ, "/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
        return objects

    async def _setup(self, addresses, char_uuid):
        if not self.discovering:
            await self._start_discovery()
        paths = [device_path(a) for a in addresses]
        return await self._find(paths, char_uuid)

    async def _start_discovery(self):
        self.discovering = True
        await self._call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "AddMatch", "s",
                         ["type='signal',sender='org.bluez'"])
        await self._call(BLUEZ, "/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery")

    async def _find(self, paths, char_uuid):

        async def all_present():
            objects = await self._objects()
            return all(p in objects for p in paths)

        await self._wait_until(all_present, "the devices to be discovered")
        for p in paths:
            await self._ensure_connected(p)
        objects = await self._objects()
        chars = []
        for p in paths:
            found = sorted(o for o, ifaces in objects.items()
                           if o.startswith(p + "/") and "org.bluez.GattCharacteristic1" in ifaces
                           and ifaces["org.bluez.GattCharacteristic1"]["UUID"].value == char_uuid)
            if not found:
                raise RuntimeError(f"no characteristic {char_uuid} under {p}")
            chars.append(found[0])
        return chars

    async def _ensure_connected(self, path):
        async def resolved():
            objects = await self._objects()
            props = objects.get(path, {}).get("org.bluez.Device1")
            if props is None:
                return False
            if props["ServicesResolved"].value:
                return True
            if not props["Connected"].value:
                try:
                    await self._call(BLUEZ, path, "org.bluez.Device1", "Connect")
                except CallFailed as e:
                    if "InProgress" not in str(e):
                        raise
            return False

        await self._wait_until(resolved, f"{path} to connect")

    def setup(self, addresses, char_uuid):
        """Discovers and connects `addresses`; returns their characteristic paths for `char_uuid`."""
        return self._run(self._setup(addresses, char_uuid))

    def ensure_connected(self, addresses):
        """Reconnects any device a client disconnected."""
        for a in addresses:
            self._run(self._ensure_connected(device_path(a)))

    # MARK: teardown

    def stop(self):
        try:
            self._run(self._disconnect(), timeout=5)
        except Exception:
            pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    async def _disconnect(self):
        self.bus.disconnect()
        await self.bus.wait_for_disconnect()


def process_cpu_seconds(pid):
    """utime + stime of a live process (all its threads, dead ones included), from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
