// The central role's error names, kept as names of the one error, BlueCapError.
import BlueZ

/// Why a ``CentralManager`` operation failed: a ``BlueCapError``.
public typealias CentralManagerError = BlueCapError

/// Why an operation on a ``Peripheral``, ``Service``, ``Characteristic`` or ``Descriptor``
/// failed: a ``BlueCapError``.
public typealias PeripheralError = BlueCapError

// MARK: - CentralManager's errors

extension BlueCapError {
    /// `.notPoweredOn`: the manager's adapter is in `state`.
    public static func notPoweredOn(_ state: ManagerState) -> BlueCapError {
        BlueCapError(kind: .notPoweredOn, operation: "CentralManager",
                     message: "the adapter is not powered on (state \(state)): power it with `bluetoothctl power on`")
    }

    /// `.busUnavailable`: the bus could not be reached (`message` names the address).
    public static func busUnavailable(_ message: String) -> BlueCapError {
        BlueCapError(kind: .busUnavailable, operation: "CentralManager", message: message)
    }

    /// BlueZ refused to scan (`org.bluez.Adapter1.SetDiscoveryFilter` or `StartDiscovery` failed).
    public static func scanFailed(_ error: BlueZError) -> BlueCapError {
        BlueCapError(error, operation: "CentralManager.startScanning (\(error.operation ?? "org.bluez.Adapter1.StartDiscovery"))")
    }

    /// `.scanReplaced`: a newer scan replaced this one.
    public static let scanReplaced = BlueCapError(kind: .scanReplaced, operation: "CentralManager.startScanning",
                                                  message: "replaced by a newer scan")

    /// `.scanTimedOut`: the `timeout` given to `startScanning(timeout:)` passed and the scan was
    /// stopped (`org.bluez.Adapter1.StopDiscovery`); ``timeout`` holds it. Scan longer, or scan
    /// again, if the peripheral was not found.
    public static func scanTimedOut(after timeout: Duration) -> BlueCapError {
        let (seconds, attoseconds) = timeout.components
        let text = attoseconds == 0 ? "\(seconds)" : "\(Double(seconds) + Double(attoseconds) / 1e18)"
        return BlueCapError(kind: .scanTimedOut, operation: "CentralManager.startScanning", timeout: timeout,
                            message: "the scan timed out after \(text) s (its timeout) and was stopped;"
                                + " no peripheral is reported after that: pass a longer timeout, or scan again")
    }

    /// `.adapterUnavailable`: bluetoothd left the bus or the adapter went away
    /// while scanning; `state` is the manager's state then.
    public static func adapterUnavailable(_ state: ManagerState) -> BlueCapError {
        BlueCapError(kind: .adapterUnavailable, operation: "CentralManager.startScanning",
                     message: "the scan ended: the adapter state is \(state)")
    }
}
