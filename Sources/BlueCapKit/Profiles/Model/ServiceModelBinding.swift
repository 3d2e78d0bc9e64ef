// ServiceModelBinding: a ServiceModel's properties tied to the characteristics of a discovered Service.
import BlueZ
import Foundation
import Futures
import Locking

/// Holds the binding a model made; kept by the model's first property box (``ServiceModel/serviceBinding``).
final class BindingSlot: Sendable {
    let current = Locked<ServiceModelBinding?>(nil)
}

/// A ``ServiceModel`` bound to a remote ``Service``: each `@Characteristic` property is tied to
/// the characteristic with its UUID. Made by ``ServiceModel/bind(to:options:)``.
///
/// - Reads (``readAll()``) use `org.bluez.GattCharacteristic1.ReadValue` and set the properties.
/// - Writes (``write(_:type:)``) encode the property and use `WriteValue`.
/// - Notifications (`AcquireNotify`/`StartNotify`, see ``Options/notifications``) set the
///   property on every value that decodes; values that do not decode are ignored (counted in
///   ``ignoredUpdateCount``), the property keeps its value.
/// - ``changes`` emits each property set from the peripheral (read or notified) with the
///   value it was set to (``ServiceModelChange``).
///
/// Missing characteristics: a property whose type is an `Optional` is skipped (listed in
/// ``skipped``) when the service lacks its characteristic; any other property makes binding fail
/// with `.notFound` naming the UUID and the property.
public final class ServiceModelBinding: Sendable {
    /// How to bind.
    public struct Options: Sendable {
        /// Which bound characteristics get notifications turned on.
        public enum Notifications: Sendable, Equatable {
            /// Every bound characteristic whose `Flags` contain "notify" or "indicate".
            case all
            /// None: properties change only on ``ServiceModelBinding/readAll()``.
            case none
            /// Only these (each must support notify or indicate, or binding fails with `.notSupported`).
            case only(Set<BLEUUID>)
        }

        /// Which characteristics notify; `.all` by default.
        public var notifications: Notifications
        /// How many changes ``ServiceModelBinding/changes`` keeps for replay to late subscribers
        /// (and how far one subscriber may fall behind before its oldest pending change is dropped).
        public var changesCapacity: Int
        /// The timeout of each BlueZ call made by the binding.
        public var timeout: Duration
        /// Turn notifications on again after the peripheral reconnects.
        public var resubscribeOnReconnect: Bool

        /// Options; the defaults notify on every notifying characteristic, keep 100 changes.
        public init(notifications: Notifications = .all, changesCapacity: Int = 100,
                    timeout: Duration = .seconds(10), resubscribeOnReconnect: Bool = true) {
            self.notifications = notifications
            self.changesCapacity = max(1, changesCapacity)
            self.timeout = timeout
            self.resubscribeOnReconnect = resubscribeOnReconnect
        }
    }

    /// One bound property and its remote characteristic. The box is held weakly: the model owns
    /// its binding (through its first box), never the other way round, so dropping the model
    /// ends the binding.
    struct Entry: Sendable {
        let name: String
        let uuid: BLEUUID
        weak let box: (any CharacteristicBinding)?
        let characteristic: Characteristic
    }

    private struct State {
        var bound = true
        var notifying: [Characteristic] = []
        var ignored = 0
    }

    /// The remote service.
    public let service: Service
    /// The options binding used.
    public let options: Options
    /// UUIDs of optional properties whose characteristic the service lacks.
    public let skipped: [BLEUUID]
    let entries: [Entry]
    /// Where the model keeps this binding; weak: the slot owns the binding, not the reverse.
    private weak let slot: BindingSlot?
    private let changePromise: StreamPromise<ServiceModelChange>
    private let state = Locked(State())

    private init(service: Service, options: Options, entries: [Entry], skipped: [BLEUUID], slot: BindingSlot) {
        self.service = service
        self.options = options
        self.entries = entries
        self.skipped = skipped
        self.slot = slot
        changePromise = StreamPromise(capacity: options.changesCapacity)
    }

    // MARK: Resolving

