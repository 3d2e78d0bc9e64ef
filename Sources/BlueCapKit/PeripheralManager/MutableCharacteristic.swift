// MutableCharacteristic: a characteristic this Linux box serves as a peripheral.

import BlueZ
import DBus
import Foundation
import Synchronization
import Futures
import Locking
import Synchronization

/// A characteristic of a ``MutableService``, exported as `org.bluez.GattCharacteristic1`
/// once the service is added to a ``PeripheralManager``.
///
/// Without a responder, reads answer ``value`` and writes store the bytes when the
/// characteristic is writable (properties and permissions), with `NotPermitted`,
/// `InvalidOffset` and `InvalidValueLength` checks. After ``startRespondingToReadRequests(capacity:)``
/// or ``startRespondingToWriteRequests(capacity:)`` each request arrives on a stream and the
/// central waits until ``respondToRequest(_:withResult:)``.
public final class MutableCharacteristic: Sendable, CustomStringConvertible {
    /// The UUID.
    public let uuid: BLEUUID
    /// The name (from the profile).
    public let name: String
    /// Supported operations (exported as `Flags`).
    public let properties: CharacteristicProperties
    /// Access permissions (security `Flags`; without `.readable`/`.writeable` reads/writes are refused).
    public let permissions: CharacteristicPermissions
    /// The profile it was made from, or an untyped one.
    public let profile: CharacteristicProfile
    /// The descriptors (`org.bluez.GattDescriptor1` objects below the characteristic).
    public let descriptors: [MutableDescriptor]
    let local: LocalGattCharacteristic

    private struct Streams {
        /// Requests left unanswered for requestTimeout.
        var unanswered = 0
        var reads: StreamPromise<(request: ATTRequest, central: CentralIdentity)>?
        var writes: StreamPromise<(request: ATTRequest, central: CentralIdentity)>?
    }
    // Sendable through this lock; streams are pushed to after unlocking.
    private let streams = Locked(Streams())
    private let subscriptions: StreamPromise<SubscriptionEvent>
    private let unanswered = StreamPromise<UnansweredRequest>(capacity: 10)

    // MARK: Creating

    /// The longest value a write may leave unless a characteristic says otherwise: 512 bytes,
    /// the ATT maximum attribute value length.
    public static let defaultMaxLength = LocalGattCharacteristic.defaultMaxLength

    /// A characteristic with its identity, access and initial value. `maxLength` bounds writes;
    /// `descriptors` are exported below it (with their own security flags).
    public convenience init(uuid: BLEUUID, properties: CharacteristicProperties, permissions: CharacteristicPermissions,
                value: Data? = nil, name: String = "Unknown", maxLength: Int = MutableCharacteristic.defaultMaxLength,
                descriptors: [MutableDescriptor] = []) {
        self.init(profile: CharacteristicProfile(uuid: uuid, name: name, permissions: permissions, properties: properties,
                                                 initialValue: value), maxLength: maxLength, descriptors: descriptors)
    }

    /// A characteristic described by `profile`, starting with the profile's initial value, with
    /// `descriptors` exported below it.
    public init(profile: some CharacteristicProfileConvertible, maxLength: Int = MutableCharacteristic.defaultMaxLength,
                descriptors: [MutableDescriptor] = []) {
        let p = profile.characteristicProfile
        self.profile = p
        self.descriptors = descriptors
        uuid = p.uuid
        name = p.name
        properties = p.properties
        permissions = p.permissions
        local = LocalGattCharacteristic(
            uuid: p.uuid.uuidString, flags: CharacteristicFlags.bluezFlags(properties: p.properties, permissions: p.permissions),
            value: p.initialValue ?? Data(), maxLength: maxLength,
            readable: p.permissions.contains(.readable), writable: p.permissions.contains(.writeable),
            descriptors: descriptors.map(\.local))
        let subscriptions = StreamPromise<SubscriptionEvent>(capacity: 10)
        self.subscriptions = subscriptions
        local.setNotifyingHandler { on in subscriptions.success(on ? .subscribed : .unsubscribed) }
        local.setUnansweredHandler { [weak self] server, timeout in
            guard let self else { return }
            streams.withLock { $0.unanswered += 1 }
            unanswered.success(UnansweredRequest(request: ATTRequest(server: server, characteristicUUID: uuid),
                                                 waited: timeout ?? .zero))
        }
    }

