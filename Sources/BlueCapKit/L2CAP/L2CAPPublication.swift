// L2CAPPublication: a published L2CAP PSM, its incoming channels, and the handle that unpublishes it.
import BlueZ
import Dispatch
import Futures
import Locking

/// An L2CAP PSM this process listens on, made by
/// ``PeripheralManager/publishL2CAPChannel(psm:security:capacity:accepting:)``: centrals connect to
/// ``psm`` at ``address`` and each connection arrives on ``channels`` as an open
/// ``L2CAPChannel``. ``unpublish()`` (or releasing the publication) stops listening; channels
/// already open stay open.
///
/// **Who may connect.** Any central in radio range that can reach ``psm`` at ``address``,
/// unless ``security`` asks for an encrypted link (``L2CAPSecurity/medium``: the kernel
/// refuses a central whose link is not encrypted, so a paired or bonded one), and unless the
/// `accepting` check given to `publishL2CAPChannel` refuses its address: such a channel is
/// closed at once, never delivered, and counted in ``refusedCount``. What a channel carries is
/// bounded: SDUs of at most ``L2CAPChannel/receiveMTU`` bytes, at most ``L2CAPChannel/capacity``
/// of them waiting.
///
/// `@unchecked Sendable`: `listener` is set once in `init`; `open` (behind its lock)
/// makes the teardown run once; the source's handler runs on `queue`.
public final class L2CAPPublication: @unchecked Sendable, CustomStringConvertible {
    // MARK: Properties

    /// The PSM centrals connect to: the one given, or the one the kernel chose (0x0080–0x00FF).
    public let psm: UInt16
    /// The local adapter's address (`Adapter1.Address`) the PSM is published on.
    public let address: String
    /// The security a connecting central's link must have.
    public let security: L2CAPSecurity

    /// The listening socket and its source; nil for a publication on BlueZSimulator's loopback.
    private let listener: (fd: Int32, source: any DispatchSourceRead)?
    /// Unregisters a loopback publication.
    private let unregister: (@Sendable () -> Void)?
    private let incoming: StreamPromise<L2CAPChannel>
    private let open = Locked(true)
    private let capacity: Int
    /// The app's check of a connecting central's address (nil: every central).
    private let accepting: (@Sendable (String) -> Bool)?
    private let refused: Locked<Int>

    // MARK: Making

    /// Listens on the bound socket `fd`; accepted channels get `capacity`.
    init(fd: Int32, psm: UInt16, address: String, security: L2CAPSecurity, capacity: Int,
         accepting: (@Sendable (String) -> Bool)?) {
        self.accepting = accepting
        refused = Locked(0)
        self.psm = psm
        self.address = address
        self.security = security
        self.capacity = max(capacity, 1)
        incoming = StreamPromise<L2CAPChannel>(capacity: max(capacity, 1))
        unregister = nil
        let queue = DispatchQueue(label: "bluecap.l2cap.listen.\(psm)")
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        listener = (fd, source)
        source.setEventHandler { [weak self] in self?.acceptAll() }
        source.setCancelHandler { L2CAPSocketCalls.close(fd) }
        source.resume()
    }

    /// A publication on BlueZSimulator's loopback: `register` gets the delivery of each
    /// incoming socket and returns the PSM; `unregister` undoes it.
    init(loopback register: (@escaping L2CAPLoopback.Deliver) throws(L2CAPSocketError) -> UInt16,
         unregister: @escaping @Sendable (UInt16) -> Void,
         address: String, security: L2CAPSecurity, capacity: Int,
         accepting: (@Sendable (String) -> Bool)?) throws(L2CAPSocketError) {
        let incoming = StreamPromise<L2CAPChannel>(capacity: max(capacity, 1))
        let capacity = max(capacity, 1)
        let psmBox = Locked<UInt16>(0)
        let refused = Locked(0)
        let psm = try register { fd, peer in
            if let accepting, !accepting(peer) {
                refused.withLock { $0 += 1 }
                L2CAPSocketCalls.close(fd)
                return
            }
            _ = incoming.success(L2CAPChannel(fd: fd, remoteAddress: peer, psm: psmBox.withLock { $0 }, sendMTU: L2CAPLoopback.mtu,
                                              receiveMTU: L2CAPLoopback.mtu, capacity: capacity))
        }
        psmBox.withLock { $0 = psm }
        self.psm = psm
        self.address = address
        self.security = security
        self.capacity = capacity
        self.incoming = incoming
        self.accepting = accepting
        self.refused = refused
        listener = nil
        self.unregister = { unregister(psm) }
    }

    deinit { unpublish() }

    /// `"L2CAP PSM 0x0080 on AA:BB:…"`.
    public var description: String { "L2CAP PSM 0x\(String(psm, radix: 16)) on \(address)" }

    /// Whether the PSM is still published.
    public var isPublished: Bool { open.withLock { $0 } }

    /// How many connecting centrals the `accepting` check refused (their channels were closed
    /// at once).
    public var refusedCount: Int { refused.withLock { $0 } }

    // MARK: Channels

    /// Each channel a central opens to ``psm``, open, in the order they were accepted. The
    /// stream keeps the last `capacity` channels for a subscriber that comes later (as every
    /// `FutureStream`), so a channel the app does not keep is closed once `capacity` newer
    /// ones came or the publication is released; close the channels you are done with. Ends
    /// (finishes) on ``unpublish()``. Async: `for try await channel in publication.channels.values`.
    public var channels: FutureStream<L2CAPChannel> { incoming.stream }

    /// Stops listening (the kernel refuses new connections to the PSM); channels already open
    /// stay open. Idempotent.
    public func unpublish() {
        guard open.withLock({ o in defer { o = false }; return o }) else { return }
        listener?.source.cancel()
        unregister?()
        _ = incoming.finish()
    }

    /// On the source's queue: accepts every waiting connection.
    private func acceptAll() {
        guard let fd = listener?.fd else { return }
        while isPublished {
            do {
                guard let (client, peer) = try L2CAPSocketCalls.accept(fd) else { return }
                // The app's check runs here, on the listener's queue, no lock held.
                if let accepting, !accepting(peer.address) {
                    refused.withLock { $0 += 1 }
                    L2CAPSocketCalls.close(client)
                    continue
                }
                let mtus = L2CAPSocketCalls.mtus(client)
                let channel = L2CAPChannel(fd: client, remoteAddress: peer.address, psm: psm,
                                           sendMTU: mtus.send, receiveMTU: mtus.receive, capacity: capacity)
                _ = incoming.success(channel)
            } catch {
                _ = incoming.failure(L2CAPErrors.error(error, operation: "L2CAPPublication.channels (accept)", psm: psm, address: address))
                return
            }
        }
    }
}
