// L2CAPChannel: one open LE credit-based L2CAP channel, either role.
import BlueZ
import Dispatch
import Foundation
import Futures
import Locking

/// An open L2CAP connection-oriented channel (LE credit-based flow control): a stream of
/// SDUs (messages of up to ``sendMTU`` / ``receiveMTU`` bytes) to and from one device,
/// outside GATT. Made by ``Peripheral/openL2CAPChannel(psm:security:capacity:timeout:)``
/// (central) or received from ``L2CAPPublication/channels`` (peripheral).
///
/// **Receiving, with backpressure.** ``receive()`` returns the next SDU; ``received`` is the
/// same as an `AsyncSequence`. At most ``capacity`` SDUs wait in the channel for the app: when
/// that many are waiting the channel stops reading its socket, the kernel's buffer fills and
/// stops giving the remote credits, so the *remote sender waits* — nothing is dropped. (Kernels
/// that return LE credits as SDUs arrive rather than as they are read, such as Linux 6.1, do
/// not hold the remote back: keep reading; see the "L2CAP channels" article.)
///
/// **Sending.** ``send(_:)`` splits data into SDUs of at most ``sendMTU`` bytes; its future
/// completes when the kernel took the last one (the remote's credits pace it). At most
/// ``capacity`` sends may be outstanding: one more fails at once with `.busy` (await a send
/// before the next to stay within it).
///
/// **Closing.** ``close()`` closes it here; ``whenClosed()`` completes when either side closed
/// it (``L2CAPChannel/Closure``). The remote closing is seen after the SDUs it sent were
/// received: ``receive()`` then fails with `.disconnected` and ``received`` ends. A channel
/// nobody references any more is closed.
///
/// `@unchecked Sendable`: `fd`, the sources and the constants are set once in `init`;
/// everything that changes is in `state`, behind its lock; the sources' handlers run on `queue`.
public final class L2CAPChannel: @unchecked Sendable, CustomStringConvertible {
    // MARK: Types

    /// How a channel ended.
    public enum Closure: Sendable, Equatable {
        /// ``L2CAPChannel/close()`` here.
        case local
        /// The remote closed it (end of file on the socket).
        case remote
        /// The link or the channel failed (`errno`'s text: "Connection reset by peer",
        /// "Connection timed out"…).
        case failed(String)
    }

    struct State {
        var buffered: [Data] = []
        var receivers: [Promise<Data>] = []
        var readSuspended = false
        var sends: [(chunks: [Data], promise: Promise<Void>)] = []
        var writeResumed = false
        var closure: Closure?
    }

    // MARK: Properties

    /// The remote device's address (`Device1.Address`).
    public let remoteAddress: String
    /// The channel's PSM (protocol/service multiplexer): the published one.
    public let psm: UInt16
    /// The largest SDU this side may send (`BT_SNDMTU`, the remote's receive MTU).
    public let sendMTU: Int
    /// The largest SDU this side accepts (`BT_RCVMTU`).
    public let receiveMTU: Int
    /// How many received SDUs wait for the app before the channel stops reading (and so the
    /// remote's sending waits), and how many sends may be outstanding.
    public let capacity: Int

    private let fd: Int32
    private let queue: DispatchQueue
    private let readSource: any DispatchSourceRead
    private let writeSource: any DispatchSourceWrite
    let state = Locked(State())
    private let closed = Promise<Closure>()

    /// A channel over the connected `SOCK_SEQPACKET` socket `fd` (taken: closed with the channel).
    init(fd: Int32, remoteAddress: String, psm: UInt16, sendMTU: Int, receiveMTU: Int, capacity: Int) {
        self.fd = fd
        self.remoteAddress = remoteAddress
        self.psm = psm
        self.sendMTU = max(sendMTU, 1)
        self.receiveMTU = max(receiveMTU, 1)
        self.capacity = max(capacity, 1)
        queue = DispatchQueue(label: "bluecap.l2cap.\(remoteAddress).\(psm)")
        readSource = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        writeSource = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
        // Both sources must be cancelled before the descriptor is closed: the last cancel
        // handler closes it.
        let cancelled = Locked(0)
        let closeWhenBoth: @Sendable () -> Void = {
            if cancelled.withLock({ n in n += 1; return n }) == 2 { L2CAPSocketCalls.close(fd) }
        }
        readSource.setCancelHandler(handler: closeWhenBoth)
        writeSource.setCancelHandler(handler: closeWhenBoth)
        readSource.setEventHandler { [weak self] in self?.readable() }
        writeSource.setEventHandler { [weak self] in self?.flush() }
        readSource.resume()
    }

