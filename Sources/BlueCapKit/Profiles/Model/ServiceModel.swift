// ServiceModel: a class whose @Characteristic properties mirror a service's characteristics.

import Foundation
import Locking

/// One characteristic binding of a ``ServiceModel``: the storage of a `@Characteristic` property.
public protocol CharacteristicBinding: AnyObject, Sendable {
    /// The characteristic UUID the property is bound to.
    var uuid: BLEUUID { get }
    /// True once a value has been received through ``update(with:)``.
    var hasReceivedValue: Bool { get }
    /// Decodes received bytes into the property; on error the property keeps its value.
    func update(with data: Data) throws(SerDeError)
    /// Decodes received bytes into the property and returns the value it was set to.
    func updateReturningValue(with data: Data) throws(SerDeError) -> any Sendable
    /// The property's current value, encoded.
    var data: Data { get }
    /// True when the property's type is an `Optional`: binding skips it when the remote
    /// service lacks the characteristic, instead of failing.
    var isOptional: Bool { get }
}

extension CharacteristicBinding {
    /// Updates with ``update(with:)`` and returns the bytes (for bindings that do not say the value).
    public func updateReturningValue(with data: Data) throws(SerDeError) -> any Sendable {
        try update(with: data)
        return data
    }
}

/// Marks `Optional` types, so a binding can tell an optional property without reflection.
protocol OptionalValueMarker {}
extension Optional: OptionalValueMarker {}

/// A service model: subclass it and declare one property per characteristic,
/// `@Characteristic("2A19") var batteryLevel: UInt8`.
///
/// The roles feed received values (`ReadValue` replies, `Value` notifications) to
/// ``update(uuid:data:)`` and read ``data(for:)`` to write; ``bind(to:options:)`` does it for a
/// discovered remote ``Service`` (reads, writes, notifications, a changes stream). Bindings are found by reflecting over
/// the wrappers' storage (each wrapper is a reference-type box), without the Objective-C runtime.
/// The model is `Sendable`: capture it in a future's callback or pass it to another task.
/// Reading and writing one property is thread-safe; a property set from the peripheral and a
/// ``ServiceModelChange`` are both delivered after the value is stored.
///
/// Subclasses declare only `@Characteristic` properties and `let`s of `Sendable` types.
// @unchecked Sendable: the class's own state is `let` (the UUID, the binding slot behind its
// lock); each @Characteristic box keeps its value behind its own lock and is never replaced
// after init. Subclasses follow the rule above (documented, not checked by the compiler).
open class ServiceModel: @unchecked Sendable {
    /// The service the model mirrors.
    public let serviceUUID: BLEUUID

    /// The binding to a remote service made by ``bind(to:options:)``, if any.
    let bindingSlot = BindingSlot()

    /// A model of the service `serviceUUID`.
    public init(serviceUUID: BLEUUID) {
        self.serviceUUID = serviceUUID
    }

    // MARK: Bindings

    /// Every `@Characteristic` property of the model (subclass properties first), found by reflection.
    public var bindings: [any CharacteristicBinding] { labeledBindings.map(\.binding) }

    /// The bindings with their property names (the wrapper storage's label without its `_`).
    var labeledBindings: [(name: String, binding: any CharacteristicBinding)] {
        var result: [(name: String, binding: any CharacteristicBinding)] = []
        var mirror: Mirror? = Mirror(reflecting: self)
        while let current = mirror {
            for child in current.children {
                guard let binding = child.value as? any CharacteristicBinding else { continue }
                let label = child.label ?? binding.uuid.description
                result.append((label.hasPrefix("_") ? String(label.dropFirst()) : label, binding))
            }
            mirror = current.superclassMirror
        }
        return result
    }

    /// The UUIDs of the bound characteristics.
    public var characteristicUUIDs: [BLEUUID] { bindings.map(\.uuid) }

    /// The binding for a characteristic UUID, if any.
    public func binding(for uuid: BLEUUID) -> (any CharacteristicBinding)? {
        bindings.first { $0.uuid == uuid }
    }

    /// Sets the property bound to `uuid` from received bytes. Returns false when no property is
    /// bound to `uuid`; throws (leaving the property unchanged) when the bytes do not decode.
    @discardableResult
    public func update(uuid: BLEUUID, data: Data) throws(SerDeError) -> Bool {
        guard let binding = binding(for: uuid) else { return false }
        try binding.update(with: data)
        return true
    }

