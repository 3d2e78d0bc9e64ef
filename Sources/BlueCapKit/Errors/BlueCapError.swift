// BlueCapError: the one error every BlueCapKit operation fails with, in both roles.

import BlueZ

// MARK: - BlueCapError

/// Why a BlueCapKit operation failed, in either role: ``CentralManager``, ``Peripheral``,
/// ``Service``, ``Characteristic``, ``Descriptor``, ``PeripheralManager``, ``ServiceModel``.
///
/// ``kind`` is an open set (``Kind``, shared with BlueZ's own error names): match it like an
/// enum and keep a `default:`. ``operation`` names our call and the BlueZ call behind it
/// (`PeripheralManager.add (org.bluez.GattManager1.RegisterApplication)`), ``path`` the BlueZ
/// object, ``bluez`` what BlueZ answered, ``timeout`` the deadline that fired.
///
/// ```swift
/// do { try await characteristic.read(timeout: 5.0).value }
/// catch let error as BlueCapError {
///     switch error.kind {
///     case .notConnected, .disconnected: reconnect()
///     case .timeout: print("no answer within \(error.timeout!)")
///     default: print(error)   // names the call, the object and the cause
///     }
/// }
/// ```
public struct BlueCapError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong: a BlueZ error name (`.inProgress`,
    /// `.authenticationFailed`…), a transport condition
    /// (`.timeout`, `.serviceUnavailable`…) or one of the library's
    /// (`.terminated`, `.busy`…). Open for extension.
    public typealias Kind = BlueZErrorKind

    /// What went wrong.
    public var kind: Kind
    /// Our call and the BlueZ call behind it, e.g.
    /// `Characteristic.read (org.bluez.GattCharacteristic1.ReadValue)`.
    public var operation: String
    /// The BlueZ object the call addressed (or our exported object, for the peripheral role).
    public var path: String?
    /// BlueZ's error, when BlueZ answered with one.
    public var bluez: BlueZError?
    /// The timeout that fired, for `.timeout`.
    public var timeout: Duration?
    /// More detail: BlueZ's message, or ours naming the cause and the fix.
    public var message: String

    /// Creates an error.
    public init(kind: Kind, operation: String, path: String? = nil, bluez: BlueZError? = nil,
                timeout: Duration? = nil, message: String = "") {
        self.kind = kind
        self.operation = operation
        self.path = path
        self.bluez = bluez
        self.timeout = timeout
        self.message = message
    }

    /// Wraps a BlueZ error, keeping its kind (so `InProgress` stays `.inProgress`,
    /// a call deadline `.timeout` with `timeout`, a departed bluetoothd
    /// `.serviceUnavailable`) and naming our call; `path` defaults to BlueZ's. bluetoothd's
    /// `Failed` "Not connected" (its GATT calls' answer once the link is gone) is `.notConnected`.
    public init(_ error: BlueZError, operation: String, path: String? = nil, timeout: Duration? = nil) {
        self.init(kind: error.saysNotConnected ? .notConnected : error.kind, operation: operation, path: path ?? error.path, bluez: error,
                  timeout: error.kind == .timeout ? timeout : nil, message: error.message)
    }

    /// The ATT error code the remote GATT server answered, when BlueZ's message carries one
    /// (`Failed` "Operation failed with ATT error: 0x0e" is `ATTError.unlikelyError`), or
    /// the code a local read/write answer maps to.
    public var attError: ATTError? {
        guard let bluez else { return nil }
        return ATTError(bluezMessage: bluez.message)
    }

    /// Whether retrying after a pause may succeed (BlueZ's `InProgress`, or `Failed` with
    /// `le-connection-abort-by-local`).
    public var isTransient: Bool { bluez?.isTransient ?? (kind == .inProgress) }

    /// `"<operation> on <path> failed: <kind> after <timeout> (<BlueZ error>: <message>)"`.
    public var description: String {
        var text = operation
        if let path { text += " on \(path)" }
        text += " failed: \(kind)"
        if let timeout, kind == .timeout { text += " after \(timeout)" }
        if let bluez {
            let cause = bluez.kind == kind ? "" : "\(bluez.kind)"
            let detail = [cause, bluez.message].filter { !$0.isEmpty }.joined(separator: ": ")
            if !detail.isEmpty { text += " (\(detail))" }
        } else if !message.isEmpty {
            text += ": \(message)"
        }
        return text
    }
}

// MARK: - The library's kinds

extension BlueZErrorKind {
    /// `terminate()` was called on the peripheral: while the operation was pending, or before.
    public static let terminated = Self(rawValue: "org.bluecap.Error.Terminated")
    /// Too many operations are queued for the device.
    public static let busy = Self(rawValue: "org.bluecap.Error.Busy")
    /// No connection slot of the adapter came free within ``ConnectionSlots/queueTimeout``
    /// (``ConnectionSlots``): the message names the adapter and its usage.
    public static let noConnectionSlot = Self(rawValue: "org.bluecap.Error.NoConnectionSlot")
    /// A value could not be decoded or encoded.
    public static let invalidValue = Self(rawValue: "org.bluecap.Error.InvalidValue")
    /// The manager's adapter is not powered on (the message names its state).
    public static let notPoweredOn = Self(rawValue: "org.bluecap.Error.NotPoweredOn")
    /// The D-Bus bus could not be reached (the message names the address).
    public static let busUnavailable = Self(rawValue: "org.bluecap.Error.BusUnavailable")
    /// A newer scan replaced this one.
    public static let scanReplaced = Self(rawValue: "org.bluecap.Error.ScanReplaced")
    /// A scan's `timeout` passed: the scan was stopped (``BlueCapError/timeout`` holds it).
    public static let scanTimedOut = Self(rawValue: "org.bluecap.Error.ScanTimedOut")
    /// The adapter went away, or bluetoothd left the bus, while scanning.
    public static let adapterUnavailable = Self(rawValue: "org.bluecap.Error.AdapterUnavailable")
}