    /// Ties each binding to the service's characteristic with its UUID, or fails naming the missing ones.
    static func resolve(_ bindings: [(name: String, binding: any CharacteristicBinding)], model: String,
                        in service: Service, options: Options, slot: BindingSlot) -> Result<ServiceModelBinding, PeripheralError> {
        var entries: [Entry] = []
        var skipped: [BLEUUID] = []
        var missing: [String] = []
        for (name, box) in bindings {
            if let c = service.characteristic(box.uuid) {
                entries.append(Entry(name: name, uuid: box.uuid, box: box, characteristic: c))
            } else if box.isOptional {
                skipped.append(box.uuid)
            } else {
                missing.append("\(box.uuid) (\(model).\(name))")
            }
        }
        guard missing.isEmpty else {
            return .failure(PeripheralError(kind: .notFound, operation: "ServiceModel.bind", path: service.objectPath,
                                            message: "characteristics not found in service \(service.uuid): \(missing.joined(separator: ", "))"))
        }
        return .success(ServiceModelBinding(service: service, options: options, entries: entries, skipped: skipped, slot: slot))
    }

    /// Subscribes to the update streams, then turns notifications on as ``Options/notifications`` says.
    func startNotifications() -> Future<ServiceModelBinding> {
        let chosen = entries.filter { entry in
            let p = entry.characteristic.properties
            switch options.notifications {
            case .all: return p.contains(.notify) || p.contains(.indicate)
            case .none: return false
            case .only(let uuids): return uuids.contains(entry.uuid)
            }
        }
        let started = chosen.map { entry -> Future<Characteristic> in
            entry.characteristic.receiveNotificationUpdates().onComplete(context: .immediate) { [weak self] result in
                switch result {
                case .success(let update): self?.received(update.data ?? Data(), for: entry)
                case .failure(let error): self?.changePromise.failure(error)
                }
            }
            state.withLock { $0.notifying.append(entry.characteristic) }
            return entry.characteristic.startNotifying(timeout: options.timeout, resubscribeOnReconnect: options.resubscribeOnReconnect)
        }
        return started.sequence(context: .immediate).map(context: .immediate) { [self] _ in self }
    }

    // MARK: State

    /// Each property set from the peripheral (by ``readAll()`` or a notification), after the
    /// property holds the new value, with that value and the bytes it came from. Bounded: it keeps the last
    /// ``Options/changesCapacity`` changes for replay to new subscribers, and a subscriber more
    /// than that many behind loses its oldest pending change. A notification stream that fails
    /// (the link dropped without re-subscription) pushes its error; ``unbind()`` finishes it.
    public var changes: FutureStream<ServiceModelChange> { changePromise.stream }

    /// False once ``unbind()`` was called (or the model was bound again).
    public var isBound: Bool { state.withLock { $0.bound } }

    /// The remote characteristic a property is bound to.
    public func characteristic(for uuid: BLEUUID) -> Characteristic? {
        entries.first { $0.uuid == uuid }?.characteristic
    }

    /// The characteristics notifications were turned on for.
    public var notifyingUUIDs: [BLEUUID] { state.withLock { $0.notifying.map(\.uuid) } }

    /// How many received values (notifications) did not decode and were ignored.
    public var ignoredUpdateCount: Int { state.withLock { $0.ignored } }

    // MARK: Reading and writing

    /// Reads every bound characteristic whose `Flags` contain "read"
    /// (`org.bluez.GattCharacteristic1.ReadValue`, queued per device), sets each property and
    /// emits its UUID on ``changes``. Succeeds with the UUIDs read; fails with the first error,
    /// `.invalidValue` naming the property when a value does not decode (that property is unchanged).
    public func readAll() -> Future<[BLEUUID]> {
        let readable = entries.filter { $0.characteristic.properties.contains(.read) }
        return readable.map { read($0) }.sequence(context: .immediate)
    }

    /// Reads one bound characteristic (`ReadValue`) into its property.
    public func read(_ uuid: BLEUUID) -> Future<BLEUUID> {
        guard let entry = entries.first(where: { $0.uuid == uuid }) else { return Future(error: notBound(uuid, "ServiceModel.read")) }
        return read(entry)
    }

