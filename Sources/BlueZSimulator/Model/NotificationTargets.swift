// NotificationTargets: where one characteristic's notifications go, resolved once for a run of
// values (a burst, a paced source): the acquired sockets and the StartNotify sessions' objects.

// MARK: - NotificationTargets

/// The connected centrals a peripheral characteristic's values reach: an acquired socket each,
/// or the characteristic object whose `Value` PropertiesChanged a StartNotify session receives.
/// Resolved once, so each value costs only its sends.
struct NotificationTargets {
    let sockets: [AcquiredSocket]
    let paths: [String]
    /// One signal emitter per path straight to the bus (nil: through the store, which signals).
    let emitters: [([UInt8]) -> Void]?
    let store: ObjectStore

    /// Sends one value to every target; returns the deliveries made (a socket that stays full
    /// for its timeout, or is closed, is not counted).
    func send(_ bytes: [UInt8]) -> Int {
        var delivered = 0
        for s in sockets where s.sendWaiting(bytes) { delivered += 1 }
        if let emitters {
            for emit in emitters { emit(bytes) }
            delivered += emitters.count
        } else {
            for p in paths {
                store.set(p, "org.bluez.GattCharacteristic1", "Value", .bytes(bytes), force: true)
                delivered += 1
            }
        }
        return delivered
    }

    /// After the last value: emitted signals bypassed the store, so its `Value` is set (silently) to it.
    func settle(_ last: [UInt8]) {
        guard emitters != nil else { return }
        for p in paths { store.setSilently(p, "org.bluez.GattCharacteristic1", "Value", .bytes(last)) }
    }
}
