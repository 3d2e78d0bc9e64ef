import DBus
import Foundation
import Synchronization
import Testing
import TestSupport

/// Runs a python3-dbus script against `address`; returns its stdout (trimmed).
func python(_ script: String, address: String, timeout: Duration = .seconds(20)) async throws -> String {
    try await runPython(["-c", script, address], timeout: timeout).stdout
}

let pythonPrelude = """
import sys, dbus, dbus.lowlevel
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib
DBusGMainLoop(set_as_default=True)
bus = dbus.bus.BusConnection(sys.argv[1])
def py(v):
    if isinstance(v, dbus.Dictionary): return {str(k): py(x) for k, x in v.items()}
    if isinstance(v, (dbus.Array, list)): return [py(x) for x in v]
    if isinstance(v, dbus.Boolean): return bool(v)
    if isinstance(v, (dbus.String, dbus.ObjectPath)): return str(v)
    if isinstance(v, (dbus.Byte, dbus.Int16, dbus.UInt16, dbus.Int32, dbus.UInt32, dbus.Int64, dbus.UInt64)): return int(v)
    return v

"""

func deviceInterface(setterLog: Collector<Int32>) -> DBusInterface {
    DBusInterface(name: "org.bluecap.Device", methods: [
        DBusMethod("Hello", input: "s", output: "s") { call, r in r.succeed([.string("hi " + ((try? call.body.decode(String.self, at: 0)) ?? ""))]) },
    ], properties: [
        DBusProperty("Name", type: .string, value: .string("dev")),
        DBusProperty("Level", type: .int32, access: .readWrite, value: .int32(5)) { value, _ throws(DBusRemoteError) in
            guard case .int32(let v) = value, v >= 0 else {
                throw DBusRemoteError(name: "org.bluecap.Error.Range", message: "level must be >= 0")
            }
            setterLog.append(v)
        },
    ], signals: [DBusSignalInfo("Pulse", signature: "u")])
}

