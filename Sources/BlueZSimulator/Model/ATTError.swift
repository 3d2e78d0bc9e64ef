// ATTError: the ATT error codes a simulated peripheral answers with, and how bluetoothd maps them.

// MARK: - ATTError

/// An ATT error response code (Core spec Vol 3 Part F 3.4.1.1), as a simulated peripheral's
/// firmware answers a read or write. bluetoothd turns it into a D-Bus error for the caller
/// (`clientReply`), exactly as its GATT client does (src/gatt-client.c create_gatt_dbus_error).
public struct ATTError: Error, Sendable, Equatable, Hashable, CustomStringConvertible {
    /// The ATT error code.
    public var code: UInt8

    /// An ATT error with any code.
    public init(code: UInt8) { self.code = code }

    /// 0x02 Read Not Permitted.
    public static let readNotPermitted = ATTError(code: 0x02)
    /// 0x03 Write Not Permitted.
    public static let writeNotPermitted = ATTError(code: 0x03)
    /// 0x05 Insufficient Authentication.
    public static let insufficientAuthentication = ATTError(code: 0x05)
    /// 0x06 Request Not Supported.
    public static let requestNotSupported = ATTError(code: 0x06)
    /// 0x07 Invalid Offset.
    public static let invalidOffset = ATTError(code: 0x07)
    /// 0x08 Insufficient Authorization.
    public static let insufficientAuthorization = ATTError(code: 0x08)
    /// 0x0D Invalid Attribute Value Length.
    public static let invalidAttributeValueLength = ATTError(code: 0x0d)
    /// 0x0E Unlikely Error.
    public static let unlikely = ATTError(code: 0x0e)
    /// 0x0F Insufficient Encryption.
    public static let insufficientEncryption = ATTError(code: 0x0f)
    /// An application error, 0x80...0x9F.
    public static func application(_ code: UInt8) -> ATTError { ATTError(code: code) }

    public var description: String { "ATT error 0x" + [code].hexString }

    // MARK: Mapping

    /// The D-Bus error bluetoothd's GATT client replies with when the peer answers this code.
    public var clientReply: BlueZErrorReply {
        switch code {
        case 0x02: .notPermitted("Read not permitted")
        case 0x03: .notPermitted("Write not permitted")
        case 0x05, 0x0f, 0x0c: .notPermitted("Not paired")
        case 0x07: .invalidArguments("Invalid offset")
        case 0x0d: .invalidArguments("Invalid Length")
        case 0x08: .notAuthorized
        case 0x06: .notSupported
        case 0x00: .failed("Operation failed")
        default: .failed("Operation failed with ATT error: 0x" + [code].hexString)
        }
    }

    /// The ATT code bluetoothd's GATT server answers when a local application replies to a
    /// read/write with the D-Bus error `reply` (src/gatt-database.c dbus_error_to_att_ecode).
    /// `permissionError` is the code used for NotPermitted (read or write not permitted).
    public static func fromApplication(_ reply: BlueZErrorReply, permissionError: ATTError) -> ATTError {
        switch reply.name {
        case "org.bluez.Error.Failed":
            let text = reply.message
            let parsed: UInt32? = text.hasPrefix("0x") ? UInt32(text.dropFirst(2), radix: 16) : UInt32(text)
            guard let code = parsed else { return .application(0x80) }
            return (0x80...0x9f).contains(code) ? .application(UInt8(code)) : .unlikely
        case "org.bluez.Error.NotSupported": return .requestNotSupported
        case "org.bluez.Error.NotAuthorized": return .insufficientAuthorization
        case "org.bluez.Error.InvalidValueLength": return .invalidAttributeValueLength
        case "org.bluez.Error.InvalidOffset": return .invalidOffset
        case "org.bluez.Error.InProgress": return ATTError(code: 0xfe)
        case "org.bluez.Error.ImproperlyConfigured": return ATTError(code: 0xfd)
        case "org.bluez.Error.NotPermitted": return permissionError
        default: return .unlikely
        }
    }
}
