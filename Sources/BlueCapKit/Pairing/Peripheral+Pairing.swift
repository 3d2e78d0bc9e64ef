// Peripheral: pairing, bonding, trust and blocking (org.bluez.Device1), and forgetting the device.
import BlueZ
import DBus
import Foundation
import Futures
import Synchronization

extension Peripheral {
    // MARK: - Bond state

    /// `Device1.Paired`; false once the device object is gone and after ``terminate()`` or
    /// ``forget()`` (see ``pairingState``).
    public var isPaired: Bool { pairingState.isPaired }
    /// `Device1.Bonded`: the keys are stored, later connections encrypt without pairing again;
    /// false once the device object is gone and after ``terminate()`` or ``forget()``.
    public var isBonded: Bool { pairingState.isBonded }
    /// `Device1.Trusted`; false once the device object is gone and after ``terminate()``.
    public var isTrusted: Bool { pairingState.isTrusted }
    /// `Device1.Blocked`; false once the device object is gone and after ``terminate()``.
    public var isBlocked: Bool { pairingState.isBlocked }
    /// `Paired`, `Bonded`, `Trusted` and `Blocked` at once, as true now: BlueZ's values while it
    /// has the device's object and the peripheral is not terminated; none (all false) once the
    /// object is gone (removed, bluetoothd restarted, adapter gone: BlueZ publishes a bonded
    /// device again, and the values come back with it) and after ``terminate()`` or
    /// ``forget()`` (``isTerminated``).
    public var pairingState: PairingState { state.withLock { PairingState($0.current) } }

    /// Each change of ``pairingState`` (a `Device1` PropertiesChanged touching `Paired`,
    /// `Bonded`, `Trusted` or `Blocked`, the device object going or coming back, ``terminate()``);
    /// the last 10 are kept for a late subscriber, older ones dropped. The stream never ends
    /// while the peripheral exists.
    public func whenPairingChanges() -> FutureStream<PairingState> {
        state.withLock { s in
            if let p = s.pairingUpdates { return p.stream }
            let p = StreamPromise<PairingState>(capacity: 10)
            s.pairingUpdates = p
            return p.stream
        }
    }

    /// A `Device1` PropertiesChanged touched the bond state (owner thread).
    func pairingPropertiesChanged() {
        let (updates, current) = state.withLock { ($0.pairingUpdates, PairingState($0.current)) }
        guard let updates else { return }
        context.execute { updates.success(current) }
    }

    // MARK: - Pairing

    /// Pairs with the device: calls `org.bluez.Device1.Pair` (bluetoothd connects first if
    /// needed). The ``PairingAgent`` registered for this manager answers the local side's
    /// requests. Register one first, even for Just Works: with LE Secure Connections the kernel
    /// asks bluetoothd to confirm a Just Works pairing, which it grants itself for a `Pair` in
    /// progress only when the caller has an agent; without one (and no default agent) it refuses,
    /// and the pairing fails with `.authenticationFailed` (bluetoothd 5.66 and 5.82, seen against
    /// a Bumble peer). Succeeds at once when the device is already paired.
    ///
    /// Fails with a ``BlueCapError`` whose kind is BlueZ's reason:
    /// `.authenticationRejected` (our agent said no: bluetoothd reports that as
    /// `AuthenticationFailed`, turned into `.authenticationRejected` here because the library
    /// knows its agent refused; BlueZ's message is kept), `.authenticationCanceled` (our agent or
    /// ``cancelPairing()`` gave up), `.authenticationFailed` (the remote side refused, or the
    /// keys did not match), `.authenticationTimeout`, `.connectionAttemptFailed`, `.alreadyExists`
    /// (paired meanwhile), `.inProgress`; `.timeout` after `timeout`.
    ///
    /// May be called at any time, right after `.connect` too: while the link is up and bluetoothd
    /// is still discovering its services (``servicesResolved`` false), `Pair` waits for that
    /// discovery to end. bluetoothd answers a `Pair` of a connected device through a discovery
    /// request of its own, which it refuses while the connection's discovery runs, and then never
    /// answers the `Pair` (the pairing completes; the caller would wait out its timeout).
    public func pair(timeout: Duration = .seconds(60)) -> Future<Void> {
        if isPaired { return Future(value: ()) }
        guard state.withLock({ $0.resolvingOnLink }) else { return sendPair(timeout: timeout) }
        let promise = Promise<Void>()
        let started = clock.now, clock = self.clock, identifier = self.identifier, context = self.context
        let sent = Atomic<Bool>(false)
        let send: @Sendable () -> Void = { [weak self] in
            guard !sent.exchange(true, ordering: .relaxed) else { return }
            guard let self else {
                return context.execute { promise.failure(PeripheralError(kind: .terminated, operation: Self.pairOperation, path: identifier)) }
            }
            let left = timeout - (clock.now - started)
            self.sendPair(timeout: max(left, .milliseconds(1))).onComplete(context: .immediate) { promise.complete($0) }
        }
        wait(timeout: timeout, check: { [weak self] in
            guard let self else { return true }
            let ready = !self.state.withLock { $0.resolvingOnLink }
            if ready { send() }
            return ready
        }, fail: { error in
            // The link dropped meanwhile: bluetoothd connects again for the Pair. Otherwise
            // (terminated, bluetoothd gone) the pairing cannot happen.
            if error.kind == .disconnected {
                send()
            } else {
                let failure = PeripheralError(kind: error.kind, operation: Self.pairOperation, path: identifier, message: error.message)
                context.execute { promise.failure(failure) }
            }
        }, onTimeout: {
            let failure = PeripheralError(kind: .timeout, operation: Self.pairOperation, path: identifier, timeout: timeout,
                                          message: "bluetoothd's service discovery of the connected device did not end (ServicesResolved stayed false); it answers a Pair only after it")
            context.execute { promise.failure(failure) }
        })
        return promise.future
    }

