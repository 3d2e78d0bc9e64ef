// PairingAgent: this process's org.bluez.Agent1, answering pairing requests through a delegate.
import BlueZ
import DBus
import Foundation
import Futures
import Locking
import Synchronization

/// A pairing agent: an `org.bluez.Agent1` object bluetoothd calls during pairing, answered by a
/// ``PairingAgentDelegate``.
///
/// Register it with `register(for:asDefault:timeout:)`: bluetoothd asks
/// the agent of the process that called `Device1.Pair` (`Peripheral.pair(timeout:)`) for that
/// pairing's local side; every other request — a central pairing with our
/// ``PeripheralManager``, pairing the kernel starts to encrypt a link — goes to the *default*
/// agent (`asDefault: true`), whose IO capability is also the adapters' default. Without any
/// agent bluetoothd refuses requests that need one. Only the current owner of `org.bluez` may
/// call the agent; any other caller gets `org.freedesktop.DBus.Error.AccessDenied`.
///
/// Registering needs the bus policy's permission to call `org.bluez`
/// (`/etc/dbus-1/system.d/bluetooth.conf`): root or, where the policy restricts it, the
/// `bluetooth` group.
public final class PairingAgent: Sendable {
    /// The IO capability announced in `RegisterAgent`.
    public let capability: PairingIOCapability
    /// Answers the requests.
    public let delegate: any PairingAgentDelegate
    /// Where the delegate is called and futures complete.
    public let context: any ExecutionContext
    /// How long a request may wait for the delegate before the agent answers `Canceled` itself
    /// (bluetoothd's own agent timeout is about 30-60 s, after which it calls `Cancel`).
    public let requestTimeout: Duration
    /// The agent's object path.
    public let path: String
    let events = StreamPromise<PairingRequest>(capacity: 32)

    private struct Pending {
        let responder: AgentResponder
        /// The refusals record of the session the agent answers in.
        let refusals: AgentRefusals
        let deadline: ClockTask
    }
    private struct State {
        var pending: [Int: Pending] = [:]
        var next = 0
    }
    // Sendable through this lock; delegate calls and replies happen outside it.
    private let state = Locked(State())
    private static let counter = Atomic<Int>(0)

    /// An agent with `capability`, answered by `delegate` on `context`.
    public init(capability: PairingIOCapability, delegate: any PairingAgentDelegate,
                context: any ExecutionContext = .futuresDefault, requestTimeout: Duration = .seconds(60)) {
        self.capability = capability
        self.delegate = delegate
        self.context = context
        self.requestTimeout = requestTimeout
        let n = Self.counter.add(1, ordering: .relaxed).newValue
        path = "/org/bluecap/agent\(getpid())_\(n)"
    }

    /// Every request bluetoothd made (before the delegate answers it); the last 32 are kept for
    /// a late subscriber, older ones dropped.
    public func whenRequested() -> FutureStream<PairingRequest> { events.stream }

    // MARK: Registration

    /// Registers the agent in `central`'s session: bluetoothd asks it for the local side of
    /// every `Peripheral.pair(timeout:)` of that manager. Calls
    /// `org.bluez.AgentManager1.RegisterAgent` (and `RequestDefaultAgent` when `asDefault`).
    public func register(for central: CentralManager, asDefault: Bool = false,
                         timeout: Duration = .seconds(10)) -> Future<PairingAgentRegistration> {
        register(session: central.session, asDefault: asDefault, timeout: timeout)
    }

    /// Registers the agent in `manager`'s session, by default as the default agent: centrals
    /// pairing with this peripheral reach it.
    public func register(for manager: PeripheralManager, asDefault: Bool = true,
                         timeout: Duration = .seconds(10)) -> Future<PairingAgentRegistration> {
        register(session: manager.session, asDefault: asDefault, timeout: timeout)
    }

    /// Registers in `session` (the process-wide ``BluetoothSession/default`` when not given): the
    /// agent answers the pairings of every manager of that session; its request timeouts run on
    /// the session's clock, and closing the session unregisters it. Fails with a ``BlueCapError``:
    /// `.accessDenied` when the bus policy refuses (see the type's permission note),
    /// `.alreadyExists` when this session already has an agent, `.serviceUnavailable` without
    /// bluetoothd or the bus.
    public func register(session: BluetoothSession = .default, asDefault: Bool,
                         timeout: Duration = .seconds(10)) -> Future<PairingAgentRegistration> {
        let promise = Promise<PairingAgentRegistration>()
        let context = self.context
        Task {
            let result: Result<PairingAgentRegistration, any Error>
            do throws(BlueZError) {
                result = .success(try await self.registerNow(session: session, asDefault: asDefault, timeout: timeout))
            } catch {
                let call = error.operation ?? "org.bluez.AgentManager1.RegisterAgent"
                result = .failure(BlueCapError(error, operation: "PairingAgent.register (\(call))"))
            }
            context.execute { promise.complete(result) }
        }
        return promise.future
    }

