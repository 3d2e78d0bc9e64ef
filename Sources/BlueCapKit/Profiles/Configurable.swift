// ServiceConfigurable / CharacteristicConfigurable: the static description of a GATT type.

import Foundation

/// Describes a GATT service type: a profile's service namespace conforms to it.
public protocol ServiceConfigurable {
    /// The service UUID.
    static var uuid: BLEUUID { get }
    /// A human-readable name ("TI Accelerometer").
    static var name: String { get }
    /// A grouping tag ("TI Sensor Tag", "GATT").
    static var tag: String { get }
}

/// Describes a GATT characteristic type: what a profile's value type declares about its characteristic.
public protocol CharacteristicConfigurable {
    /// The characteristic UUID.
    static var uuid: BLEUUID { get }
    /// A human-readable name.
    static var name: String { get }
    /// Access permissions when the characteristic is exported by the peripheral role.
    static var permissions: CharacteristicPermissions { get }
    /// Supported operations (exported as `GattCharacteristic1.Flags`).
    static var properties: CharacteristicProperties { get }
    /// The value a newly exported characteristic starts with, if any.
    static var initialValue: Data? { get }
}

extension CharacteristicConfigurable {
    /// Readable and writeable by default.
    public static var permissions: CharacteristicPermissions { [.readable, .writeable] }
    /// Read and write by default.
    public static var properties: CharacteristicProperties { [.read, .write] }
    /// No initial value by default.
    public static var initialValue: Data? { nil }
}
