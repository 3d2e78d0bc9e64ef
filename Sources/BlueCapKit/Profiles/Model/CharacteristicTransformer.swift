// CharacteristicTransformer: converts a characteristic's bytes to a model property's value and back.

import Foundation

/// Converts between characteristic bytes and a ``ServiceModel`` property's value.
public protocol CharacteristicTransformer<Value>: Sendable {
    /// The property's type.
    associatedtype Value
    /// Decodes received bytes.
    func value(from data: Data) throws(SerDeError) -> Value
    /// Encodes a value for writing.
    func data(from value: Value) -> Data
}

/// The transformer of any ``Deserializable`` type, through ``SerDe``.
public struct DeserializableTransformer<Value: Deserializable>: CharacteristicTransformer {
    /// The SerDe transformer for `Value`.
    public init() {}
    /// Decodes with `Value(deserializing:)`.
    public func value(from data: Data) throws(SerDeError) -> Value { try Value(deserializing: data) }
    /// Encodes with `serialized()`.
    public func data(from value: Value) -> Data { value.serialized() }
}

/// Lifts a transformer to optional values: received bytes always decode to a value,
/// and nil encodes as no bytes.
public struct OptionalTransformer<Base: CharacteristicTransformer>: CharacteristicTransformer {
    /// The wrapped transformer.
    public let base: Base
    /// Wraps `base`.
    public init(_ base: Base) { self.base = base }
    /// Decodes with the base transformer.
    public func value(from data: Data) throws(SerDeError) -> Base.Value? { try base.value(from: data) }
    /// Encodes with the base transformer; nil is empty.
    public func data(from value: Base.Value?) -> Data { value.map(base.data(from:)) ?? Data() }
}