    private func registerNow(session: BluetoothSession, asDefault: Bool, timeout: Duration) async throws(BlueZError) -> PairingAgentRegistration {
        let op = "org.bluez.AgentManager1.RegisterAgent"
        guard let conn = session.connection, let tree = session.tree, session.isOpen else {
            throw BlueZError(kind: .serviceUnavailable, message: "the bus cannot be reached: \(session.unavailableReason ?? "no connection")", operation: op)
        }
        let owner = try await PairingAgentRegistration.owner(of: tree, timeout: timeout, clock: session.clock)
        let clock = session.clock, refusals = session.agentRefusals
        let agent = LocalAgent(path: try! ObjectPath(path), capability: capability.agentCapability,
                               handler: { [weak self] r in self?.received(r, refusals: refusals, clock: clock) ?? r.reply(.reject) },
                               canceled: { [weak self] in self?.canceled() })
        let handle = try await agent.register(on: conn, allowedCaller: owner, asDefault: asDefault, timeout: timeout)
        let registration = PairingAgentRegistration(agent: self, session: session, handle: handle, tree: tree, owner: owner)
        session.join(registration)
        return registration
    }

    // MARK: Requests

    /// One request from bluetoothd (owner thread): the delegate is asked on the context; the
    /// answer, or `Canceled` after ``requestTimeout`` on the session's `clock`, goes back.
    private func received(_ responder: AgentResponder, refusals: AgentRefusals, clock: any TimerClock) {
        let request = PairingRequest(responder.request)
        events.success(request)
        let id = state.withLock { s -> Int in s.next += 1; return s.next }
        let deadline = clock.schedule(after: requestTimeout) { [weak self] in
            self?.answer(id, .cancel)
        }
        state.withLock { $0.pending[id] = Pending(responder: responder, refusals: refusals, deadline: deadline) }
        let delegate = self.delegate
        context.execute { [weak self] in
            guard let self else { return }
            func yesNo(_ f: Future<Bool>) {
                f.onComplete(context: .immediate) { r in
                    switch r {
                    case .success(let yes): self.answer(id, yes ? .accept : .reject)
                    case .failure: self.answer(id, .cancel)
                    }
                }
            }
            switch request.kind {
            case .pinCode:
                delegate.pinCode(for: request.device).onComplete(context: .immediate) { r in
                    self.answer(id, (try? r.get()).map(AgentReply.pinCode) ?? .cancel)
                }
            case .passkey:
                delegate.passkey(for: request.device).onComplete(context: .immediate) { r in
                    self.answer(id, (try? r.get()).map(AgentReply.passkey) ?? .cancel)
                }
            case .displayPinCode(let pin):
                delegate.display(pinCode: pin, for: request.device)
                self.answer(id, .accept)
            case .displayPasskey(let key, let entered):
                delegate.display(passkey: key, entered: entered, for: request.device)
                self.answer(id, .accept)
            case .confirmation(let key): yesNo(delegate.confirm(passkey: key, for: request.device))
            case .authorization: yesNo(delegate.authorize(request.device))
            case .service(let uuid): yesNo(delegate.authorize(service: uuid, for: request.device))
            }
        }
    }

    private func answer(_ id: Int, _ reply: AgentReply) {
        guard let pending = state.withLock({ $0.pending.removeValue(forKey: id) }) else { return }
        pending.deadline.cancel()
        switch reply {
        case .reject: pending.refusals.record(device: pending.responder.request.device.rawValue, .rejected)
        case .cancel: pending.refusals.record(device: pending.responder.request.device.rawValue, .canceled)
        default: break
        }
        pending.responder.reply(reply)
    }

    /// `Agent1.Cancel`: the requests in progress are answered `Canceled` (bluetoothd no longer
    /// waits for them) and the delegate is told.
    private func canceled() {
        let ids = state.withLock { Array($0.pending.keys) }
        for id in ids { answer(id, .cancel) }
        let delegate = self.delegate
        context.execute { delegate.pairingCanceled() }
    }
}