    // MARK: Value

    /// The current value: what reads answer when the app does not respond itself. Setting it
    /// does not notify (use ``updateValue(withData:)``); nil stores an empty value.
    public var value: Data? {
        get { local.value }
        set { local.value = newValue ?? Data() }
    }

    /// The value as named strings through the profile.
    public var stringValue: [String: String]? { value.flatMap { profile.stringValue($0) } }

    /// The longest value a write may leave (`org.bluez.Error.InvalidValueLength` beyond it).
    public var maxLength: Int { local.maxLength }

    /// How long a request waits for ``respondToRequest(_:withResult:)`` (default 10 s). Then the
    /// central is answered with `ATTError.unlikelyError` (0x0E, never an application error),
    /// a `bluecap: warning:` line goes to stderr, ``unansweredRequestCount`` grows and
    /// ``whenRequestUnanswered()`` delivers the request.
    public var requestTimeout: Duration {
        get { local.requestTimeout }
        set { local.requestTimeout = newValue }
    }

    // MARK: Notifications

    /// Whether a central subscribed (bluetoothd called `StartNotify` or `AcquireNotify`).
    public var isNotifying: Bool { local.isNotifying }

    /// Subscription changes (`StartNotify`/`StopNotify`), the last 10 replayed to new subscribers.
    public func whenSubscriptionChanges() -> FutureStream<SubscriptionEvent> { subscriptions.stream }

    /// Whether notifications leave through the socket bluetoothd acquired
    /// (`org.bluez.GattCharacteristic1.AcquireNotify`, asked for when the first central
    /// subscribes) rather than as D-Bus messages. Nothing changes for the app either way.
    public var isNotifyAcquired: Bool { local.isNotifyAcquired }

    /// Whether bluetoothd is offered the notification socket (`NotifyAcquired`; true by default).
    /// Set it before the service is added: bluetoothd reads it when the application registers.
    /// False keeps every notification a `PropertiesChanged(Value)` message.
    public var offersNotifySocket: Bool {
        get { local.acquireNotify }
        set { local.acquireNotify = newValue }
    }

    /// Whether bluetoothd is offered a socket for writes without response (`WriteAcquired`,
    /// `org.bluez.GattCharacteristic1.AcquireWrite`); false by default. Set it before the service
    /// is added. Writes then still arrive as requests, but bluetoothd has acknowledged each one
    /// already (answering one changes nothing), and all centrals share the socket: every write
    /// is attributed to the central whose first write made bluetoothd acquire it. And bluetoothd
    /// (5.55 to 5.82) can corrupt the writes that arrive while it acquires the socket: it keeps
    /// them as pointers into a buffer the next write reuses. Leave it off when the app must
    /// refuse writes, tell centrals apart, or cannot lose the first writes of a burst.
    public var acceptsWriteSocket: Bool {
        get { local.acquireWrite }
        set { local.acquireWrite = newValue }
    }

    /// Whether writes arrive through a socket bluetoothd acquired (`AcquireWrite`).
    public var isWriteAcquired: Bool { local.isWriteAcquired }

    /// Values ``updateValue(withData:)`` dropped because the acquired socket's buffer was full
    /// (bluetoothd not keeping up); each such call returned false.
    public var droppedNotificationCount: Int { local.droppedNotificationCount }

    /// Sets the value and notifies every subscribed central: one datagram on the socket
    /// bluetoothd acquired (`AcquireNotify`), else `PropertiesChanged(Value)` on the exported
    /// object. Returns false, storing the value only, when nobody is subscribed or when the
    /// socket's buffer is full (counted in ``droppedNotificationCount``).
    @discardableResult
    public func updateValue(withData data: Data) -> Bool { local.notify(data) }

