// Real BlueZ: the library's advertising data count is bluetoothd's. An advertisement counted at
// 31 bytes registers; one counted at 32, sent straight to bluetoothd past the library's check
// (the BlueZ layer's registration), is refused: "Failed to parse advertisement." from 5.55,
// "Failed to register advertisement" from 5.66 and 5.82 (there the length is checked when the
// kernel's extended advertising parameters come back, after parsing).

import BlueCapKit
import BlueZ
import DBus
import Foundation
import Testing
import TestSupport

extension RealBlueZTests.VMAdvertisingTests {
    /// Registers `ad` on hci1 through the BlueZ layer (no validation); nil when bluetoothd
    /// accepted it (it is unregistered again), else its error.
    static func registerRaw(_ ad: LocalAdvertisement, _ bus: Connection) async throws -> BlueZError? {
        let owner = try await bus.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                       interface: "org.freedesktop.DBus", member: "GetNameOwner", arguments: [.string("org.bluez")],
                                       timeout: .seconds(5))
        guard case .string(let name)? = owner.body.first else { throw BlueCapError(kind: .failed, operation: "GetNameOwner") }
        let adapter = try ObjectPath("/org/bluez/" + VM.peripheralAdapter)
        do throws(BlueZError) {
            let handle = try await ad.register(on: bus, adapter: adapter,
                                               path: "/org/bluecap/vmlength", allowedCaller: name, timeout: .seconds(20))
            await handle.unregister()
            return nil
        } catch {
            return error
        }
    }

    @Test("31 bytes as the library counts them register; 32 are refused by bluetoothd itself", .timeLimit(.minutes(3)))
    func lengthCountMatchesBluetoothd() async throws {
        let session = BluetoothSession()
        let bus = try session.testConnection()
        try await VM.settle(bus)
        // Flags (3) + manufacturer data (4 + n) + a 16-bit UUID list (4) + TX power (3).
        func ad(_ n: Int) -> LocalAdvertisement {
            LocalAdvertisement(serviceUUIDs: ["180F"], manufacturerData: [0xFFFE: Data(repeating: 0xA5, count: n)], includes: ["tx-power"])
        }
        #expect(ad(17).advertisingDataLength == 31 && ad(18).advertisingDataLength == 32)
        #expect(throws: Never.self) { try ad(17).validate() }
        #expect(throws: BlueCapError.self) { try ad(18).validate() }
        let fits = try await Self.registerRaw(ad(17), bus)
        let over = try await Self.registerRaw(ad(18), bus)
        Self.note("advertising-length.txt", "31 bytes: \(fits.map { "\($0)" } ?? "registered"); 32 bytes: \(over.map { "\($0)" } ?? "registered")")
        #expect(fits == nil, "\(String(describing: fits))")
        let refused = over.map { $0.message.contains("Failed to parse advertisement") || $0.message.contains("Failed to register advertisement") }
        #expect(over?.kind == .failed && refused == true, "\(String(describing: over))")
        try await VM.settle(bus)
    }
}
