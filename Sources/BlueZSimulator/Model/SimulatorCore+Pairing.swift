// SimulatorCore+Pairing: AgentManager1, Device1.Pair/CancelPairing, and the encrypted-attribute
// check, as bluetoothd 5.66 + the kernel's SMP behave (seen in the VM tier; see the
// "Real bluetoothd vs the simulator" table in Scripts/bluez-vm/README.md).

// MARK: - Agents

extension SimulatorCore {
    /// `AgentManager1.RegisterAgent(path, capability)`: one agent per connection; "" means
    /// KeyboardDisplay, as in bluetoothd.
    public func registerAgent(owner: String, path: String, capability: String) throws(BlueZErrorReply) {
        let cap: SimulatedIOCapability
        if capability.isEmpty { cap = .keyboardDisplay } else {
            guard let c = SimulatedIOCapability(rawValue: capability) else { throw .invalidArguments }
            cap = c
        }
        guard pairing.agents[owner] == nil else { throw .alreadyExists }
        pairing.agents[owner] = PairingRegistry.Agent(owner: owner, path: path, capability: cap)
    }

    /// `AgentManager1.UnregisterAgent(path)`; the default agent falls back to another one, as in bluetoothd.
    public func unregisterAgent(owner: String, path: String) throws(BlueZErrorReply) {
        guard pairing.agents[owner]?.path == path else { throw .doesNotExist }
        agentGone(owner: owner)
    }

    /// `AgentManager1.RequestDefaultAgent(path)`.
    public func requestDefaultAgent(owner: String, path: String) throws(BlueZErrorReply) {
        guard pairing.agents[owner]?.path == path else { throw .doesNotExist }
        pairing.defaultOwner = owner
    }

    /// The agent's connection left the bus (or it unregistered).
    public func agentGone(owner: String) {
        guard pairing.agents.removeValue(forKey: owner) != nil else { return }
        if pairing.defaultOwner == owner { pairing.defaultOwner = pairing.agents.keys.sorted().first }
    }

    /// The default agent's owner, if any (for tests).
    public var defaultAgentOwner: String? { pairing.defaultOwner }

    /// The SMP timeout: a pairing whose agents or peer do not answer within it fails with
    /// `AuthenticationTimeout` (the kernel's is 30 s).
    public var pairingTimeout: Duration {
        get { pairingTimeoutValue }
        set { pairingTimeoutValue = newValue }
    }
}

// MARK: - Pair

extension SimulatorCore {
    /// `Device1.Pair()` called by `sender`: connects if needed, then runs SMP with the sender's
    /// agent (else the default agent) on our side. Errors as bluetoothd maps mgmt's status:
    /// `AlreadyExists` "Already Paired", `InProgress`, `ConnectionAttemptFailed` "Page Timeout",
    /// `AuthenticationFailed` (an agent or the peer refused, or a wrong passkey),
    /// `AuthenticationTimeout`, `AuthenticationCanceled` (CancelPairing, link lost).
    public func pair(device path: String, sender: String, _ done: @escaping (Result<Void, BlueZErrorReply>) -> Void) {
        guard let device = device(at: path) else { return done(.failure(.doesNotExist)) }
        // bluetoothd 5.82 refuses a Pair while the device's Connect is pending.
        if device.attChannelPending { return done(.failure(.inProgress)) }
        if isPaired(path) { return done(.failure(.bluez("AlreadyExists", "Already Paired"))) }
        guard pairing.attempts[path] == nil else { return done(.failure(.inProgress)) }
        let agent = pairing.agents[sender] ?? pairing.defaultAgent
        let attempt = PairingAttempt(device: path, finish: done)
        pairing.attempts[path] = attempt
        if device.link == .connected {
            // bluetoothd answers a Pair on a connected device through a service-discovery request
            // of its own; while the discovery it starts on each connection runs, that request is
            // refused (busy) and the answer is lost: the pairing completes, the caller hears nothing.
            attempt.answerLostWhileResolving = true
            return runSMP(device, initiator: agent, attempt)
        }
        connect(device: path) { [weak self] result in
            guard let self, self.pairing.attempts[path] === attempt else { return }
            switch result {
            case .success: self.runSMP(device, initiator: agent, attempt)
            case .failure: self.endPairing(attempt, .failure(.bluez("ConnectionAttemptFailed", "Page Timeout")))
            }
        }
    }

    /// `Device1.CancelPairing()`: the pairing in progress fails with `AuthenticationCanceled`.
    public func cancelPairing(device path: String) throws(BlueZErrorReply) {
        guard let attempt = pairing.attempts[path] else { throw .doesNotExist }
        endPairing(attempt, .failure(.bluez("AuthenticationCanceled", "Authentication Canceled")))
    }

    /// Whether the device object says Paired.
    func isPaired(_ path: String) -> Bool { store.property(path, "org.bluez.Device1", "Paired") == .bool(true) }

