// RemotePeer: the far side of a simulated LE link (a spec'd peripheral or another adapter's app).

// MARK: - CentralContext

/// Who is talking to a peer: the central's adapter and the link parameters.
struct CentralContext {
    var adapter: Int
    var address: String
    var mtu: UInt16
}

/// The attribute an ATT operation targets.
enum AttributeTarget {
    case characteristic(valueHandle: UInt16)
    case descriptor(handle: UInt16)
}

// MARK: - RemotePeer

/// Something an adapter can see advertising and connect to. Operations complete through their
/// callbacks, possibly later (a peer that is an app on another bus connection answers asynchronously).
protocol RemotePeer: AnyObject, Sendable {
    var address: String { get }
    /// The identity address a peer that uses privacy hands over when it bonds (nil: none).
    var identity: String? { get }
    /// The current advertisement, or nil when not advertising.
    var advertisement: AdvertisementSnapshot? { get }
    var mtu: UInt16 { get }
    var connectionDelay: Duration { get }
    var discoveryDelay: Duration { get }
    /// The GATT database (read at service discovery).
    var database: GattDatabase { get }

    func read(_ target: AttributeTarget, offset: Int, central: CentralContext,
              _ done: @escaping (Result<[UInt8], ATTError>) -> Void)
    func write(_ target: AttributeTarget, value: [UInt8], offset: Int, type: String, central: CentralContext,
               _ done: @escaping (Result<Void, ATTError>) -> Void)
    func subscriptionChanged(valueHandle: UInt16, enabled: Bool, central: CentralContext)
    func connectionChanged(central: CentralContext, connected: Bool)
    /// Whether the peer leaves this read unanswered (counting it: ``SimulatedPeripheral/unansweredReads``).
    func leavesUnanswered(_ target: AttributeTarget) -> Bool
}

extension RemotePeer {
    /// No privacy: the address is the identity.
    var identity: String? { nil }
    /// Answers every read.
    func leavesUnanswered(_ target: AttributeTarget) -> Bool { false }
}
