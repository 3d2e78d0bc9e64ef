// SimulatorCore+World: simulated peripherals in range of adapters, their notifications, and the
// radio faults (notification bursts, scan storms).

import Foundation

// MARK: - Simulated peripherals

extension SimulatorCore {
    /// Puts a spec'd peripheral in range of `adapters` (nil: all); scanning adapters see it at once.
    public func addPeripheral(_ spec: SimulatedPeripheral, inRangeOf range: Set<Int>? = nil) {
        removePeripheral(spec.address)
        let peer = PeripheralPeer(spec: spec)
        peripherals[spec.address] = (peer, range)
        reportEverywhere(peer, range: range)
    }

    /// Takes a peripheral out of the world (connected links drop; device objects remain as in BlueZ).
    public func removePeripheral(_ address: String) {
        guard let (peer, _) = peripherals.removeValue(forKey: address) else { return }
        dropLinks(of: peer, on: adapters.values)
        monitorsRefresh()
    }

    /// The remote drops every link `peer` has with `adapters` (each device of its: a peer that
    /// uses privacy may have one per private address), as on a supervision timeout.
    private func dropLinks(of peer: PeripheralPeer, on adapters: some Sequence<AdapterState>) {
        for a in adapters {
            for d in a.devices.values where d.peer === peer && d.link != .disconnected {
                linkLost(d, reason: .failed("le-connection-abort-by-remote"))
            }
        }
    }

    /// A peripheral that uses privacy (``SimulatedPeripheral/usesPrivacy``, `identity` its
    /// address) changes its resolvable private address; scanning adapters get a report from it.
    public func rotatePrivateAddress(of identity: String) {
        guard let (peer, range) = peripherals[identity.uppercased()] else { return }
        peer.rotations += 1
        reportEverywhere(peer, range: range)
    }

    /// Changes a peripheral (RSSI, name, advertised data…); scanning adapters get a report.
    public func updatePeripheral(_ address: String, _ change: (inout SimulatedPeripheral) -> Void) {
        guard let (peer, range) = peripherals[address] else { return }
        peer.update(change)
        reportEverywhere(peer, range: range)
    }

    /// A firmware update: the peripheral reboots (its links drop, as on a supervision timeout)
    /// and comes back with `services` (new handles, so new GATT object paths on the next
    /// connection, some of which may reuse old paths for other attributes).
    public func replaceServices(_ address: String, _ services: [SimulatedService]) {
        guard let (peer, _) = peripherals[address] else { return }
        dropLinks(of: peer, on: adapters.values)
        peer.replaceServices(services)
    }

    /// Moves a peripheral in or out of range; out of range drops its links.
    public func setRange(_ address: String, adapters range: Set<Int>?) {
        guard let (peer, _) = peripherals[address] else { return }
        peripherals[address] = (peer, range)
        dropLinks(of: peer, on: self.adapters.values.filter { !(range?.contains($0.index) ?? true) })
        reportEverywhere(peer, range: range)
        monitorsRefresh()
    }

    /// The stored value of a peripheral's characteristic.
    public func peripheralValue(_ address: String, characteristic uuid: String) -> Data? {
        guard let peer = peripherals[address]?.peer, let u = BluetoothUUID.normalize(uuid),
              let c = peer.database.characteristic(uuid: u) else { return nil }
        return Data(peer.value(handle: c.valueHandle))
    }

    /// The peripheral notifies `value` on characteristic `uuid`; returns how many centrals got it.
    @discardableResult
    public func notify(peripheral address: String, characteristic uuid: String, value: Data) -> Int {
        guard let peer = peripherals[address]?.peer, let u = BluetoothUUID.normalize(uuid),
              let c = peer.database.characteristic(uuid: u) else { return 0 }
        let bytes = [UInt8](value)
        peer.setValue(bytes, handle: c.valueHandle)
        return deliverNotification(from: peer, valueHandle: c.valueHandle, value: bytes)
    }

    // MARK: Faults: bursts and storms