    deinit { close() }

    /// `"L2CAP PSM 0x0080 to AA:BB:…"`.
    public var description: String {
        "L2CAP PSM 0x\(String(psm, radix: 16)) to \(remoteAddress) (send MTU \(sendMTU), receive MTU \(receiveMTU))"
    }

    /// Whether neither side has closed the channel.
    public var isOpen: Bool { state.withLock { $0.closure == nil } }

    // MARK: Receiving

    /// The next SDU the remote sent. Fails with `.disconnected` once the channel is closed and
    /// every SDU received before was taken; with `.busy` when ``capacity`` receives are
    /// already waiting. Async: `try await channel.receive().value`.
    public func receive() -> Future<Data> {
        enum Outcome { case data(Data), wait(Promise<Data>), fail(BlueCapError) }
        // The read source is suspended and resumed under the lock, with `readSuspended`: the
        // two never cross (a resume before its suspend would trap in Dispatch).
        let outcome = state.withLock { s -> Outcome in
            if !s.buffered.isEmpty {
                let d = s.buffered.removeFirst()
                if s.readSuspended && s.closure == nil {
                    s.readSuspended = false
                    readSource.resume()
                }
                return .data(d)
            }
            if let closure = s.closure { return .fail(Self.closedError(closure, "receive")) }
            guard s.receivers.count < capacity else {
                return .fail(BlueCapError(kind: .busy, operation: "L2CAPChannel.receive",
                                          message: "\(capacity) receives already wait on \(self.description): await one before asking for more"))
            }
            let p = Promise<Data>()
            s.receivers.append(p)
            return .wait(p)
        }
        switch outcome {
        case .data(let d): return Future(value: d)
        case .wait(let p): return p.future
        case .fail(let e): return Future(error: e)
        }
    }

    /// The SDUs the remote sends, in order, until it closes the channel (the sequence ends) or
    /// the channel fails (it throws). Each element is asked for with ``receive()`` as the loop
    /// takes it, so a slow loop slows the remote sender (see the type's backpressure note).
    public var received: AsyncThrowingStream<Data, any Error> {
        AsyncThrowingStream(unfolding: { [self] in
            do { return try await receive().value } catch let e as BlueCapError where e.kind == .disconnected {
                if case .failed = state.withLock({ $0.closure }) { throw e }
                return nil
            }
        })
    }

    /// On `queue`: reads SDUs until the socket is empty or ``capacity`` wait.
    ///
    /// An end of file is read twice before it counts: a Bluetooth socket whose remote
    /// disconnected may answer one `recv` with the end (the teardown's error, reported as 0 once
    /// the socket is shut down) while SDUs received before the disconnection are still queued,
    /// and hand them to the next `recv`. Seen in the VM tier when the reader ran late.
    private func readable() {
        var endSeen: Int32?
        while true {
            let full = state.withLock { s -> Bool in
                // Ended meanwhile (`close()` from another thread): its sources are resumed and
                // cancelled, and a suspend now would keep the cancel handler, which closes the
                // socket, from ever running (the remote would never see the close).
                if s.closure != nil { return true }
                guard s.buffered.count >= capacity, s.receivers.isEmpty else { return false }
                if !s.readSuspended {
                    s.readSuspended = true
                    readSource.suspend()
                }
                return true
            }
            if full { return }
            switch L2CAPSocketCalls.receive(fd, capacity: receiveMTU) {
            case .sdu(let bytes):
                let d = Data(bytes)
                let receiver = state.withLock { s -> Promise<Data>? in
                    if s.closure == .local { return nil }  // closed here: what was not taken is dropped
                    if s.receivers.isEmpty { s.buffered.append(d); return nil }
                    return s.receivers.removeFirst()
                }
                receiver?.success(d)
            case .empty: return
            case .closed(let code):
                guard let first = endSeen else {
                    endSeen = code
                    continue
                }
                end(first == 0 ? .remote : .failed(L2CAPSocketCalls.describe(first)))
                return
            }
        }
    }

