// GatewayTestWorld: the in-process gateway tests' world — a real mosquitto, a subscriber to
// everything, a simulated bluetoothd with the given devices and faults, and the gateway.
import BlueCapKit
import BlueZSimulator
import ExampleSupport
import Foundation
import GatewayCore
import TestSupport

/// Starts a broker, a subscriber to `bluecap/#`, a simulated bluetoothd (one adapter) holding
/// `peripherals` with `faults` injected, and a ``Gateway`` with `config`; runs `body`, then
/// stops everything.
func withGatewayWorld(_ config: GatewayConfig, peripherals: [SimulatedPeripheral], faults: [MethodFault] = [],
                      _ body: (BlueZSimulator, MQTTWatcher, Gateway) async throws -> Void) async throws {
    let broker = try await MosquittoBroker.start()
    defer { broker.stop() }
    let watcher = try MQTTWatcher(broker.address, filters: ["bluecap/#"])
    defer { watcher.close() }
    try await watcher.connected()
    let bus = try TestBus()
    defer { bus.stop() }
    let simulator = try await BlueZSimulator.start(busAddress: bus.address, adapters: 1)
    defer { simulator.stop() }
    for p in peripherals { simulator.add(p) }
    for fault in faults { simulator.inject(fault) }
    let gateway = try Gateway(config: config, broker: broker.address, session: simulator.session(),
                              console: Console(program: "ble-gateway", json: false, verbose: false))
    defer { gateway.stop() }
    try gateway.start()
    try await body(simulator, watcher, gateway)
}
