// CharacteristicBinding: the storage of one ServiceModel property, as the roles see it.
import Foundation

/// One characteristic binding of a ``ServiceModel``: the storage of a
/// `@ServiceModel.Characteristic` property (a ``ServiceModelCharacteristic`` box).
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
