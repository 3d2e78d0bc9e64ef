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
            // `connect()` opens the event stream where `disconnect()` then reports
            // `.forceDisconnect` once BlueZ has taken the link down. On a link BlueZ reports
            // connected it makes no call; on one it never reported (`Connected` stays false with
            // some controllers) it asks BlueZ again, once a connection slot is granted. Its
            // `.connect` comes first: a `disconnect()` before it would only cancel that request
            // and leave the link up.
            if peripheral.isConnected {
                let linked = Promise<Void>(), disconnected = Promise<Void>()
                let token = CancelToken()
                peripheral.connect().onSuccess(cancelToken: token) { update in
                    switch update.connectionEvent {
                    case .connect: _ = linked.success(())
                    case .forceDisconnect: _ = disconnected.success(())
                    default: break
                    }
                }
                _ = try? await linked.future.timeout(after: .seconds(10)).value
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
