// ServiceModelChange: one property of a bound ServiceModel set from the peripheral, with its value.
import Foundation

// MARK: - ServiceModelChange

/// A property of a bound ``ServiceModel`` set from the peripheral (a read or a notification),
/// carrying the value it was set to: a value notified and then overwritten before the app looks
/// at the property is still seen, in order, on ``ServiceModelBinding/changes``.
public struct ServiceModelChange: Sendable, Equatable, CustomStringConvertible {
    /// The characteristic.
    public let uuid: BLEUUID
    /// The model property bound to it (`batteryLevel`).
    public let property: String
    /// The bytes received.
    public let data: Data
    /// The decoded value the property was set to (the property's `Value` type).
    public let value: any Sendable

    /// Creates a change.
    public init(uuid: BLEUUID, property: String, data: Data, value: any Sendable) {
        self.uuid = uuid
        self.property = property
        self.data = data
        self.value = value
    }

    /// The decoded value as `type` (the property's type), or nil when it is another type:
    /// `change.value(as: UInt8.self)`.
    public func value<T>(as type: T.Type) -> T? { value as? T }

    /// Equal when the characteristic, the property and the bytes are.
    public static func == (a: Self, b: Self) -> Bool { a.uuid == b.uuid && a.property == b.property && a.data == b.data }

    /// `batteryLevel (2A19) = 42`.
    public var description: String { "\(property) (\(uuid)) = \(value)" }
}
