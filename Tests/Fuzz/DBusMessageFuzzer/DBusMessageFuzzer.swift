// DBusMessageFuzzer: arbitrary bytes → dbus_message_demarshal → our value decoding → typed
// decoding into BlueZ property snapshots, as the object tree does with bus input.
// Built with `-sanitize=fuzzer` (and -DFUZZING) it is a libFuzzer target; otherwise it replays
// corpus files, or writes the seed corpus with `--write-corpus DIR`.
@_spi(Fuzzing) import BlueZ
@_spi(Fuzzing) import DBus
import Foundation
import FuzzSupport

// MARK: - Typed decoding

/// Decodes `properties` as each BlueZ interface's snapshot (every property optional and
/// type-checked: wrong types are dropped, never trapped on).
func decodeSnapshots(interface: String, _ properties: [String: DBusValue], path: ObjectPath?) {
    switch interface {
    case "org.bluez.Adapter1": _ = Adapter1.Properties(properties, path: path)
    case "org.bluez.Device1": _ = Device1.Properties(properties, path: path)
    case "org.bluez.GattService1": _ = GattService1.Properties(properties, path: path)
    case "org.bluez.GattCharacteristic1": _ = GattCharacteristic1.Properties(properties, path: path)
    case "org.bluez.GattDescriptor1": _ = GattDescriptor1.Properties(properties, path: path)
    default:
        // Unknown interface: decode as every snapshot anyway, to reach each decoder with junk.
        _ = Adapter1.Properties(properties, path: path)
        _ = Device1.Properties(properties, path: path)
        _ = GattCharacteristic1.Properties(properties, path: path)
    }
}

/// `a{sv}` as a dictionary, nil when the value is something else.
func propertyMap(_ value: DBusValue) -> [String: DBusValue]? { try? value.as([String: DBusValue].self) }

/// `a{sa{sv}}`.
func interfaceMap(_ value: DBusValue) -> [String: [String: DBusValue]]? { try? value.as([String: [String: DBusValue]].self) }

/// Runs one message body through the shapes BlueZ sends us.
func decodeBody(_ m: Message) {
    let body = m.body
    // InterfacesAdded (oa{sa{sv}}) and GetManagedObjects entries.
    if body.count == 2, let path = try? body.decode(ObjectPath.self, at: 0), let ifaces = interfaceMap(body[1]) {
        for (name, props) in ifaces { decodeSnapshots(interface: name, props, path: path) }
    }
    // InterfacesRemoved (oas).
    if body.count == 2 { _ = try? body.decode([String].self, at: 1) }
    // PropertiesChanged (sa{sv}as).
    if body.count == 3, let name = try? body.decode(String.self, at: 0), let changed = propertyMap(body[1]) {
        decodeSnapshots(interface: name, changed, path: m.path)
        _ = try? body.decode([String].self, at: 2)
    }
    // GetManagedObjects reply (a{oa{sa{sv}}}).
    if body.count == 1, let objects = try? body[0].as([ObjectPath: [String: [String: DBusValue]]].self) {
        for (path, ifaces) in objects { for (name, props) in ifaces { decodeSnapshots(interface: name, props, path: path) } }
    }
    // ReadValue reply (ay), AcquireNotify reply (hq) without the fd, NameOwnerChanged (sss).
    if let first = body.first {
        _ = try? first.as([UInt8].self)
        _ = try? first.as(String.self)
        _ = first.unwrapped
        _ = first.description
    }
    _ = m.description
}

/// One input. The in-place readers of a signal (DBus's ``BodyReader``, BlueZ's lone
/// PropertiesChanged change on it) must agree with the decoded body.
func fuzzMessage(_ bytes: UnsafeRawBufferPointer) {
    guard let m = DBusFuzzing.decode(messageBytes: bytes) else { return }
    decodeBody(m)
    if let mismatch = DBusFuzzing.bodyReaderMismatch(messageBytes: bytes) {
        fatalError("the in-place body reader differs from the decoded message: \(mismatch)")
    }
    if let mismatch = BlueZFuzzing.loneChangeMismatch(messageBytes: bytes) {
        fatalError("the in-place PropertiesChanged reading differs from the decoded message: \(mismatch)")
    }
}

// MARK: - Entry points

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    fuzzMessage(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

/// With libFuzzer (-DFUZZING): libFuzzer's driver. Without: replays corpus files, or writes
/// the seed corpus (`--write-corpus DIR`).
@main
struct DBusMessageFuzzerMain {
    static func main() throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        #if !FUZZING
        if arguments.first == "--write-corpus", arguments.count == 2 {
            let written = try SeedCorpus.write(to: arguments[1])
            print("DBusMessageFuzzer: wrote \(written) seed message(s) to \(arguments[1])")
            return
        }
        #endif
        FuzzerDriver.run(name: "DBusMessageFuzzer", arguments: arguments, target: fuzz) { data in
            data.withUnsafeBytes { fuzzMessage($0) }
        }
    }
}