    private func read(_ entry: Entry) -> Future<BLEUUID> {
        guard isBound else { return Future(error: notBound(entry.uuid, "ServiceModel.read")) }
        return entry.characteristic.read(timeout: options.timeout).map(context: .immediate) { [self] c in
            let data = c.value ?? Data()
            guard let box = entry.box else { throw modelReleased(entry.uuid, "ServiceModel.read") }
            let value: any Sendable
            do {
                value = try box.updateReturningValue(with: data)
            } catch {
                throw PeripheralError(kind: .invalidValue, operation: "ServiceModel.read (org.bluez.GattCharacteristic1.ReadValue)",
                                      path: c.objectPath, message: "\(entry.uuid) (\(entry.name)): \(error)")
            }
            changePromise.success(ServiceModelChange(uuid: entry.uuid, property: entry.name, data: data, value: value))
            return entry.uuid
        }
    }

    /// Writes the property bound to `uuid`, encoded by its transformer
    /// (`org.bluez.GattCharacteristic1.WriteValue`). `type` nil picks from `Flags`: "write"
    /// (with response) first, else "write-without-response"; neither fails with `.notSupported`.
    public func write(_ uuid: BLEUUID, type: Characteristic.WriteType? = nil) -> Future<Characteristic> {
        guard let entry = entries.first(where: { $0.uuid == uuid }) else { return Future(error: notBound(uuid, "ServiceModel.write")) }
        guard let box = entry.box else { return Future(error: modelReleased(uuid, "ServiceModel.write")) }
        return write(box.data, to: entry, type: type)
    }

    /// Writes `data` to the entry's characteristic, choosing the write type from its properties.
    func write(_ data: Data, to entry: Entry, type: Characteristic.WriteType?) -> Future<Characteristic> {
        let operation = "ServiceModel.write (org.bluez.GattCharacteristic1.WriteValue)"
        guard isBound else { return Future(error: notBound(entry.uuid, operation)) }
        let p = entry.characteristic.properties
        let chosen: Characteristic.WriteType
        if let type {
            chosen = type
        } else if p.contains(.write) {
            chosen = .withResponse
        } else if p.contains(.writeWithoutResponse) {
            chosen = .withoutResponse
        } else {
            return Future(error: PeripheralError(kind: .notSupported, operation: operation, path: entry.characteristic.objectPath,
                                                 message: "\(entry.uuid) (\(entry.name)) is not writable: Flags \(entry.characteristic.flags)"))
        }
        return entry.characteristic.write(data: data, timeout: options.timeout, type: chosen)
    }

    /// The entry of a property box, if it belongs to this binding.
    func entry(for box: any CharacteristicBinding) -> Entry? { entries.first { $0.box === box } }

    // MARK: Unbinding

    /// Stops updating the model: turns off the notifications the binding turned on (closes the
    /// acquired socket or `org.bluez.GattCharacteristic1.StopNotify`) and finishes ``changes``.
    /// Notifications of a characteristic are per characteristic, so another binding of the same
    /// characteristic stops too. Succeeds with the UUIDs whose notifications were stopped.
    @discardableResult
    public func unbind() -> Future<[BLEUUID]> {
        let notifying = state.withLock { s -> [Characteristic] in
            guard s.bound else { return [] }
            s.bound = false
            let n = s.notifying
            s.notifying = []
            return n
        }
        slot?.current.withLock { if $0 === self { $0 = nil } }
        changePromise.finish()
        return notifying.map { $0.stopNotifying(timeout: options.timeout).map(context: .immediate) { $0.uuid } }
            .sequence(context: .immediate)
    }

    // MARK: Delivery

    /// A notified value: decode into the property (ignored when it does not decode), then emit.
    private func received(_ data: Data, for entry: Entry) {
        guard isBound, let box = entry.box else { return }
        let value: any Sendable
        do {
            value = try box.updateReturningValue(with: data)
        } catch {
            state.withLock { $0.ignored += 1 }
            BlueZLog.debug("\(entry.characteristic.objectPath) notification for \(entry.name) ignored: \(error)")
            return
        }
        changePromise.success(ServiceModelChange(uuid: entry.uuid, property: entry.name, data: data, value: value))
    }

    private func modelReleased(_ uuid: BLEUUID, _ operation: String) -> PeripheralError {
        PeripheralError(kind: .notFound, operation: operation, path: service.objectPath,
                        message: "the model of \(uuid) was released: keep the model while its binding is used")
    }

    private func notBound(_ uuid: BLEUUID, _ operation: String) -> PeripheralError {
        PeripheralError(kind: .notFound, operation: operation, path: service.objectPath,
                        message: isBound ? "no property bound to \(uuid)" : "the model was unbound")
    }
}
