// ATTError: the ATT error codes, one type for the library's GATT server, its central and the
// simulator's peripherals, and how bluetoothd carries them over D-Bus.

// MARK: - ATTError

/// An ATT error response code (Core spec Vol 3 Part F 3.4.1.1).
///
/// A ``PeripheralManager`` characteristic answers a central's request with one; a simulated
/// peripheral's firmware too; a central reads one back from BlueZ's error message
/// (``init(bluezMessage:)``). Codes without a static member are still errors
/// (`ATTError(code: 0x11)`); application errors are 0x80…0x9F (``application(_:)``).
public struct ATTError: Error, Sendable, Equatable, Hashable, CustomStringConvertible {
    /// The ATT error code.
    public var code: UInt8

    /// An ATT error with any code.
    public init(code: UInt8) { self.code = code }

    /// 0x01 Invalid Handle.
    public static let invalidHandle = ATTError(code: 0x01)
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
    /// 0x0E Unlikely Error: the request could not be completed for a reason the other codes do
    /// not name. A ``PeripheralManager`` answers it to a request the app left unanswered.
    public static let unlikelyError = ATTError(code: 0x0e)
    /// 0x0F Insufficient Encryption.
    public static let insufficientEncryption = ATTError(code: 0x0f)
    /// An application error, 0x80…0x9F.
    public static func application(_ code: UInt8) -> ATTError { ATTError(code: code) }

    /// Whether the code is an application error (0x80…0x9F).
    public var isApplicationError: Bool { (0x80...0x9f).contains(code) }

    /// `ATT error 0x0e`.
    public var description: String { "ATT error 0x" + Self.hex(code) }

    static func hex(_ code: UInt8) -> String {
        let digits = String(code, radix: 16)
        return digits.count == 1 ? "0" + digits : digits
    }

    // MARK: A local GATT server's reply

    /// The D-Bus error name a local GATT application replies to bluetoothd for the Unlikely
    /// Error: a name bluetoothd's `dbus_error_to_att_ecode` (src/gatt-database.c) does not list,
    /// which it answers as 0x0E on every BlueZ version (`org.bluez.Error.Failed` gives 0x80 on
    /// BlueZ before 5.75 whatever its message says).
    public static let unlikelyErrorName = "org.bluecap.Error.UnlikelyError"

    /// The reply a local GATT application sends bluetoothd so that it answers the central with
    /// this code (src/gatt-database.c `dbus_error_to_att_ecode`): `NotPermitted` for 0x02/0x03,
    /// `NotSupported` 0x06, `InvalidOffset` 0x07, `NotAuthorized` 0x08, `InvalidValueLength` 0x0D,
    /// ``unlikelyErrorName`` 0x0E, `Failed` with the code as message (`"0x80"`) otherwise.
    public var bluezError: BlueZError {
        switch code {
        case 0x02: BlueZError(kind: .notPermitted, message: "Read not permitted")
        case 0x03: BlueZError(kind: .notPermitted, message: "Write not permitted")
        case 0x06: BlueZError(kind: .notSupported, message: "Request not supported")
        case 0x07: BlueZError(kind: .invalidOffset, message: "Invalid offset")
        case 0x08: BlueZError(kind: .notAuthorized, message: "Not authorized")
        case 0x0d: BlueZError(kind: .invalidValueLength, message: "Invalid value length")
        case 0x0e: BlueZError(kind: .other(Self.unlikelyErrorName), message: "Unlikely error")
        default: BlueZError(kind: .failed, message: "0x" + Self.hex(code))
        }
    }

    /// The code bluetoothd's GATT server answers when a local application replies to a read or
    /// write with the D-Bus error `name`/`message` (src/gatt-database.c `dbus_error_to_att_ecode`,
    /// BlueZ 5.75 and later). `permissionError` is the code used for `NotPermitted`.
    public init(applicationReply name: String, message: String, permissionError: ATTError) {
        switch name {
        case "org.bluez.Error.Failed":
            let parsed: UInt32? = message.hasPrefix("0x") ? UInt32(message.dropFirst(2), radix: 16) : UInt32(message)
            guard let code = parsed else { self = .application(0x80); return }
            self = (0x80...0x9f).contains(code) ? .application(UInt8(code)) : .unlikelyError
        case "org.bluez.Error.NotSupported": self = .requestNotSupported
        case "org.bluez.Error.NotAuthorized": self = .insufficientAuthorization
        case "org.bluez.Error.InvalidValueLength": self = .invalidAttributeValueLength
        case "org.bluez.Error.InvalidOffset": self = .invalidOffset
        case "org.bluez.Error.InProgress": self = ATTError(code: 0xfe)
        case "org.bluez.Error.ImproperlyConfigured": self = ATTError(code: 0xfd)
        case "org.bluez.Error.NotPermitted": self = permissionError
        default: self = .unlikelyError
        }
    }

    // MARK: A remote GATT server's answer

    /// The code in bluetoothd's GATT client error message (src/gatt-client.c
    /// `create_gatt_dbus_error`: `"Operation failed with ATT error: 0x0e"`), or nil when the
    /// message carries none.
    public init?(bluezMessage message: String) {
        guard let range = message.range(of: "ATT error: 0x") else { return nil }
        let digits = message[range.upperBound...].prefix { $0.isHexDigit }
        guard let code = UInt8(digits, radix: 16) else { return nil }
        self.init(code: code)
    }
}
