// HostileCall: fuzz bytes → one method call a stranger on the bus could send our objects.
@_spi(Fuzzing) import DBus
import Foundation

/// A method call built from fuzz bytes: a target path, sender, interface, member and arguments
/// of any types (right or wrong), with names drawn mostly from what our objects implement so
/// the calls get past the lookup and into the handlers.
struct HostileCall {
    var path: ObjectPath
    var sender: String
    var interface: String?
    var member: String
    var arguments: [DBusValue]
    var noReply: Bool

    static let interfaces: [String?] = [
        nil, "org.bluez.GattService1", "org.bluez.GattCharacteristic1", "org.bluez.GattDescriptor1",
        "org.bluez.LEAdvertisement1", "org.bluez.Agent1", "org.freedesktop.DBus.Properties",
        "org.freedesktop.DBus.ObjectManager", "org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.Peer",
        "org.example.Nothing",
    ]
    static let members = [
        "ReadValue", "WriteValue", "StartNotify", "StopNotify", "Confirm", "AcquireNotify", "AcquireWrite",
        "Release", "RequestPinCode", "DisplayPinCode", "RequestPasskey", "DisplayPasskey", "RequestConfirmation",
        "RequestAuthorization", "AuthorizeService", "Cancel", "Get", "GetAll", "Set", "GetManagedObjects",
        "Introspect", "Ping",
    ]
    static let optionKeys = ["offset", "type", "mtu", "device", "link", "prepare-authorize", "Value", "x"]
    static let propertyNames = ["Value", "UUID", "Flags", "Notifying", "Service", "Characteristic", "Primary",
                                "Type", "ServiceUUIDs", "LocalName", "Includes", "Discoverable", "TxPower", "Nope"]

    /// Decodes a call from `bytes`; every byte string gives one (missing bytes read as zero).
    init(_ bytes: inout FuzzBytes, paths: [ObjectPath], allowedCaller: String) {
        let p = Int(bytes.byte())
        path = p < paths.count * 20 ? paths[p % paths.count] : ((try? ObjectPath(bytes.name(prefix: "/"))) ?? "/nowhere")
        sender = bytes.byte() < 230 ? allowedCaller : ":1.\(bytes.byte())"
        let i = Int(bytes.byte())
        interface = i < 240 ? Self.interfaces[i % Self.interfaces.count] : "org.x." + bytes.name(prefix: "I")
        let m = Int(bytes.byte())
        member = m < 240 ? Self.members[m % Self.members.count] : bytes.name(prefix: "M")
        noReply = bytes.byte() > 250
        let count = Int(bytes.byte() % 5)
        arguments = (0..<count).map { _ in
            let type = Self.type(&bytes, depth: 0)
            return Self.value(of: type, &bytes, depth: 0)
        }
    }

    // MARK: - Types and values

    /// A type, biased towards what our methods take (`a{sv}`, `ay`, `s`, `o`).
    static func type(_ bytes: inout FuzzBytes, depth: Int) -> DBusType {
        let basic: [DBusType] = [.byte, .bool, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double,
                                 .string, .objectPath, .signature, .unixFD]
        let k = Int(bytes.byte())
        switch k % 20 {
        case 0...12: return basic[k % 20]
        case 13, 14: return .dict(key: .string, value: .variant)
        case 15: return .array(.byte)
        case 16 where depth < 3: return .array(type(&bytes, depth: depth + 1))
        case 17 where depth < 3:
            return .dict(key: basic[Int(bytes.byte()) % 12], value: type(&bytes, depth: depth + 1))
        case 18 where depth < 3:
            return .struct((0...Int(bytes.byte() % 3)).map { _ in type(&bytes, depth: depth + 1) })
        default: return .variant
        }
    }

    /// A value of `type`; arrays up to a few thousand elements (byte arrays past the ATT limit).
    static func value(of type: DBusType, _ bytes: inout FuzzBytes, depth: Int) -> DBusValue {
        switch type {
        case .byte: return .byte(bytes.byte())
        case .bool: return .bool(bytes.byte() & 1 == 1)
        case .int16: return .int16(Int16(truncatingIfNeeded: bytes.word()))
        case .uint16: return .uint16(UInt16(truncatingIfNeeded: bytes.word()))
        case .int32: return .int32(Int32(truncatingIfNeeded: bytes.word()))
        case .uint32: return .uint32(UInt32(truncatingIfNeeded: bytes.word()))
        case .int64: return .int64(Int64(truncatingIfNeeded: bytes.word()))
        case .uint64: return .uint64(bytes.word())
        case .double: return .double(Double(bitPattern: bytes.word()))
        case .string: return .string(bytes.text())
        case .objectPath:
            return .objectPath((try? ObjectPath(bytes.name(prefix: "/org/bluez/hci0/dev_"))) ?? "/org/bluez/hci0")
        case .signature: return .signature((try? DBusSignature(bytes.text())) ?? "a{sv}")
        case .unixFD:
            return (try? FileDescriptor(duplicating: 0)).map { .unixFD($0) } ?? .int32(0)
        case .array(.byte):
            let n = bytes.length()
            return .array(element: .byte, (0..<n).map { _ in .byte(bytes.byte()) })
        case .array(let element):
            let n = min(bytes.length(), 64)
            return .array(element: element, (0..<n).map { _ in value(of: element, &bytes, depth: depth + 1) })
        case .dict(.string, .variant):
            let n = Int(bytes.byte() % 6)
            return .dict(key: .string, value: .variant, (0..<n).map { _ in
                let key = optionKeys[Int(bytes.byte()) % optionKeys.count]
                let inner = depth < 3 ? Self.type(&bytes, depth: depth + 1) : .uint16
                return .init(.string(key), .variant(value(of: inner, &bytes, depth: depth + 1)))
            })
        case .dict(let key, let valueType):
            let n = Int(bytes.byte() % 6)
            return .dict(key: key, value: valueType, (0..<n).map { _ in
                .init(value(of: key, &bytes, depth: depth + 1), value(of: valueType, &bytes, depth: depth + 1))
            })
        case .struct(let fields):
            return .struct(fields.map { value(of: $0, &bytes, depth: depth + 1) })
        case .variant:
            let inner = depth < 3 ? Self.type(&bytes, depth: depth + 1) : .string
            return .variant(value(of: inner, &bytes, depth: depth + 1))
        }
    }
}

// MARK: - FuzzBytes

/// Reads fuzz input front to back; past the end everything reads as zero.
struct FuzzBytes {
    private let data: [UInt8]
    private var index = 0
    init(_ data: [UInt8]) { self.data = data }

    mutating func byte() -> UInt8 {
        guard index < data.count else { return 0 }
        defer { index += 1 }
        return data[index]
    }

    mutating func word() -> UInt64 {
        (0..<8).reduce(0) { acc, _ in acc << 8 | UInt64(byte()) }
    }

    /// 0…4095, mostly small: the top bits of the first byte pick the scale.
    mutating func length() -> Int {
        let b = byte()
        return b < 200 ? Int(b % 40) : Int(b) << 4 | Int(byte() & 0x0f)
    }

    /// A string of up to 40 bytes of the input (any UTF-8, NULs included).
    mutating func text() -> String {
        let n = Int(byte() % 40)
        return String(decoding: (0..<n).map { _ in byte() }, as: UTF8.self)
    }

    /// A name made of letters, digits and `_` after `prefix`.
    mutating func name(prefix: String) -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_".utf8)
        let n = Int(byte() % 12)
        return prefix + String(decoding: (0..<n).map { _ in alphabet[Int(byte()) % alphabet.count] }, as: UTF8.self)
    }
}
