// AdapterScanResult: a peripheral found by a scan on several adapters, with the adapter that heard it.

/// What ``Adapters/startScanning(on:forServiceUUIDs:capacity:options:poweredOnTimeout:)`` yields: the peripheral
/// and the adapter that heard it. The same device heard by two adapters comes twice, once per
/// adapter, as two ``Peripheral`` objects (BlueZ keeps one device object per adapter).
public struct AdapterScanResult: Sendable {
    /// The adapter that heard the advertisement (`hci1`).
    public let adapter: String
    /// The peripheral, as seen through that adapter.
    public let peripheral: Peripheral
}