    /// Fault: `count` notifications on one characteristic as fast as possible (value i is
    /// `value(i)`). Targets are resolved once; returns the number of deliveries made.
    @discardableResult
    public func burst(peripheral address: String, characteristic uuid: String, count: Int,
                      value: (Int) -> [UInt8]) -> Int {
        guard let (peer, handle) = notifyingCharacteristic(address, uuid) else { return 0 }
        let targets = notificationTargets(address, peer, handle)
        var delivered = 0
        for i in 0..<count { delivered += targets.send(value(i)) }
        if count > 0 {
            targets.settle(value(count - 1))
            peer.setValue(value(count - 1), handle: handle)
        }
        return delivered
    }

    /// The peripheral at `address` and the value handle of its characteristic `uuid`.
    func notifyingCharacteristic(_ address: String, _ uuid: String) -> (PeripheralPeer, UInt16)? {
        guard let peer = peripherals[address]?.peer, let u = BluetoothUUID.normalize(uuid),
              let c = peer.database.characteristic(uuid: u) else { return nil }
        return (peer, c.valueHandle)
    }

    /// Where a value of `peer`'s characteristic `handle` goes now: every adapter connected to it
    /// with an acquired socket or a StartNotify session on it.
    func notificationTargets(_ address: String, _ peer: PeripheralPeer, _ handle: UInt16) -> NotificationTargets {
        var sockets: [AcquiredSocket] = []
        var paths: [String] = []
        for a in adapters.values {
            guard let d = a.devices[address], d.peer === peer, d.link == .connected else { continue }
            if let s = d.acquiredNotify[handle] { sockets.append(s) }
            else if !(d.notifySessions[handle]?.isEmpty ?? true), let p = characteristicPath(d, handle) { paths.append(p) }
        }
        return NotificationTargets(sockets: sockets, paths: paths, emitters: burstEmitter.map { paths.map($0) }, store: store)
    }

    /// Fault: `devices` peripherals (random-static addresses) in range of `adapters`, each changing
    /// RSSI `hz` times a second — one timer, one batch per tick. Replaces any running storm.
    public func startRSSIStorm(devices: Int, hz: Double, adapters range: Set<Int>? = nil) {
        stopRSSIStorm()
        for n in 0..<devices {
            let spec = SimulatedPeripheral.spec(address: BluetoothAddress.storm(n)).addressType(.random)
                .name("storm-\(n)").rssi(-50 - Int16(n % 40))
            peripherals[spec.address] = (PeripheralPeer(spec: spec), range)
        }
        for n in 0..<devices { if let p = peripherals[BluetoothAddress.storm(n)] { reportEverywhere(p.peer, range: range) } }
        let interval = Duration.nanoseconds(Int64(1e9 / max(hz, 0.001)))
        storm = clock.repeating(every: interval) { [weak self] in
            guard let self else { return }
            self.stormTick += 1
            let swing: Int16 = self.stormTick % 2 == 0 ? 0 : -10
            for n in 0..<devices {
                guard let (peer, r) = self.peripherals[BluetoothAddress.storm(n)] else { continue }
                peer.update { $0.rssi = -50 - Int16(n % 40) + swing }
                self.reportEverywhere(peer, range: r)
            }
        }
    }

    /// Stops the storm timer (the storm's devices stay in range).
    public func stopRSSIStorm() {
        storm?.cancel()
        storm = nil
    }

    // MARK: Restart

    /// bluetoothd restarts: everything is forgotten (no signals: the bus sees the name owner go),
    /// then `/org/bluez` and `adapters` fresh adapters are published again. Peripherals stay.
    public func restart(adapters count: Int) {
        stopRSSIStorm()
        stopNotifyPace()
        pairing = PairingRegistry()
        for a in adapters.values {
            for d in a.devices.values {
                d.connectWork?.cancel()
                d.temporaryWork?.cancel()
                for s in d.acquiredNotify.values { s.close() }
                for s in d.acquiredWrite.values { s.close() }
            }
        }
        for app in monitorApps.values { app.cancelTimers() }
        monitorApps.removeAll()
        adapters.removeAll()
        adapterPeers.removeAll()
        gatt.removeAll()
        store.reset()
        start(adapters: count)
    }
}
