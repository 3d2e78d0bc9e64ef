// AdapterError: why an adapter, multi-adapter scan or advertisement-monitor operation failed.
import BlueZ

/// Why an ``Adapters`` operation or ``CentralManager/startMonitoring(patterns:rssi:capacity:fallbackToActiveScanning:)``
/// failed: an open ``Code`` (new codes do not break a `switch` with a default), a message naming
/// the cause and the fix, the adapter, and BlueZ's own error when BlueZ answered with one.
public struct AdapterError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong; compare with the static members (`error.code == .monitoringUnavailable`).
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// No adapter with that name (`hciN`) is known to bluetoothd.
        public static let notFound = Code(rawValue: "notFound")
        /// bluetoothd is not on the bus, or the bus cannot be reached.
        public static let serviceUnavailable = Code(rawValue: "serviceUnavailable")
        /// The adapter is not powered on.
        public static let notPoweredOn = Code(rawValue: "notPoweredOn")
        /// `org.bluez.AdvertisementMonitorManager1` is missing: bluetoothd runs without `--experimental`.
        public static let monitoringUnavailable = Code(rawValue: "monitoringUnavailable")
        /// bluetoothd released the monitor (`AdvertisementMonitor1.Release`): refused or deactivated.
        public static let monitorReleased = Code(rawValue: "monitorReleased")
        /// The adapter went away or was powered off while the operation ran.
        public static let adapterUnavailable = Code(rawValue: "adapterUnavailable")
        /// The operation did not complete in time.
        public static let timeout = Code(rawValue: "timeout")
        /// BlueZ answered with an error (see ``AdapterError/bluez``).
        public static let bluez = Code(rawValue: "bluez")
    }

    /// What went wrong.
    public var code: Code
    /// The cause and, where there is one, the fix.
    public var message: String
    /// The adapter (`hci0`), when the operation addressed one.
    public var adapter: String?
    /// BlueZ's error, for ``Code/bluez``.
    public var bluez: BlueZError?

    /// An error.
    public init(_ code: Code, _ message: String, adapter: String? = nil, bluez: BlueZError? = nil) {
        self.code = code
        self.message = message
        self.adapter = adapter
        self.bluez = bluez
    }

    /// Wraps BlueZ's answer to `operation`; a missing bluetoothd becomes ``Code/serviceUnavailable``,
    /// a call timeout ``Code/timeout``.
    init(_ error: BlueZError, operation: String, adapter: String?) {
        let code: Code
        switch error.kind {
        case .serviceUnavailable, .disconnected: code = .serviceUnavailable
        case .timeout: code = .timeout
        default: code = .bluez
        }
        self.init(code, "\(operation) failed: \(error)", adapter: adapter, bluez: error)
    }

    public var description: String {
        "AdapterError.\(code)" + (adapter.map { " (\($0))" } ?? "") + ": " + message
    }
}
