// VMSoakPeripheral: the peripheral side of `make soak-vm` (Scripts/bluez-vm/steps/soak), a
// PeripheralManager serving the soak service on real bluetoothd.
import BlueCapKit
import DBus
import Foundation
import Glibc

/// The soak service: the central writes a cycle number to `control`, then subscribes to `data`;
/// each subscription gets ``count`` notifications `[cycle: UInt32 LE][sequence: UInt16 LE]`,
/// sequence 0 to count - 1, sent back to back.
enum VMSoakProfile {
    static let service: BLEUUID = "5A6B0000-0451-4000-B000-000000000000"
    static let control: BLEUUID = "5A6B0001-0451-4000-B000-000000000000"
    static let data: BLEUUID = "5A6B0002-0451-4000-B000-000000000000"
    static let count = 100
    static let name = "BlueCapSoak"

    /// The notification numbered `sequence` of cycle `cycle`.
    static func notification(cycle: UInt32, sequence: UInt16) -> Data {
        Data([UInt8(cycle & 0xff), UInt8(cycle >> 8 & 0xff), UInt8(cycle >> 16 & 0xff), UInt8(cycle >> 24),
              UInt8(sequence & 0xff), UInt8(sequence >> 8)])
    }

    /// The cycle number a central wrote to `control` (0 when it wrote nothing usable).
    static func cycle(_ value: Data?) -> UInt32 {
        guard let v = value, v.count == 4 else { return 0 }
        return v.reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }
}

enum VMSoakPeripheral {
    /// Serves the soak service on `adapter` and advertises it until killed. The PeripheralManager
    /// registers the application and advertisement again by itself after a bluetoothd restart.
    /// Prints `ready` once advertising, then one `sent cycle N: K notifications` line per subscription.
    static func run(adapter: String) async -> Int32 {
        let manager = PeripheralManager(adapter: adapter)
        let control = MutableCharacteristic(uuid: VMSoakProfile.control, properties: [.read, .write],
                                            permissions: [.readable, .writeable], value: Data([0, 0, 0, 0]), name: "control")
        let data = MutableCharacteristic(uuid: VMSoakProfile.data, properties: [.notify], permissions: [.readable],
                                         value: Data(), name: "data")
        let service = MutableService(uuid: VMSoakProfile.service, name: "soak", characteristics: [control, data])
        data.whenSubscriptionChanges().onSuccess(context: .immediate) { event in
            guard event == .subscribed else { return }
            let cycle = VMSoakProfile.cycle(control.value)
            var sent = 0
            for i in 0..<VMSoakProfile.count {
                guard data.updateValue(withData: VMSoakProfile.notification(cycle: cycle, sequence: UInt16(i))) else { break }
                sent += 1
            }
            say("sent cycle \(cycle): \(sent) notifications")
        }
        do {
            let poweredOn = Promise<Void>()
            manager.whenStateChanges().onSuccess(context: .immediate) { if $0 == .poweredOn { _ = poweredOn.success(()) } }
            try await poweredOn.future.value
            try await manager.add(service).value
            try await manager.startAdvertising(VMSoakProfile.name, uuids: [VMSoakProfile.service]).value
        } catch {
            say("peripheral: set-up failed: \(error)")
            return 1
        }
        say("ready")
        // Runs until the soak step kills it; the manager's own streams do the work.
        while true { try? await Task.sleep(for: .seconds(3600)) }
    }
}

/// One line on stdout, unbuffered (the step script follows the log).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
