#!/usr/bin/python3
"""Smoke-test GATT central for the BlueZ VM.

On one adapter: discovers a peripheral advertising SERVICE_UUID
(Adapter1.SetDiscoveryFilter + StartDiscovery, InterfacesAdded /
PropertiesChanged), connects (Device1.Connect), waits for ServicesResolved,
reads, writes, reads back, enables notifications (StartNotify) and waits for
one notification (PropertiesChanged Value). Every wait has a deadline.
Exit 0 on success.

usage: gatt_central.py [/org/bluez/hci0]"""
import sys
import time

import dbus
import dbus.mainloop.glib

from common import (ADAPTER, BLUEZ, CHAR_UUID, CHARACTERISTIC, DEVICE, INITIAL_VALUE, NOTIFY_PREFIX,
                    OBJECT_MANAGER, PROPERTIES, SERVICE_UUID, WRITTEN_VALUE, die, log, wait_for)

ROLE = 'central'
DISCOVERY_SECONDS = 60
CONNECT_SECONDS = 60
RESOLVE_SECONDS = 30
NOTIFY_SECONDS = 15


def say(*args):
    log(ROLE, *args)


def fail(message):
    die(ROLE, message)


class Central:
    def __init__(self, adapter_path):
        self.bus = dbus.SystemBus()
        self.adapter_path = adapter_path
        self.objects = dbus.Interface(self.bus.get_object(BLUEZ, '/'), OBJECT_MANAGER)
        adapter = self.bus.get_object(BLUEZ, adapter_path)
        self.adapter = dbus.Interface(adapter, ADAPTER)
        self.adapter_props = dbus.Interface(adapter, PROPERTIES)
        # object path -> {interface: {property: value}} for this adapter's devices
        self.tree = {}
        self.notifications = []
        self.bus.add_signal_receiver(self.interfaces_added, 'InterfacesAdded', OBJECT_MANAGER, BLUEZ)
        self.bus.add_signal_receiver(self.properties_changed, 'PropertiesChanged', PROPERTIES, BLUEZ,
                                     path_keyword='path')
        for path, interfaces in self.objects.GetManagedObjects().items():
            self.interfaces_added(path, interfaces)

    # MARK: - object tree from signals

    def interfaces_added(self, path, interfaces):
        if str(path).startswith(self.adapter_path + '/'):
            entry = self.tree.setdefault(str(path), {})
            for name, props in interfaces.items():
                entry.setdefault(str(name), {}).update(props)

    def properties_changed(self, interface, changed, invalidated, path=None):
        entry = self.tree.get(str(path))
        if entry is None:
            return
        entry.setdefault(str(interface), {}).update(changed)
        if interface == CHARACTERISTIC and 'Value' in changed:
            self.notifications.append((str(path), bytes(changed['Value'])))

    def device_with_service(self):
        for path, interfaces in self.tree.items():
            uuids = [str(u).lower() for u in interfaces.get(DEVICE, {}).get('UUIDs', [])]
            if SERVICE_UUID in uuids:
                return path
        return None

    def characteristic_under(self, device_path):
        for path, interfaces in self.tree.items():
            props = interfaces.get(CHARACTERISTIC)
            if path.startswith(device_path + '/') and props and str(props.get('UUID')).lower() == CHAR_UUID:
                return path
        return None

    # MARK: - scenario

    def run(self):
        say('adapter %s address %s' % (self.adapter_path, self.adapter_props.Get(ADAPTER, 'Address')))
        self.adapter_props.Set(ADAPTER, 'Powered', dbus.Boolean(True))

        self.adapter.SetDiscoveryFilter({'Transport': 'le', 'UUIDs': dbus.Array([SERVICE_UUID], signature='s')})
        self.adapter.StartDiscovery()
        started = time.monotonic()
        say('discovery started')
        if not wait_for(lambda: self.device_with_service() is not None, DISCOVERY_SECONDS):
            fail('no device with service %s within %d s' % (SERVICE_UUID, DISCOVERY_SECONDS))
        device_path = self.device_with_service()
        device = self.tree[device_path][DEVICE]
        say('DISCOVERED %s in %.2f s: name=%s address=%s' % (
            device_path, time.monotonic() - started, device.get('Name'), device.get('Address')))
        try:
            self.adapter.StopDiscovery()
        except dbus.DBusException as e:
            say('StopDiscovery: %s' % e)

        device_obj = self.bus.get_object(BLUEZ, device_path)
        for attempt in (1, 2, 3):
            try:
                dbus.Interface(device_obj, DEVICE).Connect(timeout=CONNECT_SECONDS)
                break
            except dbus.DBusException as e:
                say('Connect attempt %d: %s' % (attempt, e))
        else:
            fail('could not connect')
        say('CONNECTED')

        resolved = lambda: bool(self.tree[device_path].get(DEVICE, {}).get('ServicesResolved'))
        if not resolved():
            # the signal may have been dispatched before Connect returned
            self.tree[device_path][DEVICE].update(
                dbus.Interface(device_obj, PROPERTIES).GetAll(DEVICE))
        if not wait_for(resolved, RESOLVE_SECONDS):
            fail('ServicesResolved not true within %d s' % RESOLVE_SECONDS)
        wait_for(lambda: self.characteristic_under(device_path) is not None, 5)
        char_path = self.characteristic_under(device_path)
        if char_path is None:
            fail('characteristic %s not found under %s' % (CHAR_UUID, device_path))
        say('SERVICES RESOLVED, characteristic %s' % char_path)

        char = dbus.Interface(self.bus.get_object(BLUEZ, char_path), CHARACTERISTIC)
        value = bytes(char.ReadValue({}))
        say('READ %r' % value)
        if value != INITIAL_VALUE:
            fail('read %r, expected %r' % (value, INITIAL_VALUE))
        char.WriteValue(dbus.Array([dbus.Byte(b) for b in WRITTEN_VALUE], signature='y'), {})
        value = bytes(char.ReadValue({}))
        say('READ after write %r' % value)
        if value != WRITTEN_VALUE:
            fail('read back %r, expected %r' % (value, WRITTEN_VALUE))

        char.StartNotify()
        got = lambda: any(p == char_path and v.startswith(NOTIFY_PREFIX) for p, v in self.notifications)
        if not wait_for(got, NOTIFY_SECONDS):
            fail('no notification within %d s' % NOTIFY_SECONDS)
        say('NOTIFIED %r' % next(v for p, v in self.notifications
                                 if p == char_path and v.startswith(NOTIFY_PREFIX)))
        char.StopNotify()
        dbus.Interface(device_obj, DEVICE).Disconnect()
        say('PASS')


def main():
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    Central(sys.argv[1] if len(sys.argv) > 1 else '/org/bluez/hci0').run()
    return 0


if __name__ == '__main__':
    sys.exit(main())
