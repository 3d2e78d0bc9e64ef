// PeripheralFirmware: how a simulated peripheral answers its central.

import Foundation

// MARK: - GattRequest

/// A read or write reaching a simulated peripheral.
public struct GattRequest: Sendable, Equatable {
    /// The peripheral's address.
    public var peripheral: String
    /// The central's adapter index (hciN).
    public var adapter: Int
    /// The service UUID.
    public var service: String
    /// The characteristic UUID.
    public var characteristic: String
    /// The descriptor UUID when the request targets a descriptor.
    public var descriptor: String?
    /// The offset requested.
    public var offset: Int
    /// For writes: "request", "command" or "reliable".
    public var writeType: String?
}

// MARK: - PeripheralFirmware

/// The behaviour of a simulated peripheral, in the style of CoreBluetooth-Mock's spec delegate.
/// Each handler may return nil to get the default: reads return the stored value from `offset`,
/// writes store the value. Handlers run on the simulator's queue and must not block; they may call
/// `BlueZSimulator.notify(peripheral:characteristic:value:)`.
public struct PeripheralFirmware: Sendable {
    /// Answers a read: the full value (the simulator applies the offset) or an ATT error.
    public var onRead: (@Sendable (GattRequest) -> Result<Data, ATTError>?)?
    /// Answers a write: success (the simulator stores the value) or an ATT error.
    public var onWrite: (@Sendable (GattRequest, Data) -> Result<Void, ATTError>?)?
    /// Told when a central enables (true) or disables (false) notifications of a characteristic.
    public var onSubscriptionChange: (@Sendable (_ characteristic: String, _ enabled: Bool) -> Void)?
    /// Told when a central connects (true) or disconnects (false); argument is the adapter index.
    public var onConnectionChange: (@Sendable (_ adapter: Int, _ connected: Bool) -> Void)?

    /// A firmware with the given handlers (all optional).
    public init(
        onRead: (@Sendable (GattRequest) -> Result<Data, ATTError>?)? = nil,
        onWrite: (@Sendable (GattRequest, Data) -> Result<Void, ATTError>?)? = nil,
        onSubscriptionChange: (@Sendable (String, Bool) -> Void)? = nil,
        onConnectionChange: (@Sendable (Int, Bool) -> Void)? = nil
    ) {
        self.onRead = onRead
        self.onWrite = onWrite
        self.onSubscriptionChange = onSubscriptionChange
        self.onConnectionChange = onConnectionChange
    }
}
