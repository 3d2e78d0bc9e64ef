// PairingAgentRegistration: a registered PairingAgent, kept registered across bluetoothd restarts.
import BlueZ
import DBus
import Futures
import Locking

/// A ``PairingAgent`` registered with bluetoothd. ``unregister()`` calls
/// `org.bluez.AgentManager1.UnregisterAgent` and removes the object; releasing the registration
/// removes the object too. When bluetoothd restarts (a new owner of `org.bluez`), the agent is
/// registered again with the new bluetoothd (and made default again if it was), and only the
/// new owner may call it.
public final class PairingAgentRegistration: Sendable {
    /// The agent.
    public let agent: PairingAgent
    let handle: AgentHandle
    let tree: ObjectTree
    private struct State {
        var owner: String?
        var observation: ObjectTreeObservation?
        var unregistered = false
    }
    // Sendable through this lock; no call is made while holding it.
    private let state: Locked<State>

    init(agent: PairingAgent, handle: AgentHandle, tree: ObjectTree, owner: String) {
        self.agent = agent
        self.handle = handle
        self.tree = tree
        state = Locked(State(owner: owner))
        let observation = tree.observe { [weak self] event in
            if case .ownerChanged(let owner) = event { self?.ownerChanged(owner) }
        }
        let keep = state.withLock { s -> Bool in
            if s.unregistered { return false }
            s.observation = observation
            return true
        }
        if !keep { observation.cancel() }
    }

    deinit { state.withLock { $0.observation }?.cancel() }

    /// Whether bluetoothd holds the registration (false while it restarts, and after ``unregister()``).
    public var isRegistered: Bool { handle.isRegistered }

    /// Whether the agent is bluetoothd's default agent.
    public var isDefault: Bool { handle.asDefault && handle.isRegistered }

    /// `org.bluez.AgentManager1.UnregisterAgent`, then the object is removed. Idempotent.
    public func unregister() -> Future<Void> {
        let observation = state.withLock { s in
            defer { s.observation = nil; s.unregistered = true }
            return s.observation
        }
        observation?.cancel()
        let promise = Promise<Void>()
        let handle = self.handle, context = agent.context
        Task {
            let failure = await handle.unregister()
            context.execute {
                if let failure {
                    promise.failure(BlueCapError(failure, operation: "PairingAgentRegistration.unregister (org.bluez.AgentManager1.UnregisterAgent)"))
                } else {
                    promise.success(())
                }
            }
        }
        return promise.future
    }

    /// `org.bluez` changed owner (owner thread): nobody may call the agent until the new
    /// bluetoothd has it registered.
    private func ownerChanged(_ owner: String?) {
        let changed = state.withLock { s -> Bool in
            guard !s.unregistered, s.owner != owner else { return false }
            s.owner = owner
            return true
        }
        guard changed else { return }
        handle.allowedCaller = ""
        guard let owner else { return }
        let handle = self.handle
        Task {
            do throws(BlueZError) {
                try await handle.reregister(allowedCaller: owner)
            } catch {
                BlueZLog.debug("PairingAgent \(handle.agent.path): registering again with the restarted bluetoothd failed: \(error)")
            }
        }
    }

    /// The current owner of `org.bluez`, waiting (subscribe, then check) until the tree knows it.
    static func owner(of tree: ObjectTree, timeout: Duration, clock: any TimerClock) async throws(BlueZError) -> String {
        let promise = Promise<String>()
        let observation = tree.observe { event in
            if case .ownerChanged(let o?) = event { promise.success(o) }
        }
        defer {
            observation.cancel()
            promise.failure(CancellationError())  // no-op once completed; never left pending
        }
        if let o = tree.status.owner { return o }
        if tree.status.ownerKnown, tree.status.owner == nil {
            throw BlueZError(kind: .serviceUnavailable, message: "org.bluez is not on the bus: is bluetoothd running?",
                             operation: "org.bluez.AgentManager1.RegisterAgent")
        }
        let deadline = clock.schedule(after: timeout) { promise.failure(FuturesError.timeout(after: timeout)) }
        defer { deadline.cancel() }
        do {
            return try await promise.future.value
        } catch {
            throw BlueZError(kind: .serviceUnavailable, message: "org.bluez did not appear within \(timeout): is bluetoothd running?",
                             operation: "org.bluez.AgentManager1.RegisterAgent")
        }
    }
}

// MARK: - Session

extension PairingAgentRegistration: SessionMember {
    /// ``unregister()``, whatever it answers.
    func sessionClosing(timeout: Duration) -> Future<Void> { unregister().settled() }
}
