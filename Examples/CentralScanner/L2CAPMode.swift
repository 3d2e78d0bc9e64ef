// L2CAPMode: central-scanner --l2cap ADDRESS --psm N [--bytes B]: opens an L2CAP channel to an
// echo service (accelerometer-peripheral --l2cap), sends B bytes, checks the echo, prints the
// throughput.

import BlueCapKit
import Foundation
import ExampleSupport

enum L2CAPMode {
    /// Finds `address`, runs the echo over a channel the kernel connects. 0 when every byte
    /// came back, 1 otherwise.
    static func run(_ manager: CentralManager, address: String, _ options: ScannerOptions, _ console: Console) async -> Int32 {
        let psm = options.psm ?? 0
        do {
            _ = try await manager.whenPoweredOn(timeout: .seconds(10)).value
            console.event("connecting", [("address", .string(address)), ("adapter", .optional(manager.adapter))],
                          text: "opening an L2CAP channel to \(address) PSM \(psm) on \(manager.adapter ?? "?")")
            // The device as bluetoothd knows it, else from a scan; the kernel's L2CAP connect
            // makes the LE link itself (the device advertises connectable).
            let peripheral = try await ScannerCommand.find(address, manager, timeout: options.connectTimeout)
            let r = try await L2CAPEcho.run(peripheral, psm: psm, bytes: options.bytes)
            console.event("l2cap", [("address", .string(address)), ("psm", .integer(Int(psm))), ("bytes", .integer(r.bytes)),
                                    ("matched", .bool(r.matched)), ("seconds", .number(r.seconds)),
                                    ("bytesPerSecond", .number(r.rate)), ("mtu", .integer(r.mtu))],
                          text: String(format: "L2CAP PSM %d at %@: %d bytes echoed %@ in %.2f s, %.1f kB/s each way (MTU %d)",
                                       Int(psm), address, r.bytes, r.matched ? "intact" : "DIFFERENT", r.seconds, r.rate / 1000, r.mtu),
                          result: true)
            return r.matched ? 0 : 1
        } catch {
            console.error("L2CAP echo with \(address) on PSM \(psm) failed: \(error)")
            return 1
        }
    }
}
