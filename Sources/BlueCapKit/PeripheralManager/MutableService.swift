// MutableService: a service this Linux box serves as a peripheral.

import BlueZ
import Foundation
import Locking

/// A primary service and its characteristics, exported as `org.bluez.GattService1` (with
/// `GattCharacteristic1` children) once added to a ``PeripheralManager``.
public final class MutableService: Sendable, CustomStringConvertible {
    /// The UUID.
    public let uuid: BLEUUID
    /// The name (from the profile).
    public let name: String
    /// The profile it was made from, if any.
    public let profile: ServiceProfile?
    // Sendable through this lock: the characteristic list.
    private let list: Locked<[MutableCharacteristic]>

    /// A service with `characteristics` (changes take effect when the service is next added).
    public init(uuid: BLEUUID, name: String = "Unknown", characteristics: [MutableCharacteristic] = []) {
        self.uuid = uuid
        self.name = name
        profile = nil
        list = Locked(characteristics)
    }

    /// A service with a characteristic for each of the profile's, with their initial values.
    public init(profile: some ServiceProfileConvertible) {
        let p = profile.serviceProfile
        uuid = p.uuid
        name = p.name
        self.profile = p
        list = Locked(p.characteristics.map { MutableCharacteristic(profile: $0) })
    }

    /// The characteristics, in export order.
    public var characteristics: [MutableCharacteristic] {
        get { list.withLock { $0 } }
        set { list.withLock { $0 = newValue } }
    }

    /// The characteristic with `uuid`, if any.
    public func characteristic(_ uuid: BLEUUID) -> MutableCharacteristic? {
        characteristics.first { $0.uuid == uuid }
    }

    /// The BlueZ service object for export.
    var local: LocalGattService {
        LocalGattService(uuid: uuid.uuidString, characteristics: characteristics.map(\.local))
    }

    /// `name (uuid)`.
    public var description: String { "\(name) (\(uuid))" }
}
