"""Shared bits of the smoke-test peers: UUIDs, values, logging, and an
event-driven wait on the GLib main loop (no sleep polling)."""
import sys
import time

from gi.repository import GLib

BLUEZ = 'org.bluez'
OBJECT_MANAGER = 'org.freedesktop.DBus.ObjectManager'
PROPERTIES = 'org.freedesktop.DBus.Properties'
ADAPTER = 'org.bluez.Adapter1'
DEVICE = 'org.bluez.Device1'
CHARACTERISTIC = 'org.bluez.GattCharacteristic1'

SERVICE_UUID = '6e1c0000-5b4a-4c1e-9d3b-b1ec4b0e0001'
CHAR_UUID = '6e1c0001-5b4a-4c1e-9d3b-b1ec4b0e0001'
LOCAL_NAME = 'bluecap-smoke'
INITIAL_VALUE = b'smoke-initial'
WRITTEN_VALUE = b'written-by-central'
NOTIFY_PREFIX = b'notify-'

_T0 = time.monotonic()


def log(role, *args):
    print('[%s +%.3fs]' % (role, time.monotonic() - _T0), *args, flush=True)


def wait_for(condition, seconds):
    """Runs the default main context until condition() is true or the time
    is up; returns condition(). Signals are dispatched while waiting."""
    context = GLib.MainContext.default()
    expired = []
    source = GLib.timeout_add(int(seconds * 1000), lambda: expired.append(True) or False)
    while not condition() and not expired:
        context.iteration(True)
    if not expired:
        GLib.source_remove(source)
    return condition()


def die(role, message):
    log(role, 'FAIL:', message)
    sys.exit(1)