@Suite("Exported objects seen by an independent client (python3-dbus)")
struct ExportTests {
    @Test("Properties Get/GetAll/Set, a refusing setter, read-only errors and PropertiesChanged")
    func propertiesFromPython() async throws {
        try await withTestBus { bus in
            let server = try bus.connect()
            let log = Collector<Int32>()
            let h = try server.export([deviceInterface(setterLog: log)], at: "/dev0")
            defer { h.unexport() }
            let script = pythonPrelude + """
            obj = bus.get_object('\(server.uniqueName)', '/dev0')
            props = dbus.Interface(obj, 'org.freedesktop.DBus.Properties')
            print('get', py(props.Get('org.bluecap.Device', 'Name')))
            print('all', sorted(py(props.GetAll('org.bluecap.Device')).items()))
            props.Set('org.bluecap.Device', 'Level', dbus.Int32(7))
            print('after', py(props.Get('org.bluecap.Device', 'Level')))
            for args in [('Level', dbus.Int32(-1)), ('Name', 'x'), ('Level', 'wrongtype'), ('Nope', 1)]:
                try:
                    props.Set('org.bluecap.Device', args[0], args[1]); print('set ok?!')
                except dbus.DBusException as e:
                    print('err', e.get_dbus_name())
            print('final', py(props.Get('org.bluecap.Device', 'Level')))
            print('hello', py(dbus.Interface(obj, 'org.bluecap.Device').Hello('py')))
            """
            let out = try await python(script, address: bus.address)
            #expect(out.components(separatedBy: "\n") == [
                "get dev",
                "all [('Level', 5), ('Name', 'dev')]",
                "after 7",
                "err org.bluecap.Error.Range",
                "err org.freedesktop.DBus.Error.PropertyReadOnly",
                "err org.freedesktop.DBus.Error.InvalidArgs",
                "err org.freedesktop.DBus.Error.UnknownProperty",
                "final 7",
                "hello hi py",
            ])
            #expect(log.items == [7])
            #expect(h.property("Level", interface: "org.bluecap.Device") == .int32(7))
        }
    }

    @Test("ObjectManager: GetManagedObjects, InterfacesAdded/Removed and PropertiesChanged caught by python")
    func objectManagerFromPython() async throws {
        try await withTestBus { bus in
            let server = try bus.connect()
            let manager = try server.exportObjectManager(at: "/")
            defer { manager.unexport() }
            let log = Collector<Int32>()
            let first = try server.export([deviceInterface(setterLog: log)], at: "/org/bluecap/dev0")
            defer { first.unexport() }
            // python announces that its receivers are in place with a signal, not a file
            let ready = Collector<Bool>()
            let readySub = server.subscribe(rule: MatchRule(type: .signal, interface: "org.bluecap.Test", member: "Ready")) { _ in
                ready.append(true)
            }
            defer { readySub.cancel() }
            try await readySub.established()
            let script = pythonPrelude + """
            om = dbus.Interface(bus.get_object('\(server.uniqueName)', '/'), 'org.freedesktop.DBus.ObjectManager')
            print('managed', py(om.GetManagedObjects()))
            events = []
            loop = GLib.MainLoop()
            def added(path, ifaces): events.append(('added', str(path), sorted(py(ifaces).keys())))
            def removed(path, ifaces): events.append(('removed', str(path), py(ifaces))); loop.quit()
            def changed(iface, ch, inv, path=None): events.append(('changed', str(path), str(iface), py(ch)))
            bus.add_signal_receiver(added, 'InterfacesAdded', 'org.freedesktop.DBus.ObjectManager')
            bus.add_signal_receiver(removed, 'InterfacesRemoved', 'org.freedesktop.DBus.ObjectManager')
            bus.add_signal_receiver(changed, 'PropertiesChanged', 'org.freedesktop.DBus.Properties', path_keyword='path')
            bus.call_blocking('org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus', 'GetId', '', [])
            bus.send_message(dbus.lowlevel.SignalMessage('/py', 'org.bluecap.Test', 'Ready'))
            GLib.timeout_add(10000, loop.quit)
            loop.run()
            for e in events: print(*e)
            """
            async let output = python(script, address: bus.address)
            try await ready.wait(for: 1, timeout: .seconds(15))
            let second = try server.export([DBusInterface(name: "org.bluecap.Other")], at: "/org/bluecap/dev1")
            try first.setProperty("Level", .int32(9), interface: "org.bluecap.Device")
            second.unexport()
            let lines = try await output.components(separatedBy: "\n")
            #expect(lines == [
                "managed {'/org/bluecap/dev0': {'org.bluecap.Device': {'Level': 5, 'Name': 'dev'}}}",
                "added /org/bluecap/dev1 ['org.bluecap.Other']",
                "changed /org/bluecap/dev0 org.bluecap.Device {'Level': 9}",
                "removed /org/bluecap/dev1 ['org.bluecap.Other']",
            ])
        }
    }

    @Test("Introspect lists interfaces, methods, properties and child nodes; Peer.Ping answers")
    func introspection() async throws {
        try await withTestBus { bus in
            let server = try bus.connect()
            let log = Collector<Int32>()
            let h = try server.export([deviceInterface(setterLog: log)], at: "/org/bluecap/dev0")
            defer { h.unexport() }
            let script = pythonPrelude + """
            import xml.etree.ElementTree as ET
            root = ET.fromstring(str(bus.get_object('\(server.uniqueName)', '/org').Introspect(dbus_interface='org.freedesktop.DBus.Introspectable')))
            print('org children', [n.get('name') for n in root.findall('node')])
            node = ET.fromstring(str(bus.get_object('\(server.uniqueName)', '/org/bluecap/dev0').Introspect(dbus_interface='org.freedesktop.DBus.Introspectable')))
            dev = [i for i in node.findall('interface') if i.get('name') == 'org.bluecap.Device'][0]
            print('methods', [m.get('name') for m in dev.findall('method')])
            print('props', [(p.get('name'), p.get('type'), p.get('access')) for p in dev.findall('property')])
            print('signals', [s.get('name') for s in dev.findall('signal')])
            bus.get_object('\(server.uniqueName)', '/org/bluecap/dev0').Ping(dbus_interface='org.freedesktop.DBus.Peer')
            print('ping ok')
            """
            let out = try await python(script, address: bus.address)
            #expect(out.components(separatedBy: "\n") == [
                "org children ['bluecap']",
                "methods ['Hello']",
                "props [('Name', 's', 'read'), ('Level', 'i', 'readwrite')]",
                "signals ['Pulse']",
                "ping ok",
            ])
        }
    }

    @Test("a caller restriction refuses other connections with AccessDenied and changes nothing")
    func callerRestriction() async throws {
        try await withTestBus { bus in
            let server = try bus.connect()
            let allowed = try bus.connect()
            let stranger = try bus.connect()
            let log = Collector<Int32>()
            let h = try server.export([deviceInterface(setterLog: log)], at: "/dev0", allowedCaller: allowed.uniqueName)
            defer { h.unexport() }
            let set: [DBusValue] = [.string("org.bluecap.Device"), .string("Level"), .variant(.int32(42))]
            await #expect(throws: DBusCallError.self) {
                _ = try await stranger.call(destination: server.uniqueName, path: "/dev0", interface: "org.freedesktop.DBus.Properties",
                                            member: "Set", arguments: set)
            }
            do {
                _ = try await stranger.call(destination: server.uniqueName, path: "/dev0", interface: "org.bluecap.Device",
                                            member: "Hello", arguments: [.string("x")])
                Issue.record("stranger was allowed")
            } catch { #expect((error as? DBusCallError)?.remoteName == DBusRemoteError.accessDenied) }
            #expect(h.property("Level", interface: "org.bluecap.Device") == .int32(5))
            #expect(log.items.isEmpty)
            _ = try await allowed.call(destination: server.uniqueName, path: "/dev0", interface: "org.freedesktop.DBus.Properties",
                                       member: "Set", arguments: set)
            #expect(h.property("Level", interface: "org.bluecap.Device") == .int32(42))
            h.allowedCaller = stranger.uniqueName
            let reply = try await stranger.call(destination: server.uniqueName, path: "/dev0", interface: "org.bluecap.Device",
                                                member: "Hello", arguments: [.string("x")])
            #expect(reply.body == [.string("hi x")])
        }
    }
}
