// CharacteristicProfile: what is known about one characteristic, independent of its value type.

import Foundation

/// Something that describes a characteristic: ``CharacteristicProfile`` itself and every typed
/// profile (``RawCharacteristicProfile`` and friends). Roles accept any of them, for example when
/// creating a local characteristic from a profile.
public protocol CharacteristicProfileConvertible: Sendable {
    /// The untyped profile.
    var characteristicProfile: CharacteristicProfile { get }
}

/// The untyped description of a characteristic: identity, access, initial value, and conversion
/// of its value to and from named strings for display and input.
///
/// Built directly for characteristics without a known format (values shown as hex under the
/// key `"value"`), or obtained from a typed profile through ``characteristicProfile``.
public struct CharacteristicProfile: CharacteristicProfileConvertible, CustomStringConvertible {
    // MARK: Identity and access

    /// The characteristic UUID.
    public let uuid: BLEUUID
    /// A human-readable name.
    public let name: String
    /// Access permissions when exported.
    public let permissions: CharacteristicPermissions
    /// Supported operations.
    public let properties: CharacteristicProperties
    /// The initial value when exported.
    public let initialValue: Data?

    private let toStrings: @Sendable (Data) -> [String: String]?
    private let fromStrings: @Sendable ([String: String]) -> Data?

    // MARK: Initializers

    /// A profile whose values are shown as lowercase hex under the key `"value"`.
    public init(
        uuid: BLEUUID, name: String = "Unknown",
        permissions: CharacteristicPermissions = [.readable, .writeable],
        properties: CharacteristicProperties = [.read, .write, .notify],
        initialValue: Data? = nil
    ) {
        self.init(uuid: uuid, name: name, permissions: permissions, properties: properties, initialValue: initialValue,
                  stringValue: { ["value": SerDe.hexString($0)] },
                  data: { strings in strings["value"].flatMap { SerDe.data(hexString: $0) } })
    }

    /// A profile with its own string conversions.
    public init(
        uuid: BLEUUID, name: String, permissions: CharacteristicPermissions,
        properties: CharacteristicProperties, initialValue: Data?,
        stringValue: @escaping @Sendable (Data) -> [String: String]?,
        data: @escaping @Sendable ([String: String]) -> Data?
    ) {
        self.uuid = uuid
        self.name = name
        self.permissions = permissions
        self.properties = properties
        self.initialValue = initialValue
        self.toStrings = stringValue
        self.fromStrings = data
    }

    /// The untyped profile of a ``CharacteristicConfigurable`` type `T` with the given conversions.
    init<T: CharacteristicConfigurable>(
        _ type: T.Type,
        stringValue: @escaping @Sendable (Data) -> [String: String]?,
        data: @escaping @Sendable ([String: String]) -> Data?
    ) {
        self.init(uuid: T.uuid, name: T.name, permissions: T.permissions, properties: T.properties,
                  initialValue: T.initialValue, stringValue: stringValue, data: data)
    }

    // MARK: Conversions

    /// The value as named strings, or nil when the bytes do not decode.
    public func stringValue(_ data: Data) -> [String: String]? { toStrings(data) }

    /// The bytes for a value given as named strings, or nil when they do not parse.
    public func data(fromString strings: [String: String]) -> Data? { fromStrings(strings) }

    /// Itself.
    public var characteristicProfile: CharacteristicProfile { self }

    /// `name (uuid)`.
    public var description: String { "\(name) (\(uuid))" }
}