    /// ``updateValue(withData:)`` with `value` serialized (little-endian).
    @discardableResult
    public func updateValue<T: Deserializable>(_ value: T) -> Bool { updateValue(withData: SerDe.serialize(value)) }

    // MARK: Requests

    /// Each request left unanswered for ``requestTimeout``; the last 10 are replayed to new
    /// subscribers (older ones are dropped, and counted by ``unansweredRequestCount``).
    public func whenRequestUnanswered() -> FutureStream<UnansweredRequest> { unanswered.stream }

    /// How many requests were left unanswered for ``requestTimeout`` since the characteristic was made.
    public var unansweredRequestCount: Int { streams.withLock { $0.unanswered } }

    /// Delivers every `WriteValue` (that passed the permission, offset and length checks) to the
    /// returned stream; the app answers each with ``respondToRequest(_:withResult:)``. Replaces
    /// an earlier stream (which finishes). `capacity` bounds replay to late subscribers.
    public func startRespondingToWriteRequests(capacity: Int = 10) -> FutureStream<(request: ATTRequest, central: CentralIdentity)> {
        let promise = StreamPromise<(request: ATTRequest, central: CentralIdentity)>(capacity: capacity)
        let previous = streams.withLock { s in defer { s.writes = promise }; return s.writes }
        previous?.finish()
        let uuid = self.uuid
        local.setWriteHandler { [weak promise] server in
            let request = ATTRequest(server: server, characteristicUUID: uuid)
            if promise?.success((request, request.central)) != true { server.fail(ATTError.unlikelyError.bluezError) }
        }
        return promise.stream
    }

    /// Stops delivering writes (the stream finishes); writes are stored again as they come.
    public func stopRespondingToWriteRequests() {
        local.setWriteHandler(nil)
        streams.withLock { s in defer { s.writes = nil }; return s.writes }?.finish()
    }

    /// Delivers every `ReadValue` to the returned stream; the app answers each with
    /// ``respondToRequest(_:withResult:)`` (after updating ``value`` if it wants) or
    /// ``respondToRequest(_:withValue:)``.
    public func startRespondingToReadRequests(capacity: Int = 10) -> FutureStream<(request: ATTRequest, central: CentralIdentity)> {
        let promise = StreamPromise<(request: ATTRequest, central: CentralIdentity)>(capacity: capacity)
        let previous = streams.withLock { s in defer { s.reads = promise }; return s.reads }
        previous?.finish()
        let uuid = self.uuid
        local.setReadHandler { [weak promise] server in
            let request = ATTRequest(server: server, characteristicUUID: uuid)
            if promise?.success((request, request.central)) != true { server.fail(ATTError.unlikelyError.bluezError) }
        }
        return promise.stream
    }

    /// Stops delivering reads (the stream finishes); reads answer ``value`` again.
    public func stopRespondingToReadRequests() {
        local.setReadHandler(nil)
        streams.withLock { s in defer { s.reads = nil }; return s.reads }?.finish()
    }

    /// Answers `request`. `.success` replies a read with ``value`` from the request's offset
    /// (`InvalidOffset` if beyond it) and stores a write's bytes at its offset; `.failure`
    /// replies the error's `org.bluez.Error.*`. Returns false if it was already answered.
    @discardableResult
    public func respondToRequest(_ request: ATTRequest, withResult result: ATTResult) -> Bool {
        switch result {
        case .success: request.server.succeed()
        case .failure(let e): request.server.fail(e.bluezError)
        }
    }

    /// Answers a read with `value` (the whole value; the request's offset is applied).
    @discardableResult
    public func respondToRequest(_ request: ATTRequest, withValue value: Data) -> Bool {
        request.server.succeed(value: value)
    }

    /// `name (uuid)`.
    public var description: String { "\(name) (\(uuid))" }
}