    /// The encoded value of the property bound to `uuid`, for writing; nil when none is bound.
    public func data(for uuid: BLEUUID) -> Data? {
        binding(for: uuid)?.data
    }

    // MARK: Property wrapper

    /// Binds a model property to a characteristic. The storage is a box shared by the model
    /// and the roles; `$property` gives the box (its ``uuid``, ``data``, ``update(with:)``).
    @propertyWrapper
    public final class Characteristic<Value: Sendable>: CharacteristicBinding {
        private struct State {
            var value: Value
            var received = false
        }

        /// The bound characteristic.
        public let uuid: BLEUUID
        private let decode: @Sendable (Data) throws(SerDeError) -> Value
        private let encode: @Sendable (Value) -> Data
        /// The value and whether one was received, guarded by this mutex.
        private let state: Locked<State>

        /// A property bound to `uuid`, starting at `wrappedValue`, converted by `transformer`.
        public init<T: CharacteristicTransformer>(wrappedValue: Value, _ uuid: BLEUUID, transformer: T) where T.Value == Value {
            self.uuid = uuid
            self.decode = { (data: Data) throws(SerDeError) -> Value in try transformer.value(from: data) }
            self.encode = { transformer.data(from: $0) }
            self.state = Locked(State(value: wrappedValue))
        }

        /// The property's value.
        public var wrappedValue: Value {
            get { state.withLock { $0.value } }
            set { state.withLock { $0.value = newValue } }
        }

        /// The binding box.
        public var projectedValue: Characteristic<Value> { self }

        /// True once a value has been received.
        public var hasReceivedValue: Bool { state.withLock { $0.received } }

        /// Decodes `data` (outside the lock), then stores it.
        public func update(with data: Data) throws(SerDeError) {
            _ = try updateReturningValue(with: data)
        }

        /// Decodes `data` (outside the lock), stores it and returns the decoded value.
        public func updateReturningValue(with data: Data) throws(SerDeError) -> any Sendable {
            let value = try decode(data)
            state.withLock {
                $0.value = value
                $0.received = true
            }
            return value
        }

        /// The current value, encoded.
        public var data: Data { encode(wrappedValue) }

        /// `value` encoded by the property's transformer.
        public func encoded(_ value: Value) -> Data { encode(value) }

        /// True when `Value` is an `Optional`.
        public var isOptional: Bool { Value.self is any OptionalValueMarker.Type }
    }
}

// MARK: - Convenience initializers

extension ServiceModel.Characteristic where Value: Deserializable {
    /// A property of a ``Deserializable`` type, starting at `wrappedValue`.
    public convenience init(wrappedValue: Value, _ uuid: BLEUUID) {
        self.init(wrappedValue: wrappedValue, uuid, transformer: DeserializableTransformer<Value>())
    }
}

extension ServiceModel.Characteristic where Value: Deserializable & AdditiveArithmetic {
    /// A numeric property starting at zero: `@Characteristic("2A19") var batteryLevel: UInt8`.
    public convenience init(_ uuid: BLEUUID) {
        self.init(wrappedValue: .zero, uuid)
    }
}

extension ServiceModel.Characteristic where Value == String {
    /// A string property starting empty.
    public convenience init(_ uuid: BLEUUID) {
        self.init(wrappedValue: "", uuid)
    }
}

extension ServiceModel.Characteristic {
    /// An optional property starting at nil: `@Characteristic("2A38") var location: BodySensorLocation?`.
    public convenience init<Wrapped: Deserializable>(_ uuid: BLEUUID) where Value == Wrapped? {
        self.init(wrappedValue: nil, uuid, transformer: OptionalTransformer(DeserializableTransformer<Wrapped>()))
    }

    /// An optional property starting at `wrappedValue`.
    public convenience init<Wrapped: Deserializable>(wrappedValue: Wrapped?, _ uuid: BLEUUID) where Value == Wrapped? {
        self.init(wrappedValue: wrappedValue, uuid, transformer: OptionalTransformer(DeserializableTransformer<Wrapped>()))
    }
}
