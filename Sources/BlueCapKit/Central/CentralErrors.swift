// Errors of the central role, naming the call, the object, the BlueZ error and the timeout.
import BlueZ

/// Why a ``CentralManager`` operation failed.
public enum CentralManagerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The manager is not `.poweredOn` (the state it is in).
    case notPoweredOn(ManagerState)
    /// The bus could not be reached (the message names the address).
    case busUnavailable(String)
    /// BlueZ refused to scan (`SetDiscoveryFilter` / `StartDiscovery` failed).
    case scanFailed(BlueZError)
    /// A new scan replaced this one.
    case scanReplaced
    /// The `timeout` given to `startScanning(timeout:)` passed: the scan was stopped
    /// (`StopDiscovery`). Scan longer, or restart the scan, if the peripheral was not found.
    case scanTimedOut(after: Duration)
    /// bluetoothd left the bus or the adapter went away while scanning.
    case adapterUnavailable(ManagerState)

    public var description: String {
        switch self {
        case .notPoweredOn(let s): return "CentralManager: the adapter is not powered on (state \(s))"
        case .busUnavailable(let m): return "CentralManager: \(m)"
        case .scanFailed(let e): return "CentralManager.startScanning: \(e)"
        case .scanReplaced: return "CentralManager.startScanning: replaced by a newer scan"
        case .scanTimedOut(let after):
            let (seconds, attoseconds) = after.components
            let text = attoseconds == 0 ? "\(seconds)" : "\(Double(seconds) + Double(attoseconds) / 1e18)"
            return "CentralManager.startScanning: the scan timed out after \(text) s (its timeout) and was stopped;"
                + " no peripheral is reported after that: pass a longer timeout, or scan again"
        case .adapterUnavailable(let s): return "CentralManager: scan ended, adapter state \(s)"
        }
    }
}

/// Why an operation on a ``Peripheral``, ``Service``, ``Characteristic`` or ``Descriptor`` failed.
public struct PeripheralError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: Sendable, Equatable {
        /// The peripheral is not connected (and not terminated).
        case notConnected
        /// The link dropped while the operation was pending, or the D-Bus connection the manager
        /// uses is closed (then ``PeripheralError/bluez`` has kind `.disconnected`).
        case disconnected
        /// BlueZ answered with an error (see ``PeripheralError/bluez``).
        case bluez
        /// The operation's timeout fired (see ``PeripheralError/timeout``).
        case timeout
        /// bluetoothd is not on the bus, or left it while the operation was pending.
        case serviceUnavailable
        /// `terminate()` was called: while the operation was pending, or before it was asked for.
        case terminated
        /// The requested services, characteristics or descriptors do not exist on the device.
        case notFound
        /// The characteristic does not support the operation (see its properties).
        case notSupported
        /// Too many operations are queued for the device.
        case busy
        /// A value could not be decoded or encoded.
        case invalidValue
    }

    /// What went wrong.
    public var kind: Kind
    /// The call that failed, e.g. `Characteristic.read` (`org.bluez.GattCharacteristic1.ReadValue`).
    public var operation: String
    /// The BlueZ object the call addressed.
    public var path: String?
    /// BlueZ's error, when BlueZ answered with one.
    public var bluez: BlueZError?
    /// The timeout that fired, for ``Kind/timeout``.
    public var timeout: Duration?
    /// More detail.
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

    /// Wraps a BlueZ error: a call timeout becomes ``Kind/timeout`` with `timeout`, a missing
    /// (or departed) bluetoothd ``Kind/serviceUnavailable``, a closed D-Bus connection
    /// ``Kind/disconnected``, BlueZ's `NotConnected` ``Kind/notConnected``, anything else ``Kind/bluez``.
    init(_ error: BlueZError, operation: String, path: String?, timeout: Duration? = nil) {
        let kind: Kind
        switch error.kind {
        case .timeout: kind = .timeout
        case .serviceUnavailable: kind = .serviceUnavailable
        case .disconnected: kind = .disconnected
        case .notConnected: kind = .notConnected
        default: kind = .bluez
        }
        self.init(kind: kind, operation: operation, path: path, bluez: error,
                  timeout: kind == .timeout ? timeout : nil, message: error.message)
    }

    public var description: String {
        var text = operation
        if let path { text += " on \(path)" }
        text += " failed: \(kind)"
        if let timeout, kind == .timeout { text += " after \(timeout)" }
        if let bluez { text += " (\(bluez.kind == .other(bluez.errorName) ? bluez.errorName : "\(bluez.kind)")\(bluez.message.isEmpty ? "" : ": " + bluez.message))" }
        else if !message.isEmpty { text += ": \(message)" }
        return text
    }
}
