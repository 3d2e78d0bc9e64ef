// ServiceModel+Binding: binding a model to a discovered remote Service, and the operations on the binding.
import Foundation
import Futures

extension ServiceModel {
    // MARK: Binding

    /// Binds the model to `service` (discovered with `Peripheral.discoverServices` on a connected
    /// peripheral): waits for its `org.bluez.GattCharacteristic1` objects (BlueZ exports them
    /// together, so a missing one fails at once rather than after `timeout`), ties every
    /// `@ServiceModel.Characteristic` property to the characteristic with its UUID, then turns notifications
    /// on (`AcquireNotify`, or `StartNotify`) for the ones ``ServiceModelBinding/Options/notifications``
    /// selects, so each notified value sets its property.
    ///
    /// A property whose characteristic is missing fails the binding with `.notFound` naming the
    /// UUID and the property, unless its type is an `Optional` (then it is skipped and listed in
    /// ``ServiceModelBinding/skipped``). A service whose UUID is not ``serviceUUID`` fails with
    /// `.notSupported`. Binding again first unbinds the previous binding. Values are not read:
    /// call ``readAll()`` for that.
    public func bind(to service: Service, options: ServiceModelBinding.Options = .init()) -> Future<ServiceModelBinding> {
        let operation = "ServiceModel.bind"
        guard service.uuid == serviceUUID else {
            return Future(error: PeripheralError(kind: .notSupported, operation: operation, path: service.objectPath,
                                                 message: "service \(service.uuid) is not the model's service \(serviceUUID)"))
        }
        guard let slot = bindingSlot else {
            return Future(error: PeripheralError(kind: .notSupported, operation: operation, path: service.objectPath,
                                                 message: "\(type(of: self)) declares no @ServiceModel.Characteristic property"))
        }
        let previous = slot.current.withLock { current -> ServiceModelBinding? in
            defer { current = nil }
            return current
        }
        previous?.unbind()
        let bindings = labeledBindings
        let model = String(describing: type(of: self))
        // BlueZ exports a service's characteristics together: once one is there, all are.
        return service.discoverCharacteristics(nil, timeout: options.timeout)
            .flatMap(context: .immediate) { service in
                let binding = try ServiceModelBinding.resolve(bindings, model: model, in: service, options: options, slot: slot).get()
                slot.current.withLock { $0 = binding }
                return binding.startNotifications().recoverWith(context: .immediate) { error in
                    binding.unbind().recover(context: .immediate) { _ in [] }
                        .map(context: .immediate) { _ -> ServiceModelBinding in throw error }
                }
            }
    }

    /// The current binding, nil before ``bind(to:options:)`` and after ``unbind()``.
    public var serviceBinding: ServiceModelBinding? { bindingSlot?.current.withLock { $0 } }

    // MARK: Operations on the binding

    /// Reads every readable bound characteristic (`org.bluez.GattCharacteristic1.ReadValue`) into
    /// its property; see ``ServiceModelBinding/readAll()``. Fails with `.notFound` when unbound.
    public func readAll() -> Future<[BLEUUID]> {
        guard let binding = serviceBinding else { return Future(error: unbound("ServiceModel.readAll")) }
        return binding.readAll()
    }

    /// Writes the current value of the property bound to `uuid` (`org.bluez.GattCharacteristic1.WriteValue`);
    /// see ``ServiceModelBinding/write(_:type:)``.
    public func write(uuid: BLEUUID, type: BlueCapKit.Characteristic.WriteType? = nil) -> Future<BlueCapKit.Characteristic> {
        guard let binding = serviceBinding else { return Future(error: unbound("ServiceModel.write")) }
        return binding.write(uuid, type: type)
    }

    /// Writes `value` to the property's characteristic, encoded by its transformer
    /// (`org.bluez.GattCharacteristic1.WriteValue`, with or without response from `Flags` unless
    /// `type` says), and sets the property once the write succeeded: `model.write(model.$level, 42)`.
    public func write<Value>(_ property: ServiceModelCharacteristic<Value>, _ value: Value,
                             type: BlueCapKit.Characteristic.WriteType? = nil) -> Future<BlueCapKit.Characteristic> {
        let operation = "ServiceModel.write (org.bluez.GattCharacteristic1.WriteValue)"
        guard let binding = serviceBinding else { return Future(error: unbound(operation)) }
        guard let entry = binding.entry(for: property) else {
            return Future(error: PeripheralError(kind: .notFound, operation: operation, path: binding.service.objectPath,
                                                 message: "\(property.uuid) is not a bound property of this model"))
        }
        return binding.write(property.encoded(value), to: entry, type: type).map(context: .immediate) { c in
            property.wrappedValue = value
            return c
        }
    }

    /// Ends the binding: stops its notifications (`StopNotify`) and finishes its changes stream;
    /// see ``ServiceModelBinding/unbind()``. Succeeds with nothing stopped when unbound.
    @discardableResult
    public func unbind() -> Future<[BLEUUID]> {
        serviceBinding?.unbind() ?? Future(value: [])
    }

    private func unbound(_ operation: String) -> PeripheralError {
        PeripheralError(kind: .notFound, operation: operation, message: "\(type(of: self)) is not bound to a service")
    }
}

extension Service {
    /// Binds `model` to this service: ``ServiceModel/bind(to:options:)``.
    public func bind(_ model: some ServiceModel, options: ServiceModelBinding.Options = .init()) -> Future<ServiceModelBinding> {
        model.bind(to: self, options: options)
    }
}
