// SimulatorCore: what other programs and the peripheral do to a device while a program under test
// uses it: another client's connection, and a GATT database that changes while connected.

/// How bluetoothd shows a connected peripheral's services changing.
public enum ServicesChangeStyle: Sendable, Equatable {
    /// The peripheral indicates Service Changed: the GattService1 objects of the changed services
    /// are removed and the new ones added while `Device1.ServicesResolved` stays true (bluetoothd
    /// 5.55–5.82, src/gatt-client.c `btd_gatt_client_service_removed`/`_added`).
    case serviceChangedIndication
    /// bluetoothd re-resolves the whole database: `ServicesResolved` false, every GATT object
    /// removed and published again, `ServicesResolved` true, with `Connected` true throughout.
    case reresolve
}

extension SimulatorCore {
    // MARK: - Another client

    /// Another program connects the device (its `Device1.Connect`, not one of the bus clients
    /// under test): `Connected` turns true with no Connect of theirs. While the peer's
    /// `connectionDelay` runs the attempt is pending, and a `Device1.Connect` from anyone is
    /// answered `org.bluez.Error.InProgress`, as bluetoothd does. Returns the error BlueZ would
    /// have answered that program, or nil once the attempt is under way (or the link up).
    @discardableResult
    public func connectAsOtherClient(device path: String) -> BlueZErrorReply? {
        var immediate: BlueZErrorReply?
        var answered = false
        connect(device: path) { result in
            answered = true
            if case .failure(let e) = result { immediate = e }
        }
        return answered ? immediate : nil
    }

    // MARK: - Services changing while connected

    /// The peripheral's GATT database changes while it stays connected (a firmware that adds or
    /// removes a service at run time): each adapter's connected device shows it the way `style`
    /// says. Disconnected devices see the new database on their next connection.
    public func changeServicesWhileConnected(_ address: String, _ services: [SimulatedService], style: ServicesChangeStyle) {
        guard let (peer, _) = peripherals[address] else { return }
        let old = peer.database
        peer.replaceServices(services)
        for a in adapters.values {
            guard let d = a.devices[address], d.peer === peer, d.link == .connected, !d.gattPaths.isEmpty else { continue }
            switch style {
            case .serviceChangedIndication:
                // bluetoothd drops the changed range at once and reads it from the device again:
                // the new services come serviceRediscoveryDelay later, on a link still up. Not
                // cancelled by a later change: publishing skips what is published already, so an
                // earlier change's services are never lost to a later one.
                gatt.removeChangedServices(d, old: old)
                let rediscovered: @Sendable () -> Void = { [weak self, weak d] in
                    guard let self, let d, d.link == .connected, d.peer === peer, !d.gattPaths.isEmpty else { return }
                    self.gatt.publishChangedServices(d, old: old, mtu: self.central(for: d).mtu)
                }
                if serviceRediscoveryDelay > .zero {
                    clock.schedule(after: serviceRediscoveryDelay, rediscovered)
                } else {
                    rediscovered()
                }
            case .reresolve:
                setServicesResolved(d, false)
                unpublishGatt(d)
                publishGatt(d)
                setServicesResolved(d, true)
            }
        }
    }
}
