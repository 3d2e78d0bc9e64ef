// ObjectTree+Signals: each signal of the service, decoded once, checked, applied to the cache and
// routed by its path once.
@_spi(Testing) import DBus
import Foundation

extension ObjectTree {
    /// What one signal (or one change of owner or snapshot) delivers, outside the lock.
    enum Delivery {
        /// Events, each with its observers, in order.
        case events([(ObjectTreeEvent, [Handler])])
        /// A characteristic's new `Value`, to the value handlers of its path.
        case value(Data, [(id: Int, handler: ValueHandler)])
        /// A property's new value on `path` (the cache's own key), to the property's handlers.
        case property(ObjectPath, DBusValue, [(id: Int, handler: PropertyHandler)])
    }

    // MARK: - Receiving

    /// A PropertiesChanged before any ``Message`` is made (owner thread): applies it and returns
    /// true when it has a lone shape read in place (``signal(from:)-(SignalView)``); false
    /// otherwise, and the connection then decodes it for ``received(_:)-(Message)``.
    func received(_ view: SignalView) -> Bool {
        guard let signal = Self.signal(from: view) else { return false }
        apply(signal, sender: view.sender)
        return true
    }

    /// One decoded signal from the service (owner thread).
    func received(_ m: Message) {
        guard let signal = Self.signal(from: m) else {
            BlueZLog.debug("ObjectTree: ignored \(m)")
            return
        }
        apply(signal, sender: m.sender)
    }

    // MARK: - Applying

    /// Applies one signal from `sender` (owner thread): under the lock, the route is found by
    /// the signal's path, the change checked (``keepsType(_:_:)``) and written to the cache;
    /// then, without the lock, the route's observers run.
    ///
    /// A lone `Value` change goes to the value handlers of its path when it has some, a lone
    /// basic change to its property's route when it has one; every other signal, and a lone one
    /// that its route cannot take (the object unknown, a value of another type), reaches the
    /// tree, path and subtree observers as its general ``ObjectTreeEvent``.
    func apply(_ signal: TreeSignal, sender: String?) {
        var rejected: [String] = []
        let delivery = state.withLock { s -> Delivery? in
            // Before the snapshot arrives, every signal is already reflected in it.
            guard s.status.loaded, let owner = s.status.owner, sender == nil || sender == owner else { return nil }
            switch signal {
            case .loneValue(let path, let data):
                if let handlers = s.cacheRoutedValue(data, at: path) { return .value(data, handlers) }
            case .loneProperty(let path, let change, let value):
                if let route = s.routes.propertyRoute({ change.isProperty($0.name, of: $0.interface) }),
                   let stored = s.cacheRoutedProperty(route.key, value, at: path) {
                    return .property(stored, value, route.handlers)
                }
            case .event:
                break
            }
            guard let event = s.cache(signal.event, rejected: &rejected) else { return nil }
            return .events([(event, s.routes.observers(of: event.path))])
        }
        if !rejected.isEmpty {
            BlueZLog.debug("ObjectTree: ignored wrongly typed properties in \(signal.description): \(rejected.joined(separator: ", "))")
        }
        if let delivery { deliver(delivery) }
    }

    // MARK: - Delivering

    /// Runs the observers, in order, without the lock.
    func deliver(_ delivery: Delivery) {
        switch delivery {
        case .events(let batch):
            for (event, handlers) in batch {
                for h in handlers {
                    PathWorkProbe.visit()
                    h(event)
                }
            }
        case .value(let data, let handlers):
            for route in handlers {
                PathWorkProbe.visit()
                route.handler(data)
            }
        case .property(let path, let value, let handlers):
            for route in handlers {
                PathWorkProbe.visit()
                route.handler(path, value)
            }
        }
    }
}