    /// The SMP exchange on a connected link; `initiator` is our side's agent.
    func runSMP(_ device: DeviceState, initiator: PairingRegistry.Agent?, _ attempt: PairingAttempt) {
        let spec = (device.peer as? PeripheralPeer)?.spec.pairing
        let adapterPeer = device.peer as? AdapterPeer
        let responderAgent = adapterPeer != nil ? pairing.defaultAgent : nil
        let mirror = adapterPeer.map { BlueZPath.device(adapter: $0.index, address: adapters[device.adapter]?.address ?? "") }
        switch spec?.behavior {
        case .reject?: return endPairing(attempt, .failure(.bluez("AuthenticationFailed", "Authentication Failed")), dropLink: device)
        case .neverAnswer?: return armTimeout(attempt, device)
        default: break
        }
        // A responder with no agent cannot be asked: bluetoothd refuses ("No agent available").
        let responderCap = spec?.capability ?? responderAgent?.capability ?? .noInputNoOutput
        let method = PairingMethod(initiator: initiator?.capability ?? .noInputNoOutput, responder: responderCap)
        let passkey = spec?.passkey ?? pairing.drawPasskey()
        var calls: [(PairingRegistry.Agent?, SimulatedAgentCall, expected: UInt32?)] = []
        switch method {
        case .justWorks:
            if let mirror { calls.append((responderAgent, .requestAuthorization(device: mirror), nil)) }
        case .numericComparison:
            calls.append((initiator, .requestConfirmation(device: device.path, passkey: passkey), nil))
            if let mirror { calls.append((responderAgent, .requestConfirmation(device: mirror, passkey: passkey), nil)) }
        case .passkeyEntry(let initiatorInputs, let responderInputs):
            calls.append((initiator, initiatorInputs ? .requestPasskey(device: device.path)
                                                     : .displayPasskey(device: device.path, passkey: passkey, entered: 0), passkey))
            if let mirror {
                calls.append((responderAgent, responderInputs ? .requestPasskey(device: mirror)
                                                              : .displayPasskey(device: mirror, passkey: passkey, entered: 0), passkey))
            }
        }
        armTimeout(attempt, device)
        var outstanding = calls.count
        if outstanding == 0 { return bond(device, mirror: mirror, attempt) }
        for (agent, call, expected) in calls {
            guard let agent, let bridge = bridge as? AgentBridge else {
                return endPairing(attempt, .failure(.bluez("AuthenticationFailed", "Authentication Failed")), dropLink: device)
            }
            attempt.waitingOn.append(agent)
            let queue = self.queue
            let answer = UncheckedBox { [weak self] (a: SimulatedAgentAnswer) in
                guard let self, self.pairing.attempts[attempt.device] === attempt else { return }
                // An agent whose call timed out still has the request open: it stays among those
                // the SMP timeout cancels (whichever of the two timeouts fires first).
                if case .noReply = a { return }
                attempt.waitingOn.removeAll { $0 == agent }
                switch (a, call) {
                case (.accepted(let key?), .requestPasskey) where key != expected:
                    self.endPairing(attempt, .failure(.bluez("AuthenticationFailed", "Authentication Failed")), dropLink: device)
                case (.accepted, _):
                    outstanding -= 1
                    if outstanding == 0 { self.bond(device, mirror: mirror, attempt) }
                case (.refused, _):
                    self.endPairing(attempt, .failure(.bluez("AuthenticationFailed", "Authentication Failed")), dropLink: device)
                case (.noReply, _):
                    break  // handled above: the SMP timeout ends the attempt
                }
            }
            if case .displayPasskey = call {
                // No answer is awaited (bluetoothd ignores DisplayPasskey's reply).
                bridge.callAgent(owner: agent.owner, path: agent.path, call, timeout: pairingTimeout) { _ in }
                queue.async { answer.value(.accepted(passkey: nil)) }
                continue
            }
            bridge.callAgent(owner: agent.owner, path: agent.path, call, timeout: pairingTimeout) { a in
                queue.async { answer.value(a) }
            }
        }
    }

    private func armTimeout(_ attempt: PairingAttempt, _ device: DeviceState) {
        attempt.timeout?.cancel()
        attempt.timeout = clock.schedule(after: pairingTimeout) { [weak self] in
            guard let self, self.pairing.attempts[attempt.device] === attempt else { return }
            self.endPairing(attempt, .failure(.bluez("AuthenticationTimeout", "Authentication Timeout")), dropLink: device)
        }
    }

    /// Success: Paired and Bonded on our device object and on the peer's object for us.
    private func bond(_ device: DeviceState, mirror: String?, _ attempt: PairingAttempt) {
        (device.peer as? PeripheralPeer)?.bondLost = false
        device.isEncrypted = true
        store.update(device.path, "org.bluez.Device1", pairedProperties)
        if let identity = device.peer?.identity, identity != device.address {
            // The peer handed over its IRK and identity: bluetoothd states the identity from now
            // on; the object path keeps the private address.
            adapters[device.adapter]?.bondedIdentities[identity] = device.address
            store.update(device.path, "org.bluez.Device1", ["Address": .string(identity), "AddressType": .string("public")])
        }
        if let mirror, store.contains(mirror) {
            store.update(mirror, "org.bluez.Device1", pairedProperties)
        }
        if attempt.answerLostWhileResolving, device.link == .connected, !device.servicesResolved {
            _ = unlist(attempt)
            // The call stays unanswered (its caller's timeout ends it); the responder is released
            // (answering Failed) only long after, when no caller waits any more.
            // (the attempt, no longer listed, is only held: on the simulator's queue, as all of it).
            _ = clock.schedule(after: pairingTimeout * 4) { _ = attempt }
            return
        }
        endPairing(attempt, .success(()))
    }

