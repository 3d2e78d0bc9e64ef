// Typed characteristic profiles: a value type plus its CharacteristicConfigurable description.

import Foundation

// MARK: - Shared shape

/// A characteristic profile tied to one value type, with typed encode and decode.
public protocol TypedCharacteristicProfile: CharacteristicProfileConvertible {
    /// The value type.
    associatedtype Value: Deserializable & CharacteristicConfigurable
}

extension TypedCharacteristicProfile {
    /// The characteristic UUID.
    public var uuid: BLEUUID { Value.uuid }
    /// The characteristic name.
    public var name: String { Value.name }
    /// Access permissions when exported.
    public var permissions: CharacteristicPermissions { Value.permissions }
    /// Supported operations.
    public var properties: CharacteristicProperties { Value.properties }
    /// The initial value when exported.
    public var initialValue: Data? { Value.initialValue }

    /// Decodes a received value; nil when the bytes do not fit.
    public func value(from data: Data) -> Value? { SerDe.deserialize(data, as: Value.self) }
    /// Decodes a received value, throwing why it does not fit.
    public func decode(_ data: Data) throws(SerDeError) -> Value { try SerDe.decode(Value.self, from: data) }
    /// Encodes a value for writing.
    public func data(from value: Value) -> Data { SerDe.serialize(value) }

    /// The value as named strings, or nil when the bytes do not decode.
    public func stringValue(_ data: Data) -> [String: String]? { characteristicProfile.stringValue(data) }
    /// The bytes for a value given as named strings, or nil when they do not parse.
    public func data(fromString strings: [String: String]) -> Data? { characteristicProfile.data(fromString: strings) }
}

/// The untyped profile of a type that is both ``Deserializable`` and ``StringDeserializable``.
func stringProfile<T: Deserializable & CharacteristicConfigurable & StringDeserializable>(_ type: T.Type) -> CharacteristicProfile {
    CharacteristicProfile(
        T.self,
        stringValue: { data in SerDe.deserialize(data, as: T.self)?.stringValue },
        data: { strings in T(stringValue: strings).map(SerDe.serialize) })
}

// MARK: - Raw

/// The profile of a ``RawDeserializable`` characteristic value (an enum or a wrapped scalar).
public struct RawCharacteristicProfile<Value: RawDeserializable & CharacteristicConfigurable & StringDeserializable>: TypedCharacteristicProfile {
    /// The profile described by `Value`.
    public init() {}
    /// The untyped profile.
    public var characteristicProfile: CharacteristicProfile { stringProfile(Value.self) }
}

/// The profile of a ``RawArrayDeserializable`` characteristic value.
public struct RawArrayCharacteristicProfile<Value: RawArrayDeserializable & CharacteristicConfigurable & StringDeserializable>: TypedCharacteristicProfile {
    /// The profile described by `Value`.
    public init() {}
    /// The untyped profile.
    public var characteristicProfile: CharacteristicProfile { stringProfile(Value.self) }
}

/// The profile of a ``RawPairDeserializable`` characteristic value.
public struct RawPairCharacteristicProfile<Value: RawPairDeserializable & CharacteristicConfigurable & StringDeserializable>: TypedCharacteristicProfile {
    /// The profile described by `Value`.
    public init() {}
    /// The untyped profile.
    public var characteristicProfile: CharacteristicProfile { stringProfile(Value.self) }
}

/// The profile of a ``RawArrayPairDeserializable`` characteristic value.
public struct RawArrayPairCharacteristicProfile<Value: RawArrayPairDeserializable & CharacteristicConfigurable & StringDeserializable>: TypedCharacteristicProfile {
    /// The profile described by `Value`.
    public init() {}
    /// The untyped profile.
    public var characteristicProfile: CharacteristicProfile { stringProfile(Value.self) }
}

/// The profile of a value with its own variable-length encoding (a ``Deserializable`` record
/// such as the Heart Rate Measurement).
public struct DeserializableCharacteristicProfile<Value: Deserializable & CharacteristicConfigurable & StringDeserializable>: TypedCharacteristicProfile {
    /// The profile described by `Value`.
    public init() {}
    /// The untyped profile.
    public var characteristicProfile: CharacteristicProfile { stringProfile(Value.self) }
}

// MARK: - String

/// The profile of a UTF-8 string characteristic described by `Config`
/// (for example Device Information's Manufacturer Name). Values are shown under the key `Config.name`.
public struct StringCharacteristicProfile<Config: CharacteristicConfigurable>: CharacteristicProfileConvertible {
    /// The profile described by `Config`.
    public init() {}

    /// The characteristic UUID.
    public var uuid: BLEUUID { Config.uuid }
    /// The characteristic name.
    public var name: String { Config.name }
    /// Access permissions when exported.
    public var permissions: CharacteristicPermissions { Config.permissions }
    /// Supported operations.
    public var properties: CharacteristicProperties { Config.properties }
    /// The initial value when exported.
    public var initialValue: Data? { Config.initialValue }

    /// Decodes the UTF-8 value; nil when it is not UTF-8.
    public func value(from data: Data) -> String? { SerDe.deserialize(data, as: String.self) }
    /// The UTF-8 bytes of `value`.
    public func data(from value: String) -> Data { SerDe.serialize(value) }

    /// `[Config.name: string]`, or nil when the bytes are not UTF-8.
    public func stringValue(_ data: Data) -> [String: String]? { characteristicProfile.stringValue(data) }
    /// The UTF-8 bytes of `strings[Config.name]`.
    public func data(fromString strings: [String: String]) -> Data? { characteristicProfile.data(fromString: strings) }

    /// The untyped profile.
    public var characteristicProfile: CharacteristicProfile {
        let key = Config.name
        return CharacteristicProfile(
            Config.self,
            stringValue: { data in SerDe.deserialize(data, as: String.self).map { [key: $0] } },
            data: { strings in strings[key].map(SerDe.serialize) })
    }
}
