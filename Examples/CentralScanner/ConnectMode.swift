// ConnectMode: central-scanner --connect ADDRESS: connects by address without a scan, prints the
// services and characteristics found, disconnects.

import BlueCapKit
import Foundation
import ExampleSupport

enum ConnectMode {
    /// Connects `address` (CentralManager.connect(address:)), discovers every service and
    /// characteristic, prints them, disconnects. 0 when done, 1 when it could not connect.
    static func run(_ manager: CentralManager, address: String, _ options: ScannerOptions, _ console: Console) async -> Int32 {
        do {
            _ = try await manager.whenPoweredOn(timeout: .seconds(10)).value
            console.event("connecting", [("address", .string(address)), ("adapter", .optional(manager.adapter)),
                                         ("addressType", .string(options.addressType.rawValue))],
                          text: "connecting to \(address) on \(manager.adapter ?? "?") (no scan)")
            let peripheral = try await manager.connect(address: address, addressType: options.addressType,
                                                       timeout: options.connectTimeout).value
            console.event("connected", [("address", .string(peripheral.address)), ("name", .optional(peripheral.name))],
                          text: "connected to \(peripheral.address)" + (peripheral.name.map { " (\($0))" } ?? ""))
            defer { peripheral.disconnect() }
            _ = try await peripheral.discoverServices().value
            for service in peripheral.services.sorted(by: { $0.uuid.uuidString < $1.uuid.uuidString }) {
                console.event("service", [("address", .string(address)), ("uuid", .string(service.uuid.uuidString))],
                              text: "service \(service.uuid)", result: true)
                _ = try await service.discoverCharacteristics().value
                for c in service.characteristics.sorted(by: { $0.uuid.uuidString < $1.uuid.uuidString }) {
                    let flags = c.properties.bluezFlags
                    console.event("characteristic", [("service", .string(service.uuid.uuidString)), ("uuid", .string(c.uuid.uuidString)),
                                                     ("properties", .array(flags.map { .string($0) }))],
                                  text: "  characteristic \(c.uuid) [\(flags.joined(separator: ", "))]", result: true)
                }
            }
            // On a connected peripheral `connect()` only opens the event stream (no call), where
            // `disconnect()` then reports `.forceDisconnect` once BlueZ has taken the link down.
            if peripheral.isConnected {
                let disconnected = Promise<Void>()
                let token = CancelToken()
                peripheral.connect().onSuccess(cancelToken: token) { update in
                    if update.connectionEvent == .forceDisconnect { disconnected.success(()) }
                }
                peripheral.disconnect()
                _ = try? await disconnected.future.timeout(after: .seconds(10)).value
                token.cancel()
            }
            console.event("disconnected", [("address", .string(address)), ("services", .integer(peripheral.services.count))],
                          text: "disconnected from \(address)")
            return 0
        } catch {
            console.error("connecting to \(address) failed: \(error)")
            return 1
        }
    }
}
