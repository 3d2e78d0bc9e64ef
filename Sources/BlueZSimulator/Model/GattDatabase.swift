// GattDatabase: a remote GATT database with ATT handles, as bluetoothd discovers and exports it.

// MARK: - GattDatabase

/// A GATT database with handles assigned in declaration order from 0x0001, the way a real
/// peripheral lays out its attributes. bluetoothd names objects after these handles.
struct GattDatabase {
    struct Descriptor {
        var handle: UInt16
        var uuid: String
        var flags: [String]
        /// Index into the owning peer's attribute values / the app object path (virtual radio).
        var source: String?
    }

    struct Characteristic {
        /// The declaration handle (object path).
        var handle: UInt16
        /// The value handle (ATT operations).
        var valueHandle: UInt16
        var uuid: String
        var flags: [String]
        var descriptors: [Descriptor]
        var source: String?

        func has(_ flag: CharacteristicFlag) -> Bool { flags.contains(flag.rawValue) }
        var canNotify: Bool { has(.notify) || has(.indicate) }
    }

    struct Service {
        var handle: UInt16
        var uuid: String
        var primary: Bool
        var characteristics: [Characteristic]
        var source: String?
    }

    var services: [Service] = []

    /// One entry of the layout: what kind of attribute and where it sits.
    struct Layout {
        var uuid: String
        var primary: Bool
        var source: String?
        var characteristics: [(uuid: String, flags: [String], source: String?, descriptors: [(uuid: String, flags: [String], source: String?)])]
    }

    /// Assigns handles: service, then per characteristic declaration + value, then its descriptors;
    /// a CCC (0x2902) is appended to notify/indicate characteristics that lack one.
    init(layout: [Layout]) {
        var next: UInt16 = 1
        func take() -> UInt16 { defer { next &+= 1 }; return next }
        for s in layout {
            var service = Service(handle: take(), uuid: s.uuid, primary: s.primary, characteristics: [], source: s.source)
            for c in s.characteristics {
                let decl = take()
                var chrc = Characteristic(handle: decl, valueHandle: take(), uuid: c.uuid, flags: c.flags,
                                          descriptors: [], source: c.source)
                for d in c.descriptors {
                    chrc.descriptors.append(Descriptor(handle: take(), uuid: d.uuid, flags: d.flags, source: d.source))
                }
                let ccc = BluetoothUUID.clientCharacteristicConfiguration
                if chrc.canNotify && !chrc.descriptors.contains(where: { $0.uuid == ccc }) {
                    chrc.descriptors.append(Descriptor(handle: take(), uuid: ccc, flags: ["read", "write"], source: nil))
                }
                service.characteristics.append(chrc)
            }
            services.append(service)
        }
    }

    /// The database of a simulated peripheral spec.
    init(spec: [SimulatedService]) {
        self.init(layout: spec.map { s in
            Layout(uuid: s.uuid, primary: s.primary, source: nil, characteristics: s.characteristics.map { c in
                (c.uuid, c.flags.map(\.rawValue), nil, c.descriptors.map { ($0.uuid, $0.flags, nil) })
            })
        })
    }

    // MARK: Lookup

    /// Finds a characteristic by value handle.
    func characteristic(valueHandle: UInt16) -> (service: Service, characteristic: Characteristic)? {
        for s in services {
            if let c = s.characteristics.first(where: { $0.valueHandle == valueHandle }) { return (s, c) }
        }
        return nil
    }

    /// Finds a descriptor by handle.
    func descriptor(handle: UInt16) -> (service: Service, characteristic: Characteristic, descriptor: Descriptor)? {
        for s in services {
            for c in s.characteristics {
                if let d = c.descriptors.first(where: { $0.handle == handle }) { return (s, c, d) }
            }
        }
        return nil
    }

    /// The first characteristic with `uuid` (optionally within service `serviceUUID`).
    func characteristic(uuid: String, service serviceUUID: String? = nil) -> Characteristic? {
        for s in services where serviceUUID == nil || s.uuid == serviceUUID {
            if let c = s.characteristics.first(where: { $0.uuid == uuid }) { return c }
        }
        return nil
    }
}
