// DeviceFollower: keeps one configured device connected and turns its values into readings.

import BlueCapKit
import ExampleSupport
import Foundation

/// Follows one ``DeviceConfig``:
/// 1. waits for the adapter to be powered on, connects by address
///    (``CentralManager/connect(address:addressType:timeout:)``; the session's connection slots
///    queue it when the adapter is full);
/// 2. follows the link with ``Peripheral/connect(timeoutRetries:disconnectRetries:connectionTimeout:capacity:)``:
///    on `.connect` it discovers, writes `writeOnConnect`, reads and subscribes (every step has
///    the library's deadline: 15 s for discovery, 10 s for each read, write and subscription);
/// 3. when the link drops, or the adapter goes away (bluetoothd restarted, adapter unplugged or
///    powered off), it forgets the peripheral and starts again at 1 a second later (a device
///    object BlueZ dropped with a restart is found again by address);
/// 4. when the set-up fails on a link that is up (discovery does not finish, or not one
///    configured characteristic could be read, written or subscribed), it does not sit on a
///    link that serves nothing: it disconnects and starts again at 1 after a back-off (1 s,
///    doubling to 60 s while set-ups keep failing).
package final class DeviceFollower: Sendable {
    package let device: DeviceConfig
    private let manager: CentralManager
    private let sink: any GatewaySink
    private struct State {
        var stopped = false
        var peripheral: Peripheral?
        var characteristics: [String: Characteristic] = [:]
        var connectionToken: CancelToken?
        var wake: Promise<End>?
    }
    private let state = Guarded(State())

    package init(device: DeviceConfig, manager: CentralManager, sink: any GatewaySink) {
        self.device = device
        self.manager = manager
        self.sink = sink
    }

    /// Starts following (returns at once).
    package func start() {
        Task { await self.run() }
    }

    /// Stops following and disconnects.
    package func stop() {
        let (peripheral, token, wake) = state.withLock { s in
            s.stopped = true
            return (s.peripheral, s.connectionToken, s.wake)
        }
        token?.cancel()
        wake?.success(End(reason: "stopped"))
        peripheral?.terminate()
    }

    private var stopped: Bool { state.withLock { $0.stopped } }

    // MARK: The loop

    private func run() async {
        var backoff: Duration = .seconds(1)
        var setUpBackoff: Duration = .seconds(1)
        while !stopped {
            do { try await manager.whenPoweredOn(timeout: .seconds(3600)).value } catch {
                // No adapter, or the bus is gone: said once by the command; look again later.
                try? await Task.sleep(for: .seconds(5))
                continue
            }
            if stopped { return }
            sink.event("connecting", device.address, [], text: "connecting to \(device.address) (by address)")
            let peripheral: Peripheral
            do {
                peripheral = try await manager.connect(address: device.address, addressType: device.addressType, timeout: .seconds(30)).value
            } catch {
                sink.event("connect-failed", device.address, [("error", .string("\(error)")), ("retryInSeconds", .integer(Int(backoff.components.seconds)))],
                           text: "cannot connect \(device.address): \(error); trying again in \(backoff)")
                try? await Task.sleep(for: backoff)
                backoff = min(backoff * 2, .seconds(60))
                continue
            }
            backoff = .seconds(1)
            let end = await follow(peripheral)
            sink.deviceState(device.address, connected: false)
            var pause: Duration = .seconds(1)
            if end.setUpFailed {
                pause = setUpBackoff
                setUpBackoff = min(setUpBackoff * 2, .seconds(60))
            } else if end.wasFollowing {
                setUpBackoff = .seconds(1)
            }
            sink.event("lost", device.address, [("reason", .string(end.reason)), ("retryInSeconds", .integer(Int(pause.components.seconds)))],
                       text: "\(device.address): \(end.reason); connecting again in \(pause)")
            peripheral.terminate()
            if !stopped { try? await Task.sleep(for: pause) }
        }
    }

    /// How following one link ended.
    private struct End {
        var reason: String
        /// The GATT set-up failed on a link that was up.
        var setUpFailed = false
        /// A set-up had finished before the end.
        var wasFollowing = false
    }

    /// Follows the link until the adapter goes away, the peripheral gives up or a set-up fails;
    /// returns why.
    private func follow(_ peripheral: Peripheral) async -> End {
        let lost = Promise<End>()
        let following = Guarded(false)
        let token = CancelToken()
        let proceed = state.withLock { s -> Bool in
            guard !s.stopped else { return false }
            s.peripheral = peripheral
            s.wake = lost
            return true
        }
        guard proceed else { return End(reason: "stopped") }
        let address = device.address
        let stream = peripheral.connect(connectionTimeout: .seconds(20))
        stream.onSuccess(cancelToken: token) { [self] update in
            switch update.connectionEvent {
            case .connect:
                sink.deviceState(address, connected: true)
                sink.event("connected", address, [("name", .optional(peripheral.name))], text: "connected to \(address)")
                Task {
                    if let failure = await self.setUp(peripheral) {
                        lost.success(End(reason: failure, setUpFailed: true, wasFollowing: following.withLock { $0 }))
                    } else {
                        following.withLock { $0 = true }
                    }
                }
            case .disconnect, .timeout, .giveUp:
                // Connected again by address, as at the start: the device object may be gone
                // too (bluetoothd restarted), which a reconnect of this peripheral cannot mend.
                lost.success(End(reason: "the link dropped (\(update.connectionEvent))", wasFollowing: following.withLock { $0 }))
            case .forceDisconnect:
                break
            }
        }
        stream.onFailure(cancelToken: token) { error in lost.success(End(reason: "the link failed: \(error)", wasFollowing: following.withLock { $0 })) }
        stream.onFinish(cancelToken: token) { lost.success(End(reason: "the connection stream ended", wasFollowing: following.withLock { $0 })) }
        manager.whenStateChanges().onSuccess(cancelToken: token) { [manager] s in
            if s != .poweredOn && manager.state != .poweredOn { lost.success(End(reason: "the adapter is \(s)", wasFollowing: following.withLock { $0 })) }
        }
        let end = (try? await lost.future.value) ?? End(reason: "stopped")
        token.cancel()
        state.withLock { s in
            s.connectionToken?.cancel()
            s.connectionToken = nil
            s.characteristics = [:]
            s.peripheral = nil
            s.wake = nil
        }
        return end
    }

    // MARK: One connection

    /// Discovers, writes, reads and subscribes as configured (each `.connect`); returns why the
    /// set-up failed (the link is then not worth keeping), or nil.
    private func setUp(_ peripheral: Peripheral) async -> String? {
        let token = CancelToken()
        state.withLock { s in
            s.connectionToken?.cancel()
            s.connectionToken = token
        }
        let address = device.address
        do {
            let services = Set(device.characteristics.compactMap(\.service))
            let wantsAll = device.characteristics.contains { $0.service == nil }
            _ = try await peripheral.discoverServices(wantsAll ? nil : Array(services)).value
            for service in peripheral.services where wantsAll || services.contains(service.uuid) {
                _ = try await service.discoverCharacteristics().value
            }
        } catch {
            sink.event("discovery-failed", address, [("error", .string("\(error)"))],
                       text: "\(address): discovery failed: \(error); disconnecting to connect again")
            return "the GATT discovery failed: \(error)"
        }
        var found: [String: Characteristic] = [:]
        var (worked, failed) = (0, 0)
        for config in device.characteristics {
            let services = config.service.map { uuid in peripheral.services.filter { $0.uuid == uuid } } ?? peripheral.services
            guard let ch = services.lazy.compactMap({ $0.characteristic(config.uuid) }).first else {
                sink.event("missing", address, [("characteristic", .string(config.name))],
                           text: "\(address) has no characteristic \(config.uuid.uuidString) (\(config.name)); check the configuration")
                continue
            }
            found[config.name] = ch
            do {
                if let bytes = config.writeOnConnect { _ = try await ch.write(data: bytes).value }
                if config.read {
                    _ = try await ch.read().value
                    if let value = ch.value { sink.reading(address, config, value) }
                }
                if config.notify {
                    _ = try await ch.startNotifying().value
                    ch.receiveNotificationUpdates(capacity: 256).onSuccess(cancelToken: token) { [sink] update in
                        if let data = update.data { sink.reading(address, config, data) }
                    }
                }
                worked += 1
            } catch {
                failed += 1
                sink.event("characteristic-failed", address, [("characteristic", .string(config.name)), ("error", .string("\(error)"))],
                           text: "\(address) \(config.name): \(error)")
            }
        }
        if worked == 0, failed > 0 {
            return "the GATT set-up failed: not one of \(failed) characteristic(s) could be used"
        }
        state.withLock { $0.characteristics = found }
        sink.event("following", address, [("characteristics", .array(found.keys.sorted().map(JSON.string)))],
                   text: "\(address): following \(found.keys.sorted().joined(separator: ", "))")
        return nil
    }

    // MARK: Writes

    /// Writes `request` to the characteristic named `name`, then reads it back when it can be
    /// read; returns the value now on the device (nil when it cannot be read).
    package func write(_ request: SetRequest, to name: String) async throws(SetRefusal) -> Data? {
        guard let config = device.characteristic(named: name) else { throw SetRefusal("no characteristic \(name) is configured for \(device.address)", id: request.id) }
        guard let ch = state.withLock({ $0.characteristics[name] }) else {
            throw SetRefusal("\(device.address) is not connected now; nothing was written", id: request.id)
        }
        do {
            _ = try await ch.write(data: request.bytes).value
            guard ch.properties.contains(.read) else { return nil }
            _ = try await ch.read().value
            if let value = ch.value { sink.reading(device.address, config, value) }
            return ch.value
        } catch {
            throw SetRefusal("the write failed: \(error)", id: request.id)
        }
    }
}