    private static let pairOperation = "Peripheral.pair (org.bluez.Device1.Pair)"

    /// Calls `org.bluez.Device1.Pair`, mapping our agent's refusals.
    private func sendPair(timeout: Duration) -> Future<Void> {
        let started = clock.now
        let identifier = self.identifier, refusals = session.agentRefusals
        return call(Self.pairOperation, timeout: timeout) { device throws(BlueZError) in
            do throws(BlueZError) {
                try await device.pair(timeout: timeout)
            } catch {
                guard error.kind == .authenticationFailed else { throw error }
                switch refusals.take(device: identifier, since: started) {
                case .rejected?: throw BlueZError(kind: .authenticationRejected, message: "rejected by this process's pairing agent (BlueZ: \(error.message))",
                                                  operation: error.operation, path: error.path)
                case .canceled?: throw BlueZError(kind: .authenticationCanceled, message: "canceled by this process's pairing agent (BlueZ: \(error.message))",
                                                  operation: error.operation, path: error.path)
                case nil: throw error
                }
            }
        }
    }

    /// `pair(timeout:)` with the timeout in seconds (`pair(timeout: 30.0)`).
    public func pair(timeout seconds: TimeInterval) -> Future<Void> { pair(timeout: .seconds(seconds)) }

    /// Calls `org.bluez.Device1.CancelPairing`: a pending `pair(timeout:)` fails with
    /// `AuthenticationCanceled`.
    public func cancelPairing() -> Future<Void> {
        call("Peripheral.cancelPairing (org.bluez.Device1.CancelPairing)", timeout: .seconds(10)) { device throws(BlueZError) in
            try await device.cancelPairing()
        }
    }

    /// Sets `Device1.Trusted`.
    public func trust(_ on: Bool = true) -> Future<Void> {
        call("Peripheral.trust (org.bluez.Device1.Trusted)", timeout: .seconds(5)) { device throws(BlueZError) in
            try await device.setTrusted(on)
        }
    }

    /// Sets `Device1.Blocked` (blocking disconnects the device and refuses its connections).
    public func block(_ on: Bool = true) -> Future<Void> {
        call("Peripheral.block (org.bluez.Device1.Blocked)", timeout: .seconds(5)) { device throws(BlueZError) in
            try await device.setBlocked(on)
        }
    }

    /// Calls `org.bluez.Adapter1.RemoveDevice`: disconnects, and removes the device's object,
    /// bond and cached services from bluetoothd. On success the peripheral is terminated
    /// (``terminate()``: gone from its manager, its operations fail with `.terminated`); a new
    /// scan finds the device again as a new, unpaired ``Peripheral``.
    public func forget() -> Future<Void> {
        removeDevice("Peripheral.forget (org.bluez.Adapter1.RemoveDevice)", timeout: .seconds(10)) { [self] in terminate() }
    }

    /// Calls `org.bluez.Adapter1.RemoveDevice` for the device on its adapter, then `then` once
    /// BlueZ has answered: the one path of ``forget()`` and ``forgetCachedServices(timeout:)``.
    ///
    /// A connected device is disconnected first (``disconnect()``: the connection stream yields
    /// `.forceDisconnect`), and `RemoveDevice` is sent once a `Device1.Disconnect` has been
    /// answered: bluetoothd 5.55 removes a connected device only when its ATT channel closes,
    /// which took 30 s in the VM tier, while a disconnected one goes at once.
    func removeDevice(_ operation: String, timeout: Duration, then: @escaping @Sendable () -> Void) -> Future<Void> {
        let adapterPath = state.withLock { $0.properties.adapter } ?? adapterPath
        let devicePath = path
        let linked = isConnected || state.withLock { $0.properties.connected == true }
        if linked { disconnect() }
        return call(operation, timeout: timeout) { device throws(BlueZError) in
            // BlueZ handles a device's calls in order: this answer comes once the link is down.
            if linked { try await device.disconnect(timeout: timeout) }
            try await Adapter1(connection: device.connection, path: adapterPath).removeDevice(devicePath, timeout: timeout)
            then()
        }
    }

    // MARK: - Calls

    /// Runs one `Device1` call; the future completes on the manager's context with the
    /// failure mapped to a ``PeripheralError`` naming `operation`.
    private func call(_ operation: String, timeout: Duration,
                      _ body: @escaping @Sendable (Device1) async throws(BlueZError) -> Void) -> Future<Void> {
        let promise = Promise<Void>()
        let device = Device1(connection: connection, path: path)
        let context = self.context, identifier = self.identifier
        Task {
            let result: Result<Void, any Error>
            do throws(BlueZError) {
                try await body(device)
                result = .success(())
            } catch {
                result = .failure(PeripheralError(error, operation: operation, path: identifier, timeout: timeout))
            }
            context.execute { promise.complete(result) }
        }
        return promise.future
    }
}
