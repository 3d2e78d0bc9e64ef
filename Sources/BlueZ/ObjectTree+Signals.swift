// ObjectTree+Signals: applying InterfacesAdded, InterfacesRemoved and PropertiesChanged to the
// cache, then telling the observers.
import DBus

extension ObjectTree {
    // MARK: - Signals

    /// One signal from the service (owner thread).
    func received(_ m: Message) {
        guard let event = Self.event(from: m) else {
            BlueZLog.debug("ObjectTree: ignored \(m)")
            return
        }
        apply(event, sender: m.sender, from: m.description)
    }

    /// Applies one decoded signal from `sender` (owner thread): cache first, then observers.
    /// `signal` describes it for the debug log.
    func apply(_ event: ObjectTreeEvent, sender: String?, from signal: @autoclosure () -> String) {
        var batch: [(ObjectTreeEvent, [Handler])] = []
        var rejected: [String] = []
        state.withLock { s in
            // Before the snapshot arrives, every signal is already reflected in it.
            guard s.status.loaded, let owner = s.status.owner, sender == nil || sender == owner else { return }
            var event = event
            // A BlueZ property never changes type: a property keeps the type it was published
            // with, and a change of another type is bad input that must not replace the good
            // value (nor reach observers).
            if case .propertiesChanged(let path, let interface, let changed, let invalidated) = event,
               let cached = s.objects[path]?[interface],
               changed.contains(where: { name, value in cached[name].map { !$0.hasSameType(as: value) } ?? false }) {
                let kept = changed.filter { name, value in cached[name].map { $0.hasSameType(as: value) } ?? true }
                if kept.count != changed.count {
                    rejected = changed.keys.filter { kept[$0] == nil }.sorted()
                        .map { "\($0): \(changed[$0]!.signature) instead of \(cached[$0]!.signature)" }
                    event = .propertiesChanged(path, interface: interface, changed: kept, invalidated: invalidated)
                }
            }
            switch event {
            case .interfacesAdded(let path, let ifaces):
                s.objects[path, default: [:]].merge(ifaces) { _, new in new }
            case .interfacesRemoved(let path, let names):
                guard s.objects[path] != nil else { return }
                for n in names { s.objects[path]!.removeValue(forKey: n) }
                if s.objects[path]!.isEmpty { s.objects.removeValue(forKey: path) }
            case .propertiesChanged(let path, let interface, let changed, let invalidated):
                guard s.objects[path]?[interface] != nil else { return }
                s.objects[path]![interface]!.merge(changed) { _, new in new }
                for n in invalidated { s.objects[path]![interface]!.removeValue(forKey: n) }
            default:
                return
            }
            batch.append((event, Self.observers(of: event, in: &s)))
        }
        if !rejected.isEmpty { BlueZLog.debug("ObjectTree: ignored wrongly typed properties in \(signal()): \(rejected.joined(separator: ", "))") }
        deliver(batch)
    }
}
