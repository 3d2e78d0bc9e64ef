// AdvertisementReporter: the passive side — advertisements matching a pattern, published
// under `<prefix>/<gateway>/adv/<address>`.

import BlueCapKit
import ExampleSupport
import Foundation

/// Scans (duplicates on) and publishes each advertisement that matches an
/// ``AdvertisementPattern``: when its data changed, or at most every `interval` when it did not.
/// Remembers at most 4096 addresses (the table is emptied when full).
package final class AdvertisementReporter: Sendable {
    private let patterns: [AdvertisementPattern]
    private let manager: CentralManager
    private let publish: @Sendable (_ address: String, _ payload: JSON) -> Void
    private let interval: Duration
    private struct Seen { var payload: String; var at: ContinuousClock.Instant }
    private let seen = Guarded([String: Seen]())
    private let token = CancelToken()

    package init(patterns: [AdvertisementPattern], manager: CentralManager, interval: Duration = .seconds(30),
                 publish: @escaping @Sendable (_ address: String, _ payload: JSON) -> Void) {
        self.patterns = patterns
        self.manager = manager
        self.interval = interval
        self.publish = publish
    }

    /// Scans (`org.bluez.Adapter1.StartDiscovery` through the manager) whenever the manager is
    /// powered on: at once when it is, else once it is, and again after bluetoothd or the adapter
    /// came back (their going ends the scan). `failed` hears a scan that ended with an error.
    package func start(failed: @escaping @Sendable (String) -> Void = { _ in }) {
        guard !patterns.isEmpty else { return }
        manager.whenStateChanges().onSuccess(cancelToken: token) { [self] state in
            guard state == .poweredOn, !manager.isScanning else { return }
            let scan = manager.startScanning(capacity: 256, options: ScanOptions(allowDuplicates: true))
            scan.onSuccess(cancelToken: token) { [self] peripheral in
                consider(peripheral.address.uppercased(), peripheral.name, peripheral.rssi, peripheral.advertisement)
            }
            scan.onFailure(cancelToken: token) { error in failed("\(error)") }
        }
    }

    /// Stops the scan.
    package func stop() {
        token.cancel()
        if !patterns.isEmpty { manager.stopScanning() }
    }

    private func consider(_ address: String, _ name: String?, _ rssi: Int16?, _ ad: Advertisement) {
        let matching = patterns.filter { $0.matches(address: address, ad) }
        guard !matching.isEmpty else { return }
        var fields: [(String, JSON)] = [("address", .string(address)), ("name", .optional(name ?? ad.localName)),
                                        ("rssi", rssi.map { .integer(Int($0)) } ?? .null)]
        fields.append(("serviceData", .object(ad.serviceData.sorted { $0.key.uuidString < $1.key.uuidString }
            .map { ($0.key.description.lowercased(), .string(hex($0.value))) })))
        fields.append(("manufacturerData", .object(ad.manufacturerData.sorted { $0.key < $1.key }.map { (String($0.key), .string(hex($0.value))) })))
        for pattern in matching where pattern.bthome {
            if let uuid = pattern.serviceData, let data = ad.serviceData[uuid], let readings = BTHome.decode(data) {
                fields.append(("bthome", readings))
                break
            }
        }
        // Changed data or the interval passed; RSSI alone does not count as a change.
        let key = JSON.object(fields.filter { $0.0 != "rssi" }).text
        let now = ContinuousClock.now
        let due = seen.withLock { table -> Bool in
            if let last = table[address], last.payload == key, now - last.at < interval { return false }
            if table.count >= 4096 { table.removeAll() }
            table[address] = Seen(payload: key, at: now)
            return true
        }
        if due { publish(address, .object(fields)) }
    }
}
