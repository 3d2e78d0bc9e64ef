// ServiceModel: a type whose @ServiceModel.Characteristic properties mirror a service's characteristics.
import Foundation

/// A service model: a struct that names its service and declares one property per characteristic.
///
/// ```swift
/// struct BatteryService: ServiceModel {
///     let serviceUUID: BLEUUID = "180F"
///     @ServiceModel.Characteristic("2A19") var level: UInt8
///     @ServiceModel.Characteristic("2A29") var manufacturer: String
/// }
/// ```
///
/// The roles feed received values (`ReadValue` replies, `Value` notifications) to
/// ``update(uuid:data:)`` and read ``data(for:)`` to write; ``bind(to:options:)`` does it for a
/// discovered remote ``Service`` (reads, writes, notifications, a changes stream). Bindings are
/// found by reflecting over the wrappers' storage, without the Objective-C runtime.
///
/// Each property is a box (``ServiceModelCharacteristic``) holding its value behind its own lock,
/// so a model made of boxes and `let`s of `Sendable` types is `Sendable` as the compiler checks
/// it: capture it in a future's callback or pass it to another task, with nothing to restate.
/// A model is a handle: copies share the boxes, their values and the binding, and a property can
/// be set on a `let` model. The binding lives as long as the model (any copy of it) does.
///
/// The wrapper is spelled `@ServiceModel.Characteristic` because a bare `Characteristic` names the
/// remote ``BlueCapKit/Characteristic`` class. A final class may conform too (as
/// `@unchecked Sendable` when it has `var`s, with its own synchronization named).
public protocol ServiceModel: Sendable {
    /// The service the model mirrors.
    var serviceUUID: BLEUUID { get }
}

extension ServiceModel {
    /// The property wrapper of a model: `@ServiceModel.Characteristic("2A19") var level: UInt8`.
    public typealias Characteristic = ServiceModelCharacteristic

    // MARK: Bindings

    /// Every `@ServiceModel.Characteristic` property of the model, in declaration order (a
    /// class's own properties before its superclass's), found by reflection.
    public var bindings: [any CharacteristicBinding] { labeledBindings.map(\.binding) }

    /// The bindings with their property names (the wrapper storage's label without its `_`).
    var labeledBindings: [(name: String, binding: any CharacteristicBinding)] {
        var result: [(name: String, binding: any CharacteristicBinding)] = []
        var mirror: Mirror? = Mirror(reflecting: self)
        while let current = mirror {
            for child in current.children {
                guard let binding = child.value as? any CharacteristicBinding else { continue }
                let label = child.label ?? binding.uuid.description
                result.append((label.hasPrefix("_") ? String(label.dropFirst()) : label, binding))
            }
            mirror = current.superclassMirror
        }
        return result
    }

    /// Where the model keeps its binding: the first property's box (nil for a model with none).
    var bindingSlot: BindingSlot? {
        for (_, binding) in labeledBindings {
            if let carrier = binding as? any BindingSlotCarrier { return carrier.modelSlot }
        }
        return nil
    }

    /// The UUIDs of the bound characteristics.
    public var characteristicUUIDs: [BLEUUID] { bindings.map(\.uuid) }

    /// The binding for a characteristic UUID, if any.
    public func binding(for uuid: BLEUUID) -> (any CharacteristicBinding)? {
        bindings.first { $0.uuid == uuid }
    }

    // MARK: Values

    /// Sets the property bound to `uuid` from received bytes. Returns false when no property is
    /// bound to `uuid`; throws (leaving the property unchanged) when the bytes do not decode.
    @discardableResult
    public func update(uuid: BLEUUID, data: Data) throws(SerDeError) -> Bool {
        guard let binding = binding(for: uuid) else { return false }
        try binding.update(with: data)
        return true
    }

    /// The encoded value of the property bound to `uuid`, for writing; nil when none is bound.
    public func data(for uuid: BLEUUID) -> Data? {
        binding(for: uuid)?.data
    }
}

/// A box that can hold its model's binding (``ServiceModelCharacteristic``).
protocol BindingSlotCarrier {
    var modelSlot: BindingSlot { get }
}

extension ServiceModelCharacteristic: BindingSlotCarrier {}
