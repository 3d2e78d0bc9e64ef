// PairingAgentRegistration: a registered PairingAgent, kept registered across bluetoothd restarts.
import BlueZ
import DBus
import Futures

/// A ``PairingAgent`` registered with bluetoothd. ``unregister()`` calls
/// `org.bluez.AgentManager1.UnregisterAgent` and removes the object; releasing the registration
/// removes the object too. When bluetoothd restarts (a new owner of `org.bluez`), the agent is
/// registered again with the new bluetoothd (and made default again if it was), and only the
/// new owner may call it.
public final class PairingAgentRegistration: Sendable {
    /// The agent.
    public let agent: PairingAgent
    /// The session the agent is registered in (kept open while the registration lives).
    public let session: BluetoothSession
    let handle: AgentHandle
    let tree: ObjectTree

    /// Follows the owner of `org.bluez` from `owner` (`Registration.followOwner`), registering again on a new one.
    init(agent: PairingAgent, session: BluetoothSession, handle: AgentHandle, tree: ObjectTree, owner: String) {
        self.session = session
        self.agent = agent
        self.handle = handle
        self.tree = tree
        handle.registration.followOwner(of: tree, registeredWith: owner, reregister: true, timeout: .seconds(10))
    }

    /// Whether bluetoothd holds the registration (false while it restarts, and after ``unregister()``).
    public var isRegistered: Bool { handle.isRegistered }

    /// Whether the agent is bluetoothd's default agent.
    public var isDefault: Bool { handle.asDefault && handle.isRegistered }

    /// `org.bluez.AgentManager1.UnregisterAgent`, then the object is removed. Idempotent.
    public func unregister() -> Future<Void> {
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
