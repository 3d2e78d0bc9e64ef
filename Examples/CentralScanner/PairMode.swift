// PairMode: central-scanner --pair ADDRESS: pairs with one device through our pairing agent.

import BlueCapKit
import Foundation
import ExampleSupport

enum PairMode {
    /// Finds `address`, registers the agent the options ask for, pairs, prints the bond state.
    static func run(_ manager: CentralManager, address: String, _ options: ScannerOptions, _ console: Console) async -> Int32 {
        let capability: PairingIOCapability
        var handlers = PairingHandlers(displayPasskey: { key, device in
            console.event("passkey", [("address", .string(device.address)), ("passkey", .integer(Int(key)))],
                          text: "type \(String(format: "%06u", key)) on \(device.address)")
        })
        if let passkey = options.passkey {
            capability = .keyboardDisplay
            handlers.passkey = { _ in Future(value: passkey) }
            handlers.confirm = { shown, _ in Future(value: shown == passkey) }
        } else if options.autoConfirm {
            capability = .displayYesNo
            handlers.confirm = { _, _ in Future(value: true) }
        } else {
            capability = .noInputNoOutput
        }
        handlers.authorize = { _ in Future(value: true) }
        let agent = PairingAgent(capability: capability, delegate: handlers)
        agent.whenRequested().onSuccess { request in
            console.event("agent", [("address", .string(request.device.address)), ("request", .string("\(request.kind)"))],
                          text: "agent: \(request.kind) from \(request.device.address)")
        }
        let registration: PairingAgentRegistration
        do {
            _ = try await manager.whenPoweredOn(timeout: .seconds(10)).value
            registration = try await agent.register(for: manager).value
        } catch {
            console.error("pairing with \(address) failed: \(error)")
            return 1
        }
        let status: Int32
        do {
            let peripheral = try await ScannerCommand.find(address, manager, timeout: .seconds(30))
            console.event("pairing", [("address", .string(address)), ("capability", .string(capability.rawValue))],
                          text: "pairing with \(address) as \(capability.rawValue)")
            try await peripheral.pair(timeout: .seconds(60)).value
            let state = peripheral.pairingState
            console.event("paired", [("address", .string(address)), ("paired", .bool(state.isPaired)), ("bonded", .bool(state.isBonded))],
                          text: "paired with \(address) (bonded: \(state.isBonded))", result: true)
            status = 0
        } catch {
            console.error("pairing with \(address) failed: \(error)")
            status = 1
        }
        // Unregistered before exiting, and awaited (bounded by its own timeout): bluetoothd
        // forgets the agent now rather than when it sees the connection close.
        _ = try? await registration.unregister().value
        return status
    }
}

/// A failure of a central-scanner mode, said in one line.
struct PairModeError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}
