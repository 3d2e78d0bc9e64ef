// PeripheralCommand: accelerometer-peripheral, with or without --simulate.

import BlueCapKit
import Foundation
import ExampleSupport

enum PeripheralCommand {
    /// Runs until a signal (SignalTrap exits the process), or returns a failure status.
    static func run(_ arguments: [String]) async -> Int32 {
        let options: PeripheralOptions
        do { options = try PeripheralOptions.read(arguments) } catch { return error.status }
        let console = Console(program: PeripheralOptions.program, json: options.json)

        var world: SimulatedWorld?
        let session: BluetoothSession
        var adapter = options.adapter
        if options.simulate {
            do {
                let w = try await SimulatedWorld.start(neighbours: false)
                world = w
                session = w.session()
                adapter = adapter ?? "hci1"
                console.event("simulating", [("bus", .string(w.address)), ("adapter", .string(adapter!)),
                                             ("centralAdapter", .string(adapter == "hci0" ? "hci1" : "hci0"))],
                              text: "simulating: private bus \(w.address), SensorTag on \(adapter!), central on \(adapter == "hci0" ? "hci1" : "hci0")")
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

        let tag = SensorTagPeripheral(manager: PeripheralManager(adapter: adapter, session: session),
                                      name: options.name, console: console, secure: options.secure)
        // With --secure: the default agent, so that centrals can pair with us (Just Works).
        var agent: PairingAgentRegistration?
        if options.secure {
            let pairing = PairingAgent(capability: .noInputNoOutput, delegate: PairingHandlers.autoAccept())
            pairing.whenRequested().onSuccess { request in
                console.event("pairing", [("device", .string(request.device.address)), ("request", .string("\(request.kind)"))],
                              text: "pairing: \(request.kind) from \(request.device.address), accepted")
            }
            do { agent = try await pairing.register(for: tag.manager).value } catch {
                console.error("cannot register the pairing agent: \(error) (registering needs permission to call org.bluez: root or the bluetooth group)")
                world?.stop()
                return 1
            }
        }
        let pairingAgent = agent
        // With --simulate, the other role: a central on the other adapter that connects, enables
        // and subscribes (started once the service is advertised).
        var simulatedCentral: AccelerometerCentral?
        if let world {
            let other = adapter == "hci0" ? "hci1" : "hci0"
            simulatedCentral = AccelerometerCentral(manager: CentralManager(adapter: other, session: world.session()),
                                                    console: console.background("simulated central (\(other)): "), periodMs: 100)
        }
        let central = simulatedCentral
        SignalTrap.shared.onShutdown { [world] in
            console.event("stopping", text: "stopping: unregistering the advertisement and the service")
            await central?.stop()
            _ = try? await pairingAgent?.unregister().value
            await tag.shutdown()
            world?.stop()
        }
        SignalTrap.shared.install()

        do { _ = try await tag.start().value } catch {
            if let failure = error as? ExampleFailure {
                console.error(failure.description)
                world?.stop()
                return MissingBlueZ.exitCode
            }
            console.error("cannot serve the accelerometer: \(error)")
            world?.stop()
            return 1
        }

        // With --l2cap: an echo channel (kept published until the process ends).
        var publication: L2CAPPublication?
        if options.l2cap {
            do { publication = try await L2CAPEcho.serve(tag.manager, console: console) } catch {
                console.error("cannot publish the L2CAP channel: \(error)")
                await tag.shutdown()
                world?.stop()
                return 1
            }
        }
        let psmPublished = publication
        if let central {
            let publication = psmPublished
            let counter = SampleCounter(limit: nil)
            central.samples().onSuccess { _ in
                let n = counter.next()
                // With --l2cap: once the simulated central is connected, it opens the echo channel.
                if n == 1, let psm = publication?.psm, let peripheral = central.peripheral {
                    Task { await echoOnce(peripheral, psm: psm, central.console) }
                }
                if n % 10 == 0 { central.console.event("received", text: "\(n) samples received") }
            }
        }
        // Serve until SIGINT/SIGTERM: SignalTrap runs the cleanups and exits.
        await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in }
        withExtendedLifetime(publication) {}
        return 0
    }

    /// The simulated central's L2CAP echo of 4 kB (accelerometer-peripheral --simulate --l2cap).
    static func echoOnce(_ peripheral: Peripheral, psm: UInt16, _ console: Console) async {
        do {
            let r = try await L2CAPEcho.run(peripheral, psm: psm, bytes: 4096)
            console.event("l2cap-echo", [("psm", .integer(Int(psm))), ("bytes", .integer(r.bytes)), ("matched", .bool(r.matched))],
                          text: "L2CAP echo on PSM \(psm): \(r.bytes) bytes \(r.matched ? "came back intact" : "came back different")")
        } catch {
            console.error("L2CAP echo on PSM \(psm) failed: \(error)")
        }
    }
}
