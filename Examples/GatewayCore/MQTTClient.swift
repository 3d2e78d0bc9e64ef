// MQTTClient: libmosquitto's client with a bounded outgoing queue, resubscription after every
// reconnect, and counts of what was sent and dropped.

import ExampleSupport
import Foundation

/// An MQTT 3.1.1 client over libmosquitto (through ``LibMosquitto``).
///
/// - Connects in the background and reconnects by itself (libmosquitto's network thread, 1 s
///   doubling to 10 s between attempts), so a broker restart costs only the messages dropped
///   meanwhile.
/// - Outgoing messages wait in an ``OutgoingQueue`` (bounded; the oldest reading is dropped
///   when full, and counted) and are handed to libmosquitto only while connected, at most
///   `window` unacknowledged at a time, so libmosquitto's own queue stays bounded too.
/// - Subscriptions are made again on every connection (the session is clean).
/// - The handlers run on libmosquitto's network thread, never under this client's lock.
package final class MQTTClient: Sendable {
    /// What the client tells its owner.
    package struct Handlers: Sendable {
        /// Connected (first time: `reconnects` 0); the owner republishes its state here.
        package var connected: @Sendable (_ reconnects: Int) -> Void = { _ in }
        /// The connection was lost or refused; the client retries by itself.
        package var disconnected: @Sendable (_ reason: String) -> Void = { _ in }
        /// The queue was full and a reading was dropped (called for the first drop after each
        /// connection change, not every one; ``counts`` has the total).
        package var dropping: @Sendable (_ counts: Counts) -> Void = { _ in }
        /// A message arrived on a subscribed topic.
        package var message: @Sendable (_ topic: String, _ payload: Data) -> Void = { _, _ in }
        package init() {}
    }

    /// What was sent, queued and dropped.
    package struct Counts: Sendable, Equatable {
        /// Messages the broker acknowledged (QoS 1) or that were written (QoS 0).
        package var published = 0
        /// Readings dropped because the queue was full.
        package var dropped = 0
        /// Messages waiting in the queue.
        package var queued = 0
        /// Messages handed to libmosquitto and not yet acknowledged.
        package var inFlight = 0
        /// Connections made after the first.
        package var reconnects = 0
        /// Whether the client is connected now.
        package var connected = false
    }

    private struct State {
        var queue: OutgoingQueue
        var inFlight = 0
        var published = 0
        var connects = 0
        var connected = false
        var reportedDrop = false
        var subscriptions: [String: Int] = [:]
        var closed = false
        var firstConnection: FirstConnection?
    }

    private let callbacks: LibMosquitto.Callbacks
    private let handlers: Handlers
    private let broker: BrokerAddress
    private let window: Int
    private let state: Guarded<State>
    /// The handle, used from several threads (libmosquitto, threaded, locks its own state).
    private let shared: LibMosquitto.SharedHandle
    private var handle: LibMosquitto.Handle { shared.handle }

    /// A client for `broker`; nothing is sent before ``start()``.
    package init(clientID: String, broker: BrokerAddress, will: MQTTMessage?, queueCapacity: Int,
                 window: Int = 100, username: String? = nil, password: String? = nil,
                 handlers: Handlers) throws(MQTTError) {
        let callbacks = LibMosquitto.Callbacks()
        let handle = try LibMosquitto.new(clientID: clientID, callbacks: callbacks)
        self.shared = LibMosquitto.SharedHandle(handle)
        self.callbacks = callbacks
        self.handlers = handlers
        self.broker = broker
        self.window = max(1, window)
        self.state = Guarded(State(queue: OutgoingQueue(capacity: queueCapacity)))
        do {
            if let username { try LibMosquitto.setCredentials(handle, username: username, password: password) }
            if let will { try LibMosquitto.setWill(handle, will) }
        } catch {
            LibMosquitto.close(handle)
            throw error
        }
        LibMosquitto.setReconnectDelay(handle, 1, 10, true)
        callbacks.connected = { [weak self] rc in self?.didConnect(rc) }
        callbacks.disconnected = { [weak self] rc in self?.didDisconnect(rc) }
        callbacks.published = { [weak self] _ in self?.didPublish() }
        callbacks.message = { [weak self] topic, payload in self?.handlers.message(topic, payload) }
    }

    deinit { close() }

    /// Starts connecting; returns the first attempt's failure (the client keeps retrying).
    @discardableResult
    package func start() throws(MQTTError) -> MQTTError? {
        guard let first = LibMosquitto.connectAsync(handle, host: broker.host, port: broker.port, keepalive: 15) else {
            try LibMosquitto.startLoop(handle)
            return nil
        }
        // libmosquitto's network thread reconnects a connection that was up once, not a first
        // attempt that failed: that one is retried here, on a thread of its own (the attempt
        // blocks in connect(2)), 1 s doubling to 10 s apart, until it succeeds or close().
        let retry = FirstConnection()
        state.withLock { $0.firstConnection = retry }
        // The thread holds the handle, not the client: a client let go without close() is
        // closed by deinit, which stops this thread first.
        let (shared, broker, handlers) = (self.shared, self.broker, self.handlers)
        Thread.detachNewThread {
            defer { retry.finished.signal() }
            var delay = 1.0
            while retry.stop.wait(timeout: .now() + delay) == .timedOut {
                if LibMosquitto.connectAsync(shared.handle, host: broker.host, port: broker.port, keepalive: 15) == nil {
                    if (try? LibMosquitto.startLoop(shared.handle)) == nil {
                        handlers.disconnected("cannot start libmosquitto's network thread")
                    }
                    return
                }
                delay = min(delay * 2, 10)
            }
        }
        return first
    }

    /// Queues `message` (see ``OutgoingQueue`` for what is kept when the broker is away).
    package func publish(_ message: MQTTMessage) {
        let report = state.withLock { s -> Counts? in
            guard !s.closed else { return nil }
            let dropped = s.queue.append(message)
            guard dropped, !s.reportedDrop else { return nil }
            s.reportedDrop = true
            return counts(s)
        }
        if let report { handlers.dropping(report) }
        pump()
    }

    /// Subscribes to `filter` now (when connected) and after every reconnection.
    package func subscribe(_ filter: String, qos: Int = 1) {
        let connected = state.withLock { s in
            s.subscriptions[filter] = qos
            return s.connected
        }
        if connected { try? LibMosquitto.subscribe(handle, filter, qos) }
    }

    /// The counts now.
    package var counts: Counts { state.withLock { counts($0) } }

    /// Disconnects (a clean DISCONNECT: the broker does not publish the will) and stops the
    /// network thread. Idempotent.
    package func close() {
        let (first, retry) = state.withLock { s in
            defer { s.closed = true }
            return (!s.closed, s.firstConnection)
        }
        guard first else { return }
        if let retry {
            retry.stop.signal()
            retry.finished.wait()
        }
        LibMosquitto.close(handle)
    }

    // MARK: Network-thread callbacks

    private func didConnect(_ rc: Int32) {
        guard rc == 0 else {
            handlers.disconnected("the broker \(broker) refused the connection: \(LibMosquitto.connackText(rc))"
                + " (check the user name and password, and the broker's ACL for this client)")
            return
        }
        let (subscriptions, reconnects) = state.withLock { s in
            s.connected = true
            s.connects += 1
            s.reportedDrop = false
            return (s.subscriptions, s.connects - 1)
        }
        for (filter, qos) in subscriptions { try? LibMosquitto.subscribe(handle, filter, qos) }
        handlers.connected(reconnects)
        pump()
    }

    private func didDisconnect(_ rc: Int32) {
        let wasClosed = state.withLock { s in
            s.connected = false
            s.reportedDrop = false
            return s.closed
        }
        guard !wasClosed else { return }
        handlers.disconnected("lost the connection to the broker \(broker): \(LibMosquitto.text(rc)); reconnecting")
    }

    private func didPublish() {
        state.withLock { s in
            s.inFlight = max(0, s.inFlight - 1)
            s.published += 1
        }
        pump()
    }

    // MARK: Sending

    /// Hands queued messages to libmosquitto while connected and the window has room.
    private func pump() {
        while true {
            let next = state.withLock { s -> MQTTMessage? in
                guard s.connected, !s.closed, s.inFlight < window, let m = s.queue.next() else { return nil }
                s.inFlight += 1
                return m
            }
            guard let message = next else { return }
            do {
                _ = try LibMosquitto.publish(handle, message)
            } catch {
                state.withLock { s in
                    s.inFlight -= 1
                    if error.kind == .unreachable { s.queue.putBack(message) }
                }
                if error.kind == .unreachable { return }
            }
        }
    }

    private func counts(_ s: State) -> Counts {
        Counts(published: s.published, dropped: s.queue.dropped, queued: s.queue.count, inFlight: s.inFlight,
               reconnects: max(0, s.connects - 1), connected: s.connected)
    }
}
