// ProfileManager: the registry of known service profiles.

import Foundation
import Locking

/// A thread-safe registry of service profiles, looked up by service or characteristic UUID
/// (for naming discovered services and decoding their values, or for building local services).
///
/// Use ``shared`` for an application-wide registry, or create separate instances.
public final class ProfileManager: Sendable {
    /// Registry contents, guarded by `state`'s mutex.
    private struct State {
        var services: [BLEUUID: ServiceProfile] = [:]
        var order: [BLEUUID] = []
        /// Characteristic UUID → the services that declare it, in registration order.
        var characteristicIndex: [BLEUUID: [BLEUUID]] = [:]
    }

    private let state = Locked(State())

    /// The application-wide registry; empty until profiles are added
    /// (see ``registerBuiltInProfiles()``).
    public static let shared = ProfileManager()

    /// An empty registry.
    public init() {}

    // MARK: Registration

    /// Adds a service profile, replacing one with the same UUID.
    public func addService(_ profile: some ServiceProfileConvertible) {
        let service = profile.serviceProfile
        state.withLock { state in
            if state.services[service.uuid] != nil {
                Self.unindex(service.uuid, in: &state)
            } else {
                state.order.append(service.uuid)
            }
            state.services[service.uuid] = service
            for characteristic in service.characteristics {
                state.characteristicIndex[characteristic.uuid, default: []].append(service.uuid)
            }
        }
    }

    /// Removes the service profile with this UUID; returns it when there was one.
    @discardableResult
    public func removeService(_ uuid: BLEUUID) -> ServiceProfile? {
        state.withLock { state in
            guard state.services[uuid] != nil else { return nil }
            Self.unindex(uuid, in: &state)
            let removed = state.services.removeValue(forKey: uuid)
            state.order.removeAll { $0 == uuid }
            return removed
        }
    }

    /// Removes every profile.
    public func removeAll() {
        state.withLock { $0 = State() }
    }

    /// Registers the built-in profiles: TI SensorTag and the Bluetooth SIG services.
    public func registerBuiltInProfiles() {
        for profile in TISensorTag.serviceProfiles + BLESIGGATT.serviceProfiles { addService(profile) }
    }

    // MARK: Lookup

    /// Every registered service profile, in registration order.
    public var services: [ServiceProfile] {
        state.withLock { state in state.order.compactMap { state.services[$0] } }
    }

    /// The service profile with this UUID, if registered.
    public func service(_ uuid: BLEUUID) -> ServiceProfile? {
        state.withLock { $0.services[uuid] }
    }

    /// The characteristic profile with this UUID: from `serviceUUID`'s profile when given,
    /// otherwise from the first registered service that declares it.
    public func characteristic(_ uuid: BLEUUID, inService serviceUUID: BLEUUID? = nil) -> CharacteristicProfile? {
        state.withLock { state in
            if let serviceUUID { return state.services[serviceUUID]?.characteristic(uuid) }
            guard let first = state.characteristicIndex[uuid]?.first else { return nil }
            return state.services[first]?.characteristic(uuid)
        }
    }

    /// The service profiles that declare a characteristic with this UUID, in registration order.
    public func services(containingCharacteristic uuid: BLEUUID) -> [ServiceProfile] {
        state.withLock { state in (state.characteristicIndex[uuid] ?? []).compactMap { state.services[$0] } }
    }

    // MARK: Private

    private static func unindex(_ serviceUUID: BLEUUID, in state: inout State) {
        guard let old = state.services[serviceUUID] else { return }
        for characteristic in old.characteristics {
            state.characteristicIndex[characteristic.uuid]?.removeAll { $0 == serviceUUID }
            if state.characteristicIndex[characteristic.uuid]?.isEmpty == true {
                state.characteristicIndex[characteristic.uuid] = nil
            }
        }
    }
}
