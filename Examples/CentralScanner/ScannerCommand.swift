// ScannerCommand: central-scanner's two modes, with or without --simulate.

import BlueCapKit
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
import ExampleSupport
#endif

enum ScannerCommand {
    /// Runs the program; returns the exit status.
    static func run(_ arguments: [String]) async -> Int32 {
        let options: ScannerOptions
        do { options = try ScannerOptions.read(arguments) } catch { return error.status }
        let console = Console(program: ScannerOptions.program, json: options.json)
        if options.doctor { return await DoctorMode.run(options, console) }

        // The bus: the system bus, or a private one with a simulated bluetoothd.
        var world: SimulatedWorld?
        var sensorTag: SensorTagPeripheral?
        var l2capEcho: L2CAPPublication?
        let session: BluetoothSession
        var adapter = options.adapter
        if options.simulate {
            do {
                let w = try await SimulatedWorld.start(neighbours: !options.accelerometer)
                world = w
                session = w.session()
                adapter = adapter ?? "hci0"
                let other = adapter == "hci1" ? "hci0" : "hci1"
                let tag = SensorTagPeripheral(manager: PeripheralManager(adapter: other, session: w.session()),
                                              name: "SensorTag", console: console.background("simulated SensorTag (\(other)): "))
                sensorTag = tag
                let tagAddress = w.simulator.adapterAddress(other == "hci0" ? 0 : 1) ?? "?"
                console.event("simulating", [("bus", .string(w.address)), ("adapter", .string(adapter!)), ("peripheralAdapter", .string(other)),
                                             ("peripheralAddress", .string(tagAddress))],
                              text: "simulating: private bus \(w.address), central on \(adapter!), SensorTag on \(other) (\(tagAddress))")
                _ = try await tag.start().value
                // With --l2cap: the simulated peripheral publishes the echo on the PSM asked for.
                if options.l2cap != nil, let psm = options.psm {
                    l2capEcho = try await L2CAPEcho.serve(tag.manager, psm: psm, console: console.background("simulated SensorTag (\(other)): "))
                }
            } catch {
                console.error("cannot start the simulation: \(error)")
                world?.stop()
                return 1
            }
        } else {
            do { session = try await Preflight.systemSession() } catch {
                console.error(error.description)
                return MissingBlueZ.exitCode
            }
        }

        let manager = CentralManager(adapter: adapter, session: session)
        let cleanup: @Sendable () async -> Void = { [world, sensorTag] in
            manager.reset()
            await sensorTag?.shutdown()
            world?.stop()
        }

        // Without --simulate: a clear message when no adapter is usable.
        if !options.simulate, !options.listAdapters {
            do { _ = try await manager.whenPoweredOn(timeout: .seconds(10)).value } catch {
                console.error(ExampleFailure.adapter(manager.state, adapter: adapter).description)
                await cleanup()
                return MissingBlueZ.exitCode
            }
        }

        let status: Int32
        if let address = options.pair {
            // The simulated SensorTag side needs a default agent that lets us pair (kept
            // registered until we are done: releasing it removes the agent).
            var tagAgent: PairingAgentRegistration?
            if let tag = sensorTag {
                let agent = PairingAgent(capability: .noInputNoOutput, delegate: PairingHandlers.autoAccept())
                tagAgent = try? await agent.register(for: tag.manager).value
            }
            status = await PairMode.run(manager, address: address, options, console)
            _ = try? await tagAgent?.unregister().value
        } else if let address = options.l2cap {
            status = await L2CAPMode.run(manager, address: address, options, console)
        } else if let address = options.connect {
            status = await ConnectMode.run(manager, address: address, options, console)
        } else if options.listAdapters {
            status = await listAdapters(session, console)
        } else if options.accelerometer {
            status = await accelerometer(manager, options, console, cleanup: cleanup)
        } else if !options.passive.isEmpty {
            status = await passive(manager, options, console, cleanup: cleanup)
        } else if options.allAdapters {
            status = await scanAll(session, options, console, cleanup: cleanup)
        } else {
            status = await scan(manager, options, console, cleanup: cleanup)
        }
        l2capEcho?.unpublish()
        await cleanup()
        return status
    }

    // MARK: - Accelerometer mode

    static func accelerometer(_ manager: CentralManager, _ options: ScannerOptions, _ console: Console,
                              cleanup: @escaping @Sendable () async -> Void) async -> Int32 {
        let central = AccelerometerCentral(manager: manager, console: console, periodMs: options.periodMs,
                                           transport: options.startNotify ? .propertiesChanged : .acquiredSocket)
        SignalTrap.shared.onShutdown {
            reportDrops(central, console)
            await central.stop()
            await cleanup()
        }
        SignalTrap.shared.install()
        let done = Promise<Int32>()
        let counter = SampleCounter(limit: options.samples)
        let samples = central.samples()
        samples.onSuccess { sample in
            let n = counter.next()
            guard n > 0 else { return }
            console.event("sample", [("x", .number(sample.x)), ("y", .number(sample.y)), ("z", .number(sample.z))],
                          text: "sample \(n): x \(grams(sample.x)) g  y \(grams(sample.y)) g  z \(grams(sample.z)) g", result: true)
            if n == options.samples { done.success(0) }
        }
        samples.onFailure { error in
            if error is AccelerometerCentral.GaveUp {
                console.error("\(error)")
                done.success(1)
            } else if let e = error as? PeripheralError, e.operation.hasPrefix("Peripheral.connect") {
                console.event("error", [("message", .string(e.description))], text: "connect failed: \(e)")
                central.connectFailed(e)
            } else {
                console.event("error", [("message", .string("\(error)"))], text: "\(error)")
            }
        }
        samples.onFinish { done.success(1) }
        let status = (try? await done.future.value) ?? 1
        reportDrops(central, console)
        await central.stop()
        return status
    }

    /// Prints the data characteristic's notification counts when notifications were dropped
    /// (``Characteristic/notificationCounts``): `{"event":"notificationCounts","received":…,
    /// "delivered":…,"dropped":…,"droppedBy":{"<rule>":n},"held":…}`.
    static func reportDrops(_ central: AccelerometerCentral, _ console: Console) {
        typealias Accelerometer = AccelerometerCentral.Accelerometer
        guard let data = central.peripheral?.service(Accelerometer.uuid)?.characteristic(Accelerometer.Data.uuid) else { return }
        let counts = data.notificationCounts
        guard counts.dropped > 0 else { return }
        let rules = NotificationDropRule.allCases.filter { counts.dropped(by: $0) > 0 }
        console.event("notificationCounts", [
            ("received", .integer(counts.received)), ("delivered", .integer(counts.delivered)),
            ("dropped", .integer(counts.dropped)),
            ("droppedBy", .object(rules.map { ($0.rawValue, .integer(counts.dropped(by: $0))) })),
            ("held", .integer(counts.held)),
        ], text: "notifications dropped: \(counts)")
    }
}