    /// Ends `attempt` with `result`: agents still asked get `Cancel`; a failed SMP exchange makes
    /// the kernel drop the link (`dropLink`).
    func endPairing(_ attempt: PairingAttempt, _ result: Result<Void, BlueZErrorReply>, dropLink device: DeviceState? = nil) {
        guard unlist(attempt) else { return }
        if case .failure = result, let bridge = bridge as? AgentBridge {
            for agent in attempt.waitingOn { bridge.cancelAgent(owner: agent.owner, path: agent.path) }
        }
        attempt.waitingOn.removeAll()
        if let device, device.link == .connected { linkLost(device, reason: nil) }
        let finish = attempt.finish
        attempt.finish = nil
        finish?(result)
    }

    /// Takes `attempt` off the list of pairings in progress and stops its timeout; false when it
    /// was no longer listed (ended already).
    private func unlist(_ attempt: PairingAttempt) -> Bool {
        guard pairing.attempts[attempt.device] === attempt else { return false }
        pairing.attempts[attempt.device] = nil
        attempt.timeout?.cancel()
        return true
    }
}

// MARK: - Encrypted attributes

extension SimulatorCore {
    /// Whether the attribute's Flags need an encrypted link for this access.
    static func needsEncryption(_ flags: [String], write: Bool) -> Bool {
        let op = write ? "-write" : "-read"
        return flags.contains { ($0.hasPrefix("encrypt-") || $0.hasPrefix("secure-")) && $0.hasSuffix(op) }
    }

    /// Runs `access` once the link may carry it: a bonded device's link is encrypted with its keys
    /// (unless the peer lost them: the link drops); an unpaired one is paired first, as
    /// bluetoothd does on Insufficient Encryption (the default agent answers our side). A failed
    /// pairing drops the link and the access fails with `Failed` "Operation failed with ATT error: 0x0e".
    /// A peripheral whose `bluetoothdPairsItself` is false is refused with `NotPermitted` "Not paired".
    func securing(_ device: DeviceState, flags: [String], write: Bool, _ fail: @escaping (BlueZErrorReply) -> Void,
                  _ access: @escaping () -> Void) {
        guard Self.needsEncryption(flags, write: write), !device.isEncrypted else { return access() }
        let unlikely = BlueZErrorReply.failed("Operation failed with ATT error: 0x0e")
        if isPaired(device.path) {
            if (device.peer as? PeripheralPeer)?.bondLost == true {
                linkLost(device, reason: nil)
                return fail(unlikely)
            }
            device.isEncrypted = true
            return access()
        }
        if (device.peer as? PeripheralPeer)?.spec.pairing.bluetoothdPairsItself == false {
            return fail(.notPermitted("Not paired"))
        }
        guard pairing.attempts[device.path] == nil else { return fail(.inProgress) }
        let attempt = PairingAttempt(device: device.path) { [weak device] result in
            switch result {
            case .success:
                device?.isEncrypted = true
                access()
            case .failure: fail(unlikely)
            }
        }
        pairing.attempts[device.path] = attempt
        runSMP(device, initiator: pairing.defaultAgent, attempt)
    }
}

// MARK: - Faults

extension SimulatorCore {
    /// Fault: the spec'd peripheral at `address` forgets its bond with us. Our device stays
    /// Paired; the next encrypted access drops the link and fails, until the app forgets the
    /// device (`Adapter1.RemoveDevice`) and pairs again.
    public func loseBond(peripheral address: String) {
        peripherals[address.uppercased()]?.peer.bondLost = true
    }
}

// MARK: - Pairing without an agent

extension SimulatorCore {
    /// `Device1.Pair()`: LE Just Works; Paired and Bonded turn true. Needs a connection or a reachable peer.
    public func pair(device path: String, _ done: @escaping (Result<Void, BlueZErrorReply>) -> Void) {
        guard let device = device(at: path) else { return done(.failure(.doesNotExist)) }
        if store.property(path, "org.bluez.Device1", "Paired") == .bool(true) { return done(.failure(.alreadyExists)) }
        guard device.link == .connected || reachable(device) != nil else {
            return done(.failure(.failed("Page Timeout")))
        }
        store.update(path, "org.bluez.Device1", pairedProperties)
        done(.success(()))
    }
}

// MARK: - Bond properties

extension SimulatorCore {
    /// Device1's properties once paired: `Paired`, and `Bonded` where the release has it (5.65+).
    var pairedProperties: [String: PropertyValue?] {
        profile.deviceBonded ? ["Paired": .bool(true), "Bonded": .bool(true)] : ["Paired": .bool(true)]
    }
}
