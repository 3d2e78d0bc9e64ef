// LocalApplication / LEAdvertisementData: what a bus client registered with GattManager1 and
// LEAdvertisingManager1 on a simulated adapter.

// MARK: - LEAdvertisementData

/// The LEAdvertisement1 properties the simulator read with Properties.GetAll.
public struct LEAdvertisementData: Sendable, Equatable {
    /// "broadcast" or "peripheral".
    public var type: String = "peripheral"
    /// ServiceUUIDs (normalized).
    public var serviceUUIDs: [String] = []
    /// LocalName.
    public var localName: String?
    /// ManufacturerData.
    public var manufacturerData: [UInt16: [UInt8]] = [:]
    /// ServiceData (keys normalized).
    public var serviceData: [String: [UInt8]] = [:]
    /// Includes ("tx-power", "appearance", "local-name").
    public var includes: [String] = []
    /// Appearance.
    public var appearance: UInt16?
    /// Discoverable.
    public var discoverable: Bool?
    /// TxPower.
    public var txPower: Int16?
    /// Data: other AD structures, AD type → data.
    public var data: [UInt8: [UInt8]] = [:]
    /// SolicitUUIDs (normalized).
    public var solicitUUIDs: [String] = []
    /// DiscoverableTimeout, seconds.
    public var discoverableTimeout: UInt16?
    /// Duration, seconds.
    public var duration: UInt16?
    /// Timeout, seconds.
    public var timeout: UInt16?
    /// MinInterval, ms (nil when the profile ignores it).
    public var minInterval: UInt32?
    /// MaxInterval, ms (nil when the profile ignores it).
    public var maxInterval: UInt32?
    /// SecondaryChannel.
    public var secondaryChannel: String?

    /// Empty advertisement data.
    public init() {}
}

// MARK: - LocalApplication

/// A GATT application a bus client registered on an adapter (`GattManager1.RegisterApplication`),
/// as read from its `GetManagedObjects`.
public struct LocalApplication: Sendable {
    /// One GattService1/GattCharacteristic1/GattDescriptor1 object of the application.
    public struct Attribute: Sendable, Equatable {
        /// Object path in the application's connection.
        public var path: String
        /// UUID (normalized).
        public var uuid: String
        /// Flags (characteristics and descriptors).
        public var flags: [String]
        /// Primary (services).
        public var primary: Bool
        /// Parent object path (Service for characteristics, Characteristic for descriptors).
        public var parent: String?
        /// The characteristic exports `NotifyAcquired`: the simulator, as bluetoothd, asks it for
        /// a socket (`AcquireNotify`) when the first central subscribes.
        public var notifyAcquired: Bool
        /// The characteristic exports `WriteAcquired`: the simulator asks it for a socket
        /// (`AcquireWrite`) at the first write without response and sends such writes on it.
        public var writeAcquired: Bool

        /// An attribute.
        public init(path: String, uuid: String, flags: [String] = [], primary: Bool = true, parent: String? = nil,
                    notifyAcquired: Bool = false, writeAcquired: Bool = false) {
            self.path = path
            self.uuid = uuid
            self.flags = flags
            self.primary = primary
            self.parent = parent
            self.notifyAcquired = notifyAcquired
            self.writeAcquired = writeAcquired
        }
    }

    /// The application's bus unique name.
    public var owner: String
    /// The root passed to RegisterApplication.
    public var root: String
    /// Services, characteristics, descriptors.
    public var services: [Attribute]
    /// Characteristics.
    public var characteristics: [Attribute]
    /// Descriptors.
    public var descriptors: [Attribute]

    /// An application.
    public init(owner: String, root: String, services: [Attribute], characteristics: [Attribute], descriptors: [Attribute]) {
        self.owner = owner
        self.root = root
        self.services = services.sorted { $0.path < $1.path }
        self.characteristics = characteristics.sorted { $0.path < $1.path }
        self.descriptors = descriptors.sorted { $0.path < $1.path }
    }

    /// The database layout (handles follow object path order, as bluetoothd registers them).
    var layout: [GattDatabase.Layout] {
        services.map { s in
            GattDatabase.Layout(uuid: s.uuid, primary: s.primary, source: s.path, characteristics:
                characteristics.filter { $0.parent == s.path }.map { c in
                    (c.uuid, c.flags, c.path, descriptors.filter { $0.parent == c.path }.map { ($0.uuid, $0.flags, $0.path) })
                })
        }
    }
}

// MARK: - ApplicationBridge

/// Options bluetoothd passes to an application's ReadValue/WriteValue/AcquireNotify.
public struct ServerRequestOptions: Sendable, Equatable {
    /// "device": the central's Device1 path under the application's adapter.
    public var device: String
    /// "link": "LE".
    public var link: String = "LE"
    /// "mtu".
    public var mtu: UInt16
    /// "offset".
    public var offset: UInt16
    /// "type" for writes ("request"/"command"/"reliable").
    public var type: String?
}

extension ApplicationBridge {
    /// Answers `NotSupported`: a bridge without sockets (the simulator then calls `StartNotify`).
    public func acquireNotify(owner: String, path: String, options: ServerRequestOptions,
                              _ done: @escaping @Sendable (Result<Int32, BlueZErrorReply>) -> Void) {
        done(.failure(BlueZErrorReply(name: "org.bluez.Error.NotSupported", message: "Operation is not supported")))
    }

    /// Answers `NotSupported`: a bridge without sockets (the simulator then calls `WriteValue`).
    public func acquireWrite(owner: String, path: String, options: ServerRequestOptions,
                             _ done: @escaping @Sendable (Result<Int32, BlueZErrorReply>) -> Void) {
        done(.failure(BlueZErrorReply(name: "org.bluez.Error.NotSupported", message: "Operation is not supported")))
    }
}

/// How the simulator reaches registered applications and advertisements on the bus.
/// The D-Bus face implements it; calls are made from the connection that owns `org.bluez`.
public protocol ApplicationBridge: AnyObject, Sendable {
    /// Calls `ReadValue(a{sv})` on `interface` at `path` of `owner`.
    func readValue(owner: String, path: String, interface: String, options: ServerRequestOptions,
                   _ done: @escaping @Sendable (Result<[UInt8], BlueZErrorReply>) -> Void)
    /// Calls `WriteValue(ay, a{sv})`.
    func writeValue(owner: String, path: String, interface: String, value: [UInt8], options: ServerRequestOptions,
                    _ done: @escaping @Sendable (Result<Void, BlueZErrorReply>) -> Void)
    /// Calls `StartNotify()` or `StopNotify()` on a characteristic (reply ignored).
    func setNotifying(owner: String, path: String, enabled: Bool)
    /// Calls `AcquireNotify(a{sv})` on a characteristic; `done` gets the application's end of the
    /// socket (a descriptor the callee owns from then on) or the error.
    func acquireNotify(owner: String, path: String, options: ServerRequestOptions,
                       _ done: @escaping @Sendable (Result<Int32, BlueZErrorReply>) -> Void)
    /// Calls `AcquireWrite(a{sv})` on a characteristic; `done` gets the application's end of the
    /// socket (owned by the callee from then on) or the error.
    func acquireWrite(owner: String, path: String, options: ServerRequestOptions,
                      _ done: @escaping @Sendable (Result<Int32, BlueZErrorReply>) -> Void)
    /// Calls `org.bluez.LEAdvertisement1.Release()` (reply ignored).
    func releaseAdvertisement(owner: String, path: String)
}
