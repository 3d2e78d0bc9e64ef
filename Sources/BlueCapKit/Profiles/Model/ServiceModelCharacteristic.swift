// ServiceModelCharacteristic: the property wrapper of a ServiceModel, `@ServiceModel.Characteristic`.
import Foundation
import Locking

/// Binds a ``ServiceModel`` property to a characteristic, written `@ServiceModel.Characteristic`:
/// `@ServiceModel.Characteristic("2A19") var level: UInt8`.
///
/// The storage is a box shared by the model (and its copies) and the roles; `$property` gives
/// the box (its ``uuid``, ``data``, ``update(with:)``). The value is kept behind the box's own
/// lock, so the box, and a model made of boxes, is `Sendable`; setting the property does not
/// need a `var` model (`model.level = 5` on a `let`).
@propertyWrapper
public final class ServiceModelCharacteristic<Value: Sendable>: CharacteristicBinding {
    private struct State {
        var value: Value
        var received = false
    }

    // MARK: Storage

    /// The bound characteristic.
    public let uuid: BLEUUID
    private let decode: @Sendable (Data) throws(SerDeError) -> Value
    private let encode: @Sendable (Value) -> Data
    /// The value and whether one was received, guarded by this mutex.
    private let state: Locked<State>
    /// The model's binding when this box is the model's first property (see
    /// ``ServiceModel/serviceBinding``): the box owns it, so the binding lives as long as the model.
    let modelSlot = BindingSlot()

    /// A property bound to `uuid`, starting at `wrappedValue`, converted by `transformer`.
    public init<T: CharacteristicTransformer>(wrappedValue: Value, _ uuid: BLEUUID, transformer: T) where T.Value == Value {
        self.uuid = uuid
        self.decode = { (data: Data) throws(SerDeError) -> Value in try transformer.value(from: data) }
        self.encode = { transformer.data(from: $0) }
        self.state = Locked(State(value: wrappedValue))
    }

    // MARK: Property wrapper

    /// The property's value.
    public var wrappedValue: Value {
        get { state.withLock { $0.value } }
        set { state.withLock { $0.value = newValue } }
    }

    /// The binding box.
    public var projectedValue: ServiceModelCharacteristic<Value> { self }

    // MARK: CharacteristicBinding

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

// MARK: - Convenience initializers

extension ServiceModelCharacteristic where Value: Deserializable {
    /// A property of a ``Deserializable`` type, starting at `wrappedValue`.
    public convenience init(wrappedValue: Value, _ uuid: BLEUUID) {
        self.init(wrappedValue: wrappedValue, uuid, transformer: DeserializableTransformer<Value>())
    }
}

extension ServiceModelCharacteristic where Value: Deserializable & AdditiveArithmetic {
    /// A numeric property starting at zero: `@ServiceModel.Characteristic("2A19") var batteryLevel: UInt8`.
    public convenience init(_ uuid: BLEUUID) {
        self.init(wrappedValue: .zero, uuid)
    }
}

extension ServiceModelCharacteristic where Value == String {
    /// A string property starting empty.
    public convenience init(_ uuid: BLEUUID) {
        self.init(wrappedValue: "", uuid)
    }
}

extension ServiceModelCharacteristic {
    /// An optional property starting at nil: `@ServiceModel.Characteristic("2A38") var location: BodySensorLocation?`.
    public convenience init<Wrapped: Deserializable>(_ uuid: BLEUUID) where Value == Wrapped? {
        self.init(wrappedValue: nil, uuid, transformer: OptionalTransformer(DeserializableTransformer<Wrapped>()))
    }

    /// An optional property starting at `wrappedValue`.
    public convenience init<Wrapped: Deserializable>(wrappedValue: Wrapped?, _ uuid: BLEUUID) where Value == Wrapped? {
        self.init(wrappedValue: wrappedValue, uuid, transformer: OptionalTransformer(DeserializableTransformer<Wrapped>()))
    }
}
