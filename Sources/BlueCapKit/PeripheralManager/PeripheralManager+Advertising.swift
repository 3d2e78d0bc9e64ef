// PeripheralManager+Advertising: LE advertisements through org.bluez.LEAdvertisingManager1.

import BlueZ
import DBus
import Foundation
import Futures

extension PeripheralManager {
    /// Whether an advertisement is registered and bluetoothd has not released it.
    public var isAdvertising: Bool { inner.withLock { $0.advertisement }?.isRegistered ?? false }

    /// `true` each time an advertisement is registered, `false` each time it stops: unregistered,
    /// released by bluetoothd (`Release()`), or bluetoothd went away. The last 10 are replayed.
    public func whenAdvertisingChanges() -> FutureStream<Bool> { advertisingStream.stream }

    /// Advertises connectably (`LEAdvertisement1` Type `"peripheral"`, Discoverable, Includes
    /// `["tx-power"]`) with `LocalName` = `name` and `ServiceUUIDs` = `uuids`, through
    /// `org.bluez.LEAdvertisingManager1.RegisterAdvertisement`. Replaces a current advertisement.
    public func startAdvertising(_ name: String, uuids: [BLEUUID]? = nil) -> Future<Void> {
        startAdvertising(LocalAdvertisement(type: .peripheral, serviceUUIDs: (uuids ?? []).map(\.uuidString), localName: name))
    }

    /// Advertises an iBeacon: `ManufacturerData` {0x004C: ``BeaconRegion/manufacturerData``}
    /// (type 0x02, length 0x15, proximity UUID, major, minor, measured power), Type `"broadcast"`
    /// (not connectable), nothing else included: 27 bytes of the 31.
    ///
    /// Without the discoverable flags: bluetoothd refuses a broadcast advertisement that sets
    /// them ("Broadcast cannot set flags", 5.55 to 5.82). iOS and Android scanners report it;
    /// a BlueZ central reports an LE advertiser without a discoverable flag only while some
    /// client set a discovery filter (`Adapter1.SetDiscoveryFilter`, as ``CentralManager``'s
    /// scan does) or through an advertisement monitor (`device_is_discoverable` in
    /// bluetoothd's `src/adapter.c`).
    public func startAdvertising(beacon: BeaconRegion) -> Future<Void> {
        startAdvertising(LocalAdvertisement(type: .broadcast,
                                            manufacturerData: [BeaconRegion.appleCompanyIdentifier: beacon.manufacturerData],
                                            includes: [], discoverable: nil))
    }

    /// Advertises exactly `advertisement` (every `LEAdvertisement1` property), replacing the
    /// current advertisement, through `org.bluez.LEAdvertisingManager1.RegisterAdvertisement`.
    /// Checked first against the adapter's ``advertisingCapabilities(timeout:)``
    /// (`LocalAdvertisement.validate(against:operation:)`): the future fails with
    /// `.invalidArguments` naming the limit hit (data length, interval range, …) before
    /// bluetoothd's bare "Failed to parse advertisement." could.
    public func startAdvertising(_ advertisement: LocalAdvertisement) -> Future<Void> {
        let operation = "PeripheralManager.startAdvertising (org.bluez.LEAdvertisingManager1.RegisterAdvertisement)"
        return enqueue("startAdvertising", call: "org.bluez.LEAdvertisingManager1.RegisterAdvertisement") { [weak self] in
            guard let self else { return }
            let old = inner.withLock { s in defer { s.advertisement = nil; s.wantedAdvertisement = nil }; return s.advertisement }
            if let old {
                await old.unregister()
                advertisingStream.success(false)
            }
            var caps = try await readCapabilities(operation: operation)
            // The instance the old one freed may not be counted yet (bluetoothd updates
            // SupportedInstances after its reply): RegisterAdvertisement says it if none is free.
            caps.availableInstances = nil
            try advertisement.validate(against: caps, operation: operation)
            inner.withLock { $0.wantedAdvertisement = advertisement }
            do { try await registerAdvertisement() } catch {
                inner.withLock { $0.wantedAdvertisement = nil }
                throw error
            }
        }
    }

    /// Stops advertising: `org.bluez.LEAdvertisingManager1.UnregisterAdvertisement`, then the
    /// object is unexported.
    @discardableResult
    public func stopAdvertising() -> Future<Void> {
        enqueue("stopAdvertising", call: "org.bluez.LEAdvertisingManager1.UnregisterAdvertisement") { [weak self] in
            guard let self else { return }
            let old = inner.withLock { s in defer { s.advertisement = nil; s.wantedAdvertisement = nil }; return s.advertisement }
            guard let old else { return }
            let error = await old.unregister()
            advertisingStream.success(false)
            if let error, error.kind != .serviceUnavailable, error.kind != .doesNotExist { throw error }
        }
    }

    /// Registers the wanted advertisement with the current owner.
    func registerAdvertisement() async throws {
        guard let wanted = inner.withLock({ $0.wantedAdvertisement }) else { return }
        let old = inner.withLock { s in defer { s.advertisement = nil }; return s.advertisement }
        await old?.unregister()
        let (owner, adapter, connection) = try target("PeripheralManager.startAdvertising (org.bluez.LEAdvertisingManager1.RegisterAdvertisement)")
        let stream = advertisingStream
        let handle = try await wanted.register(on: connection, adapter: adapter, path: advertisementObject, allowedCaller: owner,
                                               onRelease: { stream.success(false) })
        inner.withLock { $0.advertisement = handle }
        stream.success(true)
        follow(handle.registration, owner: owner, advertisement: true)
    }
}
