// Security: our exported GATT application and advertisement refuse every caller but bluetoothd,
// including real separate processes; writes beyond a characteristic's maximum length are refused
// end to end. (IntegrationTests/PeripheralLifecycleTests.foreignCallerRefused covers a second
// in-process connection; PeripheralLocalObjectTests.errorReplies direct calls with bad lengths.)
import BlueCapKit
import BlueZSimulator
import DBus
import Foundation
import Futures
import Testing
import TestSupport

let secureService: BLEUUID = "0000FFF0-0000-1000-8000-00805F9B34FB"
let secureChar: BLEUUID = "0000FFF1-0000-1000-8000-00805F9B34FB"

/// A ``PeripheralRig`` whose peripheral serves FFF0/FFF1 (read, write, max 20 bytes, value [1])
/// and advertises "Secure".
final class SecurityRig: Sendable {
    let rig: PeripheralRig
    let characteristic: MutableCharacteristic

    init() async throws {
        characteristic = MutableCharacteristic(uuid: secureChar, properties: [.read, .write], permissions: [.readable, .writeable],
                                               value: Data([1]), maxLength: 20)
        rig = try await PeripheralRig.start(serving: MutableService(uuid: secureService, characteristics: [characteristic]),
                                            advertisingAs: "Secure")
    }

    var bus: TestBus { rig.bus }
    var peripheralConnection: Connection { rig.peripheralConnection }
    var peripheralManager: PeripheralManager { rig.peripheralManager }

    func stop() async { await rig.stop() }

    /// The object path of FFF1 in our exported application.
    var characteristicPath: String { peripheralManager.applicationPath + "/service0/char0" }

    /// Connects the central to hci1 and returns FFF1 as the central sees it.
    func remoteCharacteristic() async throws -> Characteristic {
        try need(try await rig.connectService().characteristic(secureChar), "FFF1")
    }
}

/// Runs a program to completion (bounded) and returns its status and combined output.
func run(_ program: String, _ arguments: [String], timeout: Duration = .seconds(20)) async throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: program)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    return try await withDeadline(timeout, program) {
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}

@Suite("Reliability: security", .serialized, .timeLimit(.minutes(1)))
struct SecurityTests {
    @Test("a separate process (dbus-send and python-dbus) calling our GATT objects and advertisement is refused with AccessDenied and changes nothing")
    func separateProcessRefused() async throws {
        let rig = try await SecurityRig()
        let owner = rig.peripheralConnection.uniqueName
        let charPath = rig.characteristicPath
        let advPath = rig.peripheralManager.advertisementPath
        let root = rig.peripheralManager.applicationPath
        let address = rig.bus.address
        // dbus-send: Release the advertisement, read the object tree, set a property.
        let release = try await run("/usr/bin/dbus-send", ["--bus=" + address, "--print-reply", "--dest=" + owner, advPath,
                                                           "org.bluez.LEAdvertisement1.Release"])
        #expect(release.status != 0)
        #expect(release.output.contains("org.freedesktop.DBus.Error.AccessDenied"), "\(release.output)")
        let objects = try await run("/usr/bin/dbus-send", ["--bus=" + address, "--print-reply", "--dest=" + owner, root,
                                                           "org.freedesktop.DBus.ObjectManager.GetManagedObjects"])
        #expect(objects.output.contains("org.freedesktop.DBus.Error.AccessDenied"), "\(objects.output)")
        let set = try await run("/usr/bin/dbus-send", ["--bus=" + address, "--print-reply", "--dest=" + owner, charPath,
                                                       "org.freedesktop.DBus.Properties.Set", "string:org.bluez.GattCharacteristic1",
                                                       "string:Value", "variant:byte:7"])
        #expect(set.output.contains("org.freedesktop.DBus.Error.AccessDenied"), "\(set.output)")
        // python-dbus: WriteValue and ReadValue with the right argument types.
        let script = """
        import dbus, sys
        bus = dbus.bus.BusConnection(sys.argv[1])
        obj = bus.get_object(sys.argv[2], sys.argv[3], introspect=False)
        char = dbus.Interface(obj, 'org.bluez.GattCharacteristic1')
        for name, call in (('write', lambda: char.WriteValue(dbus.Array([dbus.Byte(9)] * 4, signature='y'), dbus.Dictionary({}, signature='sv'))),
                           ('read', lambda: char.ReadValue(dbus.Dictionary({}, signature='sv')))):
            try:
                call()
                print(name, 'ALLOWED')
            except dbus.exceptions.DBusException as e:
                print(name, e.get_dbus_name())
        """
        let python = try await run("/usr/bin/python3", ["-c", script, address, owner, charPath])
        #expect(python.status == 0, "\(python.output)")
        #expect(python.output.contains("write org.freedesktop.DBus.Error.AccessDenied"), "\(python.output)")
        #expect(python.output.contains("read org.freedesktop.DBus.Error.AccessDenied"), "\(python.output)")
        #expect(!python.output.contains("ALLOWED"))
        // Nothing changed: value, advertisement, and bluetoothd (the simulator) still gets through.
        #expect(rig.characteristic.value == Data([1]))
        #expect(rig.peripheralManager.isAdvertising)
        let remote = try await rig.remoteCharacteristic()
        #expect(try await remote.read().value.value == Data([1]))
        await rig.stop()
    }

    @Test("writes beyond the maximum length from a real central are refused with InvalidValueLength and change nothing")
    func overlongWritesRefused() async throws {
        let rig = try await SecurityRig()
        let remote = try await rig.remoteCharacteristic()
        for (data, offset) in [(Data(repeating: 0xAA, count: 21), 0), (Data(repeating: 0xBB, count: 512), 0), (Data(repeating: 0xCC, count: 600), 0)] {
            let error = try #require(try await failure(of: remote.write(data: data, timeout: .seconds(3))) as? PeripheralError,
                                     "\(data.count)-byte write accepted")
            #expect(error.bluez?.kind == error.kind, "BlueZ answered: \(error)")
            #expect(error.bluez?.kind == .invalidValueLength || error.bluez?.kind == .invalidArguments
                    || error.bluez?.kind == .failed, "\(data.count) bytes at \(offset): \(error)")
            #expect(rig.characteristic.value == Data([1]))
        }
        // At the limit: accepted and stored.
        _ = try await remote.write(data: Data(repeating: 0x11, count: 20), timeout: .seconds(3)).value
        #expect(rig.characteristic.value == Data(repeating: 0x11, count: 20))
        #expect(try await remote.read().value.value == Data(repeating: 0x11, count: 20))
        await rig.stop()
    }
}
