// ServiceProfile: a service's identity and the profiles of its characteristics.

import Foundation

/// Something that describes a service: ``ServiceProfile`` itself and ``ConfiguredServiceProfile``.
public protocol ServiceProfileConvertible: Sendable {
    /// The untyped service profile.
    var serviceProfile: ServiceProfile { get }
}

/// A service's UUID, name, tag and characteristic profiles, in the order they were added
/// (the order a local service exports them in).
public struct ServiceProfile: ServiceProfileConvertible, CustomStringConvertible {
    /// The service UUID.
    public let uuid: BLEUUID
    /// A human-readable name.
    public let name: String
    /// A grouping tag.
    public let tag: String
    /// The characteristic profiles, in order.
    public private(set) var characteristics: [CharacteristicProfile] = []

    /// A service profile without characteristics.
    public init(uuid: BLEUUID, name: String = "Unknown", tag: String = "Miscellaneous") {
        self.uuid = uuid
        self.name = name
        self.tag = tag
    }

    /// Adds a characteristic profile; one with the same UUID is replaced in place.
    public mutating func addCharacteristic(_ profile: some CharacteristicProfileConvertible) {
        let untyped = profile.characteristicProfile
        if let index = characteristics.firstIndex(where: { $0.uuid == untyped.uuid }) {
            characteristics[index] = untyped
        } else {
            characteristics.append(untyped)
        }
    }

    /// A copy with the characteristic profile added.
    public func adding(_ profile: some CharacteristicProfileConvertible) -> ServiceProfile {
        var copy = self
        copy.addCharacteristic(profile)
        return copy
    }

    /// The characteristic profile with this UUID, if any.
    public func characteristic(_ uuid: BLEUUID) -> CharacteristicProfile? {
        characteristics.first { $0.uuid == uuid }
    }

    /// Itself.
    public var serviceProfile: ServiceProfile { self }

    /// `name (uuid): characteristic, …`.
    public var description: String {
        "\(name) (\(uuid)): " + characteristics.map(\.description).joined(separator: ", ")
    }
}

/// The profile of a service described by a ``ServiceConfigurable`` type `Config`.
public struct ConfiguredServiceProfile<Config: ServiceConfigurable>: ServiceProfileConvertible {
    /// The untyped profile, carrying `Config`'s identity.
    public private(set) var serviceProfile: ServiceProfile

    /// A profile with `Config`'s UUID, name and tag and no characteristics yet.
    public init() {
        serviceProfile = ServiceProfile(uuid: Config.uuid, name: Config.name, tag: Config.tag)
    }

    /// A profile with `Config`'s identity and the given characteristics.
    public init(characteristics: [any CharacteristicProfileConvertible]) {
        self.init()
        for characteristic in characteristics { serviceProfile.addCharacteristic(characteristic) }
    }

    /// The service UUID.
    public var uuid: BLEUUID { Config.uuid }
    /// The service name.
    public var name: String { Config.name }
    /// The service tag.
    public var tag: String { Config.tag }
    /// The characteristic profiles, in order.
    public var characteristics: [CharacteristicProfile] { serviceProfile.characteristics }

    /// Adds a characteristic profile.
    public mutating func addCharacteristic(_ profile: some CharacteristicProfileConvertible) {
        serviceProfile.addCharacteristic(profile)
    }

    /// The characteristic profile with this UUID, if any.
    public func characteristic(_ uuid: BLEUUID) -> CharacteristicProfile? { serviceProfile.characteristic(uuid) }
}
