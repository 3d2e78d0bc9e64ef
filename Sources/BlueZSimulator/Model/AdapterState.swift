// AdapterState / DeviceState: the per-adapter and per-device state of the simulated bluetoothd.

import Timing

// MARK: - AdapterState

/// One simulated controller (hciN) and what bluetoothd tracks for it.
// Confined to the simulator's queue (see SimulatorCore); `@unchecked Sendable` only so scheduled
// closures running on that same queue may capture it.
final class AdapterState: @unchecked Sendable {
    struct DiscoveryClient {
        var filter: DiscoveryFilter?
        var active: Bool
    }

    let index: Int
    let address: String
    var systemName: String
    var alias: String?
    var powered = true
    var discoverable = false
    /// `DiscoverableTimeout` in seconds (0: forever); bluetoothd's default is 180.
    var discoverableTimeout: UInt32 = 180
    /// Turns Discoverable off when the timeout passes.
    var discoverableWork: ClockTask?
    var pairable = true
    var discovering = false
    /// Discovery clients by bus unique name (with a filter, active or not).
    var discoveryClients: [String: DiscoveryClient] = [:]
    /// Remote devices by address.
    var devices: [String: DeviceState] = [:]
    /// Bonded peers that use privacy: identity address → the key in `devices` of their device
    /// (the private address it was found at). Their later private addresses resolve to it.
    var bondedIdentities: [String: String] = [:]
    /// The most LE links the simulated controller holds (nil: no limit); see
    /// ``SimulatorCore/setConnectionLimit(_:adapter:)``.
    var connectionLimit: Int?
    /// Added to every RSSI this adapter hears (a controller farther from the peers: negative);
    /// see ``SimulatorCore/setRSSIOffset(_:adapter:)``.
    var rssiOffset: Int16 = 0
    /// Registered advertisements by (owner, path).
    var advertisements: [AdvertisementKey: LEAdvertisementData] = [:]
    /// Registered GATT applications by (owner, root).
    var applications: [AdvertisementKey: LocalApplication] = [:]

    init(index: Int, name: String, address: String? = nil) {
        self.index = index
        self.address = address ?? BluetoothAddress.adapter(index)
        self.systemName = name
    }

    var path: String { BlueZPath.adapter(index) }

    /// Active clients' filters; nil entries mean "no filter" (report everything).
    var activeFilters: [DiscoveryFilter?] {
        discoveryClients.values.filter(\.active).map(\.filter)
    }

    /// Whether any active filter matches (bluetoothd merges filters: devices are reported to all).
    func matchesMergedFilter(_ ad: AdvertisementSnapshot) -> Bool {
        activeFilters.contains { $0?.matches(ad) ?? true }
    }

    /// RSSI delta threshold: 8 dBm unless a client asked for proximity (RSSI/Pathloss).
    var rssiDeltaThreshold: Int {
        activeFilters.contains { $0?.hasProximity ?? false } ? 0 : 8
    }

    /// Whether any active filter asks for DuplicateData.
    var duplicateData: Bool { activeFilters.contains { $0?.duplicateData ?? false } }
}

/// (bus unique name, object path).
struct AdvertisementKey: Hashable {
    var owner: String
    var path: String
}

// MARK: - DeviceState

/// A remote device object (Device1) under one adapter.
// Confined to the simulator's queue (see SimulatorCore); `@unchecked Sendable` only so scheduled
// closures running on that same queue may capture it.
final class DeviceState: @unchecked Sendable {
    enum Link {
        case disconnected
        case connecting
        case connected
        case disconnecting
    }

    let adapter: Int
    let address: String
    let path: String
    var peer: RemotePeer?
    var link: Link = .disconnected
    var servicesResolved = false
    var pendingConnects: [(Result<Void, BlueZErrorReply>) -> Void] = []
    var connectWork: ClockTask?
    var temporaryWork: ClockTask?
    /// GATT object paths published for this device (when connected).
    var gattPaths: [String] = []
    /// Characteristic value handle → bus names with a StartNotify session.
    var notifySessions: [UInt16: Set<String>] = [:]
    /// Characteristic value handle → acquired notify socket.
    var acquiredNotify: [UInt16: AcquiredSocket] = [:]
    /// Characteristic value handle → acquired write socket.
    var acquiredWrite: [UInt16: AcquiredSocket] = [:]
    /// The central side of a virtual-radio link: the device object for our adapter on the peer adapter.
    var isCentralMirror = false
    /// Whether the current link is encrypted (with the bond's keys, or by a pairing on it).
    var isEncrypted = false
    /// `Disconnect` calls waiting for ``SimulatorCore/disconnectDelay`` (answered when the link is down).
    var pendingDisconnects: [(Result<Void, BlueZErrorReply>) -> Void] = []
    var disconnectWork: ClockTask?
    /// The ATT bearer (SimulatorCore+ATTTimeout): a request the peer left unanswered holds these
    /// (it first, then the GATT calls made after it) until the ATT timeout, `attTimer`.
    var attHeld: [(BlueZErrorReply) -> Void] = []
    var attTimer: ClockTask?
    /// The ATT bearer closed after its timeout while the link is still up: GATT calls fail
    /// "Not connected" until the link drops (`attTimer` again, then the drop).
    var attClosed = false
    /// Connected, the ATT channel not up yet (``SimulatorCore/attChannelDelay``): the Connect is
    /// unanswered.
    var attChannelPending = false
    /// While set, the link is down and its old ATT bearer not released yet
    /// (``SimulatorCore/attTeardownDelay``): a Connect fails "Operation already in progress".
    var attTeardownWork: ClockTask?

    init(adapter: Int, address: String) {
        self.adapter = adapter
        self.address = address
        self.path = BlueZPath.device(adapter: adapter, address: address)
    }

    var connected: Bool { link == .connected || link == .disconnecting }
    /// Whether GATT calls reach the peer: the link is up and its ATT bearer open.
    var gattUp: Bool { link == .connected && !attClosed }
}