    // MARK: Sending

    /// Sends `data` as SDUs of at most ``sendMTU`` bytes (one SDU when it fits). Completes when
    /// the kernel took the last SDU; fails with `.disconnected` when the channel is closed, with
    /// `.busy` when ``capacity`` sends are outstanding. Async: `try await channel.send(d).value`.
    public func send(_ data: Data) -> Future<Void> {
        var chunks: [Data] = []
        var offset = data.startIndex
        repeat {
            let end = min(offset + sendMTU, data.endIndex)
            chunks.append(data[offset..<end])
            offset = end
        } while offset < data.endIndex
        let outcome = state.withLock { s -> Result<Promise<Void>, BlueCapError> in
            if let closure = s.closure { return .failure(Self.closedError(closure, "send")) }
            guard s.sends.count < capacity else {
                return .failure(BlueCapError(kind: .busy, operation: "L2CAPChannel.send",
                                             message: "\(capacity) sends are outstanding on \(self.description): await one before sending more"))
            }
            let promise = Promise<Void>()
            s.sends.append((chunks, promise))
            return .success(promise)
        }
        switch outcome {
        case .failure(let error): return Future(error: error)
        case .success(let promise):
            queue.async { [weak self] in self?.flush() }
            return promise.future
        }
    }

    /// On `queue`: sends what it can; waits for the socket to be writable when it is full.
    private func flush() {
        while true {
            let next = state.withLock { s -> Data? in
                guard s.closure == nil else { return nil }
                return s.sends.first?.chunks.first
            }
            guard let chunk = next else { break }
            switch chunk.withUnsafeBytes({ L2CAPSocketCalls.send(fd, $0) }) {
            case .sent:
                let done = state.withLock { s -> Promise<Void>? in
                    guard !s.sends.isEmpty else { return nil }
                    s.sends[0].chunks.removeFirst()
                    return s.sends[0].chunks.isEmpty ? s.sends.removeFirst().promise : nil
                }
                done?.success(())
            case .full:
                state.withLock { s in
                    if !s.writeResumed {
                        s.writeResumed = true
                        writeSource.resume()
                    }
                }
                return
            case .closed(let code):
                end(code == 0 || code == EPIPE ? .remote : .failed(L2CAPSocketCalls.describe(code)))
                return
            }
        }
        state.withLock { s in
            guard s.writeResumed, s.closure == nil else { return }
            s.writeResumed = false
            writeSource.suspend()
        }
    }

    // MARK: Closing

    /// How the channel ended, when it does: ``Closure/remote`` when the remote closed it.
    public func whenClosed() -> Future<Closure> { closed.future }

    /// Closes the channel (the remote sees it closed). Outstanding sends and receives fail
    /// with `.disconnected`; SDUs received and not taken are dropped. Idempotent.
    public func close() { end(.local) }

    private func end(_ closure: Closure) {
        let taken = state.withLock { s -> (receivers: [Promise<Data>], sends: [Promise<Void>])? in
            guard s.closure == nil else { return nil }
            s.closure = closure
            if closure == .local { s.buffered.removeAll() }
            let t = (s.receivers, s.sends.map(\.promise))
            s.receivers.removeAll()
            s.sends.removeAll()
            // A suspended source must be resumed before it is cancelled (or released).
            if s.readSuspended { readSource.resume() }
            if !s.writeResumed { writeSource.resume() }
            s.readSuspended = false
            s.writeResumed = true
            return t
        }
        guard let taken else { return }
        readSource.cancel()
        writeSource.cancel()
        for r in taken.receivers { r.failure(Self.closedError(closure, "receive")) }
        for p in taken.sends { p.failure(Self.closedError(closure, "send")) }
        closed.success(closure)
    }

    static func closedError(_ closure: Closure, _ operation: String) -> BlueCapError {
        let why: String
        switch closure {
        case .local: why = "the channel was closed here (L2CAPChannel.close)"
        case .remote: why = "the remote closed the channel"
        case .failed(let reason): why = "the channel failed: \(reason) (the link was lost: is the device in range?)"
        }
        return BlueCapError(kind: .disconnected, operation: "L2CAPChannel.\(operation)", message: why)
    }
}
