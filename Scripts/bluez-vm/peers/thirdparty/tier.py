"""The third-party tier's plumbing: Bumble devices on RootCanal, our binaries as subprocesses,
bluetoothd's device objects, and the tally that ends in `thirdparty: N passed, M failed`.

Runs inside the VM with the venv's python (steps/thirdparty). Every wait is bounded: a
subprocess has a timeout, a Bumble event an asyncio deadline.
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import time

from bumble.device import Device, DeviceConfiguration
from bumble.transport import open_transport

ROOTCANAL = 'tcp-client:127.0.0.1:6402'
T0 = time.monotonic()


def elapsed() -> str:
    return f'{time.monotonic() - T0:.1f} s'


# MARK: - results

class Tally:
    """PASS/FAIL lines, one per check, and the final count."""

    def __init__(self) -> None:
        self.passed = 0
        self.failed: list[str] = []

    def check(self, name: str, ok: bool, detail: str = '', show: str = '') -> bool:
        if ok:
            self.passed += 1
            print(f'thirdparty: PASS {name}{" (" + detail + ")" if detail else ""} ({elapsed()})', flush=True)
        else:
            self.failed.append(name)
            print(f'thirdparty: FAIL {name}: {detail} ({elapsed()})', flush=True)
            if show:
                print('---------- ' + show.rstrip() + '\n----------', flush=True)
        return ok

    def summary(self) -> str:
        return f'thirdparty: {self.passed} passed, {len(self.failed)} failed'


# MARK: - Bumble peers

@contextlib.asynccontextmanager
async def bumble_device(name: str, **config):
    """A powered Bumble `Device` on a RootCanal controller of its own (one TCP connection to
    RootCanal's HCI port is one controller; RootCanal hands it the next public address
    DA:4C:10:DE:17:0N)."""
    async with await open_transport(ROOTCANAL) as transport:
        device = Device.from_config_with_hci(DeviceConfiguration(name=name, **config), transport.source, transport.sink)
        await device.power_on()
        try:
            yield device
        finally:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(device.power_off(), 5)


def address(device: Device) -> str:
    """The public address as bluetoothd spells it (no /P suffix)."""
    return str(device.public_address).split('/')[0]


# MARK: - our binaries

class Run:
    """One finished subprocess: exit status, stdout lines, the JSON events among them, stderr."""

    def __init__(self, argv: list[str], rc: int | None, out: str, err: str) -> None:
        self.argv, self.rc, self.out, self.err = argv, rc, out, err
        self.events = []
        for line in out.splitlines():
            with contextlib.suppress(ValueError):
                e = json.loads(line)
                if isinstance(e, dict):
                    self.events.append(e)

    def named(self, event: str) -> list[dict]:
        return [e for e in self.events if e.get('event') == event]

    def text(self) -> str:
        return (f'$ {" ".join(self.argv)}\nexit {self.rc}\n--- stdout\n{self.out[-6000:]}\n'
                f'--- stderr\n{self.err[-8000:]}')


class Proc:
    """A running subprocess whose stdout is read line by line (the JSON events as they come)."""

    def __init__(self, proc: asyncio.subprocess.Process, argv: list[str]) -> None:
        self.proc, self.argv = proc, argv
        self.lines: list[str] = []
        self.events: list[dict] = []
        self.changed = asyncio.Event()
        self.reader = asyncio.create_task(self._read())

    @classmethod
    async def start(cls, argv: list[str], env: dict | None = None) -> 'Proc':
        proc = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.PIPE,
                                                    stderr=asyncio.subprocess.PIPE,
                                                    env={**os.environ, **(env or {})})
        return cls(proc, argv)

    async def _read(self) -> None:
        assert self.proc.stdout
        async for raw in self.proc.stdout:
            line = raw.decode(errors='replace').rstrip('\n')
            self.lines.append(line)
            with contextlib.suppress(ValueError):
                e = json.loads(line)
                if isinstance(e, dict):
                    self.events.append(e)
            self.changed.set()
        self.changed.set()

    async def wait_event(self, predicate, timeout: float) -> dict | None:
        """The first event (seen so far or arriving within `timeout`) that `predicate` accepts."""
        deadline = time.monotonic() + timeout
        while True:
            for e in self.events:
                if predicate(e):
                    return e
            left = deadline - time.monotonic()
            if left <= 0 or self.reader.done():
                return None
            self.changed.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.changed.wait(), left)

    async def finish(self, timeout: float, interrupt: bool = False) -> Run:
        """Waits for the exit (after SIGINT when `interrupt`), killing it at `timeout`."""
        if interrupt and self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(2)
        rc = None
        try:
            rc = await asyncio.wait_for(self.proc.wait(), timeout)
        except asyncio.TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
            await self.proc.wait()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.reader, 5)
        err = (await self.proc.stderr.read()).decode(errors='replace') if self.proc.stderr else ''
        return Run(self.argv, rc, '\n'.join(self.lines), err)


async def run(argv: list[str], timeout: float, env: dict | None = None) -> Run:
    """Runs `argv` to its end (killed at `timeout`: then `rc` is None)."""
    p = await Proc.start(argv, env)
    return await p.finish(timeout)


# MARK: - bluetoothd

async def dbus_send(*args: str, timeout: float = 10) -> str:
    proc = await asyncio.create_subprocess_exec('dbus-send', '--system', '--print-reply', '--dest=org.bluez',
                                                *args, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.STDOUT)
    out, _ = await asyncio.wait_for(proc.communicate(), timeout)
    return out.decode(errors='replace')


async def remove_devices(adapter: str) -> int:
    """Forgets every device bluetoothd keeps on `adapter` (a device object left by an earlier
    scenario changes what the next sees). Returns how many were removed."""
    tree = await dbus_send('/', 'org.freedesktop.DBus.ObjectManager.GetManagedObjects')
    paths = sorted(set(re.findall(rf'object path "(/org/bluez/{adapter}/dev_[0-9A-F_]+)"', tree)))
    for path in paths:
        await dbus_send(f'/org/bluez/{adapter}', 'org.bluez.Adapter1.RemoveDevice', f'objpath:{path}')
    return len(paths)
