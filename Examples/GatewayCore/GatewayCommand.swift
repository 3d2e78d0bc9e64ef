// GatewayCommand: ble-gateway, with or without --simulate.

import BlueCapKit
import ExampleSupport
import Foundation

/// The program: reads the options and the configuration, sets up Bluetooth (the system's or a
/// simulated one) and the broker (the given one or, with `--simulate`, a private mosquitto),
/// runs the ``Gateway`` until `--duration` ends or a signal arrives.
package enum GatewayCommand {
    /// Runs the program; returns the exit status.
    package static func run(_ arguments: [String]) async -> Int32 {
        let options: GatewayOptions
        do { options = try GatewayOptions.read(arguments) } catch { return error.status }
        let console = Console(program: GatewayOptions.program, json: options.json)
        var config = GatewayConfig()
        if let path = options.config {
            do { config = try GatewayConfig.load(path) } catch {
                console.error(error.description)
                return UsageError.exitCode
            }
        }

        // Bluetooth: the system's, or the simulated world.
        var simulation: GatewaySimulation?
        let session: BluetoothSession
        if options.simulate {
            do {
                let sim = try await GatewaySimulation.start(loadDevices: options.simulatedDevices, hz: options.notifyHz, console: console)
                simulation = sim
                session = sim.world.session()
                if options.config == nil { config = sim.defaultConfig() }
                config.adapter = "hci0"
                console.event("simulating", [("bus", .string(sim.world.address)), ("sensorTag", .string(sim.sensorTagAddress)),
                                             ("loadDevices", .integer(sim.loadAddresses.count))],
                              text: "simulating: private bus \(sim.world.address), SensorTag \(sim.sensorTagAddress) on hci1, "
                                  + "\(sim.loadAddresses.count) load devices, the gateway on hci0")
            } catch {
                console.error("cannot start the simulation: \(error)")
                return 1
            }
        } else {
            do { session = try await Preflight.systemSession() } catch {
                console.error(error.description)
                return MissingBlueZ.exitCode
            }
        }
        if let p = options.prefix { config.prefix = p }
        if let g = options.gateway { config.gateway = g }
        if let a = options.adapter { config.adapter = a }
        if let q = options.queue { config.queueCapacity = q }

        // The broker: --broker, the file's, a private one with --simulate, else localhost:1883.
        var ownBroker: MosquittoBroker?
        var broker = options.broker ?? config.broker ?? .localhost
        if options.simulate && options.broker == nil && config.broker == nil {
            do {
                let b = try await MosquittoBroker.start()
                ownBroker = b
                broker = b.address
                console.event("broker-started", [("broker", .string(broker.description))],
                              text: "started a private mosquitto on \(broker) (watch it: mosquitto_sub -h 127.0.0.1 -p \(broker.port) -t '\(config.prefix)/#' -v)")
            } catch {
                console.error("cannot start a broker: \(error)")
                await simulation?.stop()
                return 1
            }
        }

        let gateway: Gateway
        do { gateway = try Gateway(config: config, broker: broker, session: session, console: console) } catch {
            console.error("\(error)")
            await simulation?.stop()
            ownBroker?.stop()
            return 1
        }
        let cleanup: @Sendable () async -> Void = { [simulation, ownBroker] in
            gateway.stop()
            gateway.manager.reset()
            await simulation?.stop()
            ownBroker?.stop()
        }
        SignalTrap.shared.onShutdown(cleanup)
        SignalTrap.shared.install()

        console.event("starting", [("broker", .string(broker.description)), ("topics", .string(gateway.topics.base + "/#")),
                                   ("devices", .integer(config.devices.count)), ("patterns", .integer(config.advertisements.count))],
                      text: "gateway \(config.gateway): \(config.devices.count) device(s), \(config.advertisements.count) advertisement pattern(s), "
                          + "publishing under \(gateway.topics.base)/ to \(broker)")
        do {
            if let first = try gateway.start() {
                console.event("broker-unreachable", [("broker", .string(broker.description)), ("error", .string(first.message))],
                              text: "the broker \(broker) is unreachable (\(first.message)): start it (systemctl start mosquitto) "
                                  + "or give --broker HOST:PORT; readings are queued meanwhile and the gateway keeps trying")
            }
        } catch {
            console.error("\(error)")
            await cleanup()
            return 1
        }
        if !options.simulate {
            Task {
                do { _ = try await gateway.manager.whenPoweredOn(timeout: .seconds(10)).value } catch {
                    console.error(ExampleFailure.adapter(gateway.manager.state, adapter: config.adapter).description + " (waiting for it)")
                }
            }
        }
        if let duration = options.duration {
            try? await Task.sleep(for: duration)
            await cleanup()
            return 0
        }
        await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in }
        return 0
    }
}
