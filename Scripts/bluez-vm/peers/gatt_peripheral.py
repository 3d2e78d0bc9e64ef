#!/usr/bin/python3
"""Smoke-test GATT peripheral for the BlueZ VM.

Registers, on one adapter, a GATT application (one service with one
read/write/notify characteristic, org.bluez.GattManager1.RegisterApplication)
and an LE advertisement (LEAdvertisingManager1.RegisterAdvertisement:
Discoverable, LocalName, ServiceUUIDs). Prints "READY <address>" on stdout
once both are registered; everything else goes to stderr. While a central is
subscribed it sends a notification every second.

usage: gatt_peripheral.py [/org/bluez/hci1] [lifetime-seconds]"""
import sys

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

from common import (ADAPTER, BLUEZ, CHAR_UUID, CHARACTERISTIC, INITIAL_VALUE, LOCAL_NAME,
                    NOTIFY_PREFIX, OBJECT_MANAGER, PROPERTIES, SERVICE_UUID)

ROLE = 'peripheral'
APP_PATH = '/com/bluecap/smoke'


def log(*args):
    print('[%s]' % ROLE, *args, file=sys.stderr, flush=True)


def byte_array(data):
    return dbus.Array([dbus.Byte(b) for b in data], signature='y')


class InvalidArguments(dbus.exceptions.DBusException):
    _dbus_error_name = 'org.freedesktop.DBus.Error.InvalidArgs'


class PropertiesObject(dbus.service.Object):
    """An exported object whose properties live in one interface."""
    interface = None

    def properties(self):
        raise NotImplementedError

    @dbus.service.method(PROPERTIES, in_signature='s', out_signature='a{sv}')
    def GetAll(self, interface):
        if interface != self.interface:
            raise InvalidArguments('no interface %s' % interface)
        return self.properties()

    @dbus.service.signal(PROPERTIES, signature='sa{sv}as')
    def PropertiesChanged(self, interface, changed, invalidated):
        pass


class Characteristic(PropertiesObject):
    interface = CHARACTERISTIC

    def __init__(self, bus, path, service_path):
        super().__init__(bus, path)
        self.path = path
        self.service_path = service_path
        self.value = bytes(INITIAL_VALUE)
        self.notify_timer = None
        self.sent = 0

    def properties(self):
        return {'Service': dbus.ObjectPath(self.service_path), 'UUID': CHAR_UUID,
                'Flags': dbus.Array(['read', 'write', 'notify'], signature='s'),
                'Notifying': dbus.Boolean(self.notify_timer is not None)}

    @dbus.service.method(CHARACTERISTIC, in_signature='a{sv}', out_signature='ay')
    def ReadValue(self, options):
        log('ReadValue -> %r' % self.value)
        return byte_array(self.value)

    @dbus.service.method(CHARACTERISTIC, in_signature='aya{sv}')
    def WriteValue(self, value, options):
        self.value = bytes(value)
        log('WriteValue %r' % self.value)

    @dbus.service.method(CHARACTERISTIC)
    def StartNotify(self):
        log('StartNotify')
        if self.notify_timer is None:
            self.notify_timer = GLib.timeout_add(1000, self.notify)
            GLib.idle_add(lambda: self.notify() and False)

    @dbus.service.method(CHARACTERISTIC)
    def StopNotify(self):
        log('StopNotify')
        if self.notify_timer is not None:
            GLib.source_remove(self.notify_timer)
            self.notify_timer = None

    def notify(self):
        if self.notify_timer is None:
            return False
        self.sent += 1
        value = NOTIFY_PREFIX + str(self.sent).encode()
        log('notify %r' % value)
        self.PropertiesChanged(CHARACTERISTIC, {'Value': byte_array(value)}, [])
        return True


class Service(PropertiesObject):
    interface = 'org.bluez.GattService1'

    def __init__(self, bus, path):
        super().__init__(bus, path)
        self.path = path
        self.characteristic = Characteristic(bus, path + '/char0', path)

    def properties(self):
        return {'UUID': SERVICE_UUID, 'Primary': dbus.Boolean(True),
                'Characteristics': dbus.Array([dbus.ObjectPath(self.characteristic.path)], signature='o')}


class Application(dbus.service.Object):
    def __init__(self, bus):
        super().__init__(bus, APP_PATH)
        self.service = Service(bus, APP_PATH + '/service0')

    @dbus.service.method(OBJECT_MANAGER, out_signature='a{oa{sa{sv}}}')
    def GetManagedObjects(self):
        objects = {}
        for obj in (self.service, self.service.characteristic):
            objects[dbus.ObjectPath(obj.path)] = {obj.interface: obj.properties()}
        return objects


class Advertisement(PropertiesObject):
    interface = 'org.bluez.LEAdvertisement1'

    def __init__(self, bus):
        self.path = APP_PATH + '/advertisement0'
        super().__init__(bus, self.path)

    def properties(self):
        # Discoverable: bluetoothd ignores LE advertisers without the
        # General Discoverable flag during discovery
        return {'Type': 'peripheral', 'LocalName': dbus.String(LOCAL_NAME),
                'ServiceUUIDs': dbus.Array([SERVICE_UUID], signature='s'),
                'Discoverable': dbus.Boolean(True)}

    @dbus.service.method('org.bluez.LEAdvertisement1')
    def Release(self):
        log('advertisement released')


def main():
    adapter_path = sys.argv[1] if len(sys.argv) > 1 else '/org/bluez/hci1'
    lifetime = int(sys.argv[2]) if len(sys.argv) > 2 else 120
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    adapter = bus.get_object(BLUEZ, adapter_path)
    props = dbus.Interface(adapter, PROPERTIES)
    props.Set(ADAPTER, 'Powered', dbus.Boolean(True))
    address = str(props.Get(ADAPTER, 'Address'))
    log('adapter %s address %s' % (adapter_path, address))

    app = Application(bus)
    advertisement = Advertisement(bus)
    loop = GLib.MainLoop()
    pending = {'application', 'advertisement'}

    def registered(what):
        def reply():
            log('%s registered' % what)
            pending.discard(what)
            if not pending:
                print('READY %s' % address, flush=True)
        return reply

    def failed(what):
        def error(e):
            log('FAIL: registering the %s: %s' % (what, e))
            print('FAILED', flush=True)
            loop.quit()
        return error

    dbus.Interface(adapter, 'org.bluez.GattManager1').RegisterApplication(
        APP_PATH, {}, reply_handler=registered('application'), error_handler=failed('application'))
    dbus.Interface(adapter, 'org.bluez.LEAdvertisingManager1').RegisterAdvertisement(
        advertisement.path, {}, reply_handler=registered('advertisement'),
        error_handler=failed('advertisement'))
    GLib.timeout_add_seconds(lifetime, loop.quit)
    loop.run()
    return 1 if pending else 0


if __name__ == '__main__':
    sys.exit(main())
