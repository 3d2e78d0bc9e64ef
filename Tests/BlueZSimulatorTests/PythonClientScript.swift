// PythonClientScript: a plain python-dbus BlueZ client (Debian python3-dbus + gi), kept as text so the
// test target has no resource files. Written to a temporary file by the tests that run it.

let pythonClientScript = #"""
#!/usr/bin/python3
"""A plain python-dbus BlueZ client: discovery, connect, read, notify against whatever owns
org.bluez on the bus at argv[1]. Prints one JSON object with what it saw; exit 0 on success.
Usage: python_client.py <bus address> <device address> [burst count]"""
import json
import sys

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

address, target = sys.argv[1], sys.argv[2].upper()
burst = int(sys.argv[3]) if len(sys.argv) > 3 else 0
dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.bus.BusConnection(address)
loop = GLib.MainLoop()
result = {"found": False}
device_path = "/org/bluez/hci0/dev_" + target.replace(":", "_")


def fail(message):
    result["error"] = message
    loop.quit()


def objects():
    om = dbus.Interface(bus.get_object("org.bluez", "/"), "org.freedesktop.DBus.ObjectManager")
    return om.GetManagedObjects()


def on_added(path, interfaces):
    if path == device_path and "org.bluez.Device1" in interfaces and not result["found"]:
        result["found"] = True
        result["name"] = str(interfaces["org.bluez.Device1"].get("Name", ""))
        result["rssi"] = int(interfaces["org.bluez.Device1"]["RSSI"])
        GLib.idle_add(connect)


def connect():
    device = dbus.Interface(bus.get_object("org.bluez", device_path), "org.bluez.Device1")
    device.Connect(reply_handler=lambda: None, error_handler=lambda e: fail(str(e)))
    return False


def on_changed(interface, changed, invalidated, path=None):
    if path == device_path and bool(changed.get("ServicesResolved", False)):
        GLib.idle_add(read_and_notify)
    if interface == "org.bluez.GattCharacteristic1" and "Value" in changed and result.get("notifying"):
        result["notifications"] = result.get("notifications", 0) + 1
        if burst == 0 or result["notifications"] >= burst:
            loop.quit()


def read_and_notify():
    chars = {str(v["org.bluez.GattCharacteristic1"]["UUID"]): p for p, v in objects().items()
             if p.startswith(device_path + "/") and "org.bluez.GattCharacteristic1" in v}
    body = dbus.Interface(bus.get_object("org.bluez", chars["00002a38-0000-1000-8000-00805f9b34fb"]),
                          "org.bluez.GattCharacteristic1")
    result["read"] = [int(b) for b in body.ReadValue({})]
    hr = dbus.Interface(bus.get_object("org.bluez", chars["00002a37-0000-1000-8000-00805f9b34fb"]),
                        "org.bluez.GattCharacteristic1")
    hr.StartNotify()
    result["notifying"] = True
    control = dbus.Interface(bus.get_object("org.bluez", "/org/bluecap/simulator"), "org.bluecap.Simulator1")
    if burst:
        delivered, seconds = control.Burst(target, "2A37", dbus.UInt32(burst))
        result["burst"] = {"delivered": int(delivered), "seconds": float(seconds),
                           "valuesPerSecond": int(delivered / seconds) if seconds > 0 else 0}
    else:
        control.Notify(target, "2A37", dbus.ByteArray(b"\x00\x48"))
    return False


bus.add_signal_receiver(on_added, dbus_interface="org.freedesktop.DBus.ObjectManager", signal_name="InterfacesAdded")
bus.add_signal_receiver(on_changed, dbus_interface="org.freedesktop.DBus.Properties", signal_name="PropertiesChanged",
                        path_keyword="path")
adapter = dbus.Interface(bus.get_object("org.bluez", "/org/bluez/hci0"), "org.bluez.Adapter1")
adapter.SetDiscoveryFilter({"Transport": "le"})
adapter.StartDiscovery()
GLib.timeout_add_seconds(60, lambda: fail("timeout") or False)
loop.run()
print(json.dumps(result))
sys.exit(0 if "error" not in result else 1)
"""#

/// The scenario of `testPeripheral()` as JSON, for `bluez-sim --scenario`.
let testScenarioJSON = #"""
{"adapters": 2, "peripherals": [{"address": "C0:FF:EE:00:00:01", "name": "Pulse", "rssi": -50, "txPower": 4,
  "uuids": ["180D"], "manufacturerData": {"76": "0102"}, "serviceData": {"180D": "09"},
  "services": [{"uuid": "180D", "characteristics": [
    {"uuid": "2A37", "flags": ["notify"], "value": "003c"},
    {"uuid": "2A38", "flags": ["read"], "value": "01", "descriptors": [{"uuid": "2901", "value": "4c6f636174696f6e"}]},
    {"uuid": "2A39", "flags": ["write", "write-without-response"]}]}]}]}
"""#
