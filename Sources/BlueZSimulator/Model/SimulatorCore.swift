// SimulatorCore: the simulated bluetoothd's state machine, bus-free. Every change it makes to
// the object tree comes out of `store` as the ObjectEvent bluetoothd would signal.
//
// This file holds its state; each responsibility is an extension in its own file, or a
// collaborator that owns its state: +Adapters (bring-up, Adapter1 properties, power),
// +Discovery (sessions, filters, device reports), +Connection (Connect/Disconnect, link loss,
// ServicesResolved, Device1 settings), +Pairing (agents, Pair, CancelPairing), GattPublisher (a
// connected device's GATT objects and their index), +GattClient (read, write, notify, acquire on
// remote objects), +LocalRegistrations (applications and advertisements of the peripheral role),
// +World (simulated peripherals and the radio faults), +Monitors (advertisement monitors),
// +ATTTimeout (a request the peer leaves unanswered, the bearer closed after the ATT timeout).

import Dispatch
import Timing

// MARK: - SimulatorCore

/// The simulated bluetoothd without a bus: adapters, remote devices, discovery sessions,
/// connections, GATT, applications and advertisements, and the fault operations.
///
/// Confined to one executor: call it only from the simulator's queue (or, in unit tests with a
/// `ManualClock`, from the test's thread). It is `@unchecked Sendable` so it can be captured by
/// the scheduled closures that run on that same executor.
public final class SimulatorCore: @unchecked Sendable {
    /// The published objects.
    public let store: ObjectStore
    /// Every delay of the model (connection, discovery, delayed replies, storms) runs on it.
    let clock: any TimerClock
    /// The queue acquired sockets are watched on (the simulator's queue).
    let queue: DispatchQueue
    var adapters: [Int: AdapterState] = [:]
    /// Spec'd peripherals by address, with the adapters that can hear them (nil: all).
    var peripherals: [String: (peer: PeripheralPeer, range: Set<Int>?)] = [:]
    /// Virtual-radio peers: advertising adapter index → its peer object.
    var adapterPeers: [Int: AdapterPeer] = [:]
    /// The published GATT objects of connected devices, and their index.
    let gatt: GattPublisher
    /// Reaches registered applications/advertisements (set by the D-Bus face).
    public weak var bridge: ApplicationBridge?
    /// Fault: publish ServicesResolved=true this long BEFORE the GATT objects (nil: BlueZ order).
    public var servicesResolvedEarly: Duration?
    /// Fault: a central's `Connected = true` is stored (a `Get` reads it) but not signalled, as
    /// bluetoothd 5.66 does with btvirt when the ATT channel is up before mgmt's Device Connected
    /// event (Scripts/bluez-vm/README.md, lesson 11).
    public var connectedSignalWithheld = false
    /// How long a Connect to an unreachable device takes to fail.
    public var connectFailureDelay: Duration = .milliseconds(50)
    /// How long `Adapter1.ConnectDevice` waits to hear its address before `org.bluez.Failed`
    /// (Linux's LE connection timeout is 20 s; shorter here so tests need not wait that long).
    public var connectDeviceTimeout: Duration = .seconds(2)
    /// How often a pending `ConnectDevice` looks again for its address (the kernel's scan window).
    public var connectDeviceScanWindow: Duration = .milliseconds(100)
    /// bluetoothd's `TemporaryTimeout`: how long it keeps a temporary device, one never
    /// connected after discovery stops, or one neither paired nor trusted after its link
    /// dropped, before removing its object (nil: never).
    public var temporaryDeviceTimeout: Duration? = .seconds(30)
    /// How long bluetoothd takes, after a Service Changed indication, to read the changed range
    /// from the device again: the objects of the changed services go at once, the new ones come
    /// this much later (zero: in the same moment). Against a Bumble peer over RootCanal,
    /// bluetoothd 5.66 and 5.82 removed and added them as two separate steps.
    public var serviceRediscoveryDelay: Duration = .milliseconds(200)
    /// Negotiated MTU cap of the simulated controllers.
    public var maximumMTU: UInt16 = 517
    /// Advertising instances each adapter supports.
    public var supportedAdvertisingInstances: UInt8 = 5
    /// The controller's advertising data and scan response maximum (`MaxAdvLen`,
    /// `MaxScnRspLen`): 31, a legacy-only controller.
    public var maxAdvertisingDataLength: UInt8 = 31
    /// `SupportedSecondaryChannels` (extended advertising); empty: not exported.
    public var supportedSecondaryChannels: [String] = []
    /// `SupportedFeatures`.
    public var supportedAdvertisingFeatures: [String] = ["CanSetTxPower"]
    /// Fast path for notification bursts: given a characteristic path, returns a function that
    /// emits one Value PropertiesChanged (set by the D-Bus face; nil: through the store).
    public var burstEmitter: ((String) -> ([UInt8]) -> Void)?
    var storm: ClockTask?
    /// The paced notification source (SimulatorCore+NotifyPace), kept after it ends for its status.
    var notifyPace: NotifyPace?
    var stormTick = 0
    /// The BlueZ release imitated: which interfaces, methods and properties are exported. Set
    /// before adapters are published (``BlueZSimulator/start(busAddress:adapters:profile:experimental:clock:)``).
    public var profile: BlueZProfile = .bluez5_66 {
        didSet { gatt.includesMTU = profile.characteristicMTU }
    }
    /// bluetoothd runs with `--experimental` (``BlueZProfile/experimental``): adapters export
    /// `AdvertisementMonitorManager1` when the release has it.
    public var experimental: Bool {
        get { profile.exportsAdvertisementMonitorManager }
        set { profile.experimental = newValue }
    }
    /// Reaches registered monitoring apps (set by the D-Bus face).
    public weak var monitorBridge: MonitorBridge?
    /// Registered advertisement monitoring apps by (owner, root).
    var monitorApps: [AdvertisementKey: MonitorApp] = [:]
    /// Agents and pairings in progress (SimulatorCore+Pairing).
    var pairing = PairingRegistry()
    var pairingTimeoutValue: Duration = .seconds(30)
    /// How long `Device1.Disconnect` of a connected device waits before the link goes down
    /// (bluetoothd's DISCONNECT_TIMER, 2 s; zero here by default, so tests need not wait). A
    /// `Connect` meanwhile is answered at once (already connected); a drop ends the wait.
    public var disconnectDelay: Duration = .zero
    /// bluetoothd's ATT transaction timeout (30 s): how long a request the peer leaves unanswered
    /// (``SimulatedPeripheral/leavesReadsUnanswered(of:count:)``) holds the link's GATT requests
    /// before the bearer closes (SimulatorCore+ATTTimeout).
    public var attTimeout: Duration = .seconds(30)
    /// How long the link stays up (`Connected` true, every GATT call "Not connected") after the
    /// ATT timeout closed the bearer, before it drops: about 2 s with bluetoothd 5.66.
    public var linkDropAfterATTTimeout: Duration = .seconds(2)
    /// How long after the controller's connection event the ATT channel is up (zero: at once,
    /// `Connect` answered before `Connected` = true, as with btvirt). Otherwise `Connected` = true
    /// goes out at the event and `Connect` is answered when the channel is up, as bluetoothd does
    /// on Linux 6.x, whose kernel first reads the peer's LE features; a `Pair` or `Connect`
    /// meanwhile fails `InProgress` (bluetoothd 5.82; 5.66 leaves such a `Pair` unanswered).
    public var attChannelDelay: Duration = .zero
    /// How long the old ATT bearer outlives a link (zero: it goes with the link). bluetoothd 5.82
    /// releases it when the kernel's disconnection event reaches it, which can come after it
    /// answered our `Disconnect` and sent `Connected` = false; a `Connect` meanwhile fails
    /// `Failed` "Operation already in progress" (device_connect_le: -EALREADY).
    public var attTeardownDelay: Duration = .zero

    typealias GattObjectKind = GattPublisher.ObjectKind

    /// A core publishing into `store` and timing its delays with `clock`; sockets are watched on `queue`.
    public init(clock: any TimerClock, queue: DispatchQueue, sink: @escaping (ObjectEvent) -> Void = { _ in }) {
        self.clock = clock
        self.queue = queue
        self.store = ObjectStore(sink: sink)
        self.gatt = GattPublisher(store: store)
    }

    /// Replaces the event sink.
    public func setSink(_ sink: @escaping (ObjectEvent) -> Void) { store.sink = sink }

    // MARK: GATT objects (GattPublisher)

    /// Publishes `device`'s GATT objects at its link's MTU.
    func publishGatt(_ device: DeviceState) { gatt.publish(device, mtu: central(for: device).mtu) }

    /// Removes `device`'s GATT objects, ends its notification sessions, closes its sockets.
    func unpublishGatt(_ device: DeviceState) { gatt.unpublish(device) }
}
