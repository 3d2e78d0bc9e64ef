// DescriptorEntry: one descriptor in the owner thread's poll set (see `DescriptorWatch`).
import Synchronization

/// A watched descriptor and its handlers.
///
/// `@unchecked Sendable`: `descriptor`, `onReadable` and `onConnectionClosed` are read and
/// cleared only on the connection's owner thread (the watch is added, run and ended there; an
/// entry that never reached it is ended by the one thread that made it); `ended` and
/// `endRequested` are atomics.
final class DescriptorEntry: @unchecked Sendable {
    /// The descriptor number, valid while the entry holds `descriptor`.
    let fd: Int32
    private var descriptor: FileDescriptor?
    private var onReadable: (@Sendable () -> Bool)?
    private var onConnectionClosed: (@Sendable () -> Void)?
    private let ended = Atomic<Bool>(false)
    private let cancelled = Atomic<Bool>(false)

    init(_ descriptor: FileDescriptor, onReadable: @escaping @Sendable () -> Bool,
         onConnectionClosed: @escaping @Sendable () -> Void) {
        self.fd = descriptor.rawValue
        self.descriptor = descriptor
        self.onReadable = onReadable
        self.onConnectionClosed = onConnectionClosed
    }

    /// True once the entry has ended.
    var isEnded: Bool { ended.load(ordering: .acquiring) }

    /// True once the entry has ended or its cancellation was asked for.
    var endRequested: Bool { cancelled.load(ordering: .acquiring) || isEnded }

    /// Marks the cancellation asked for; true for the first caller.
    func requestEnd() -> Bool {
        !cancelled.exchange(true, ordering: .acquiringAndReleasing) && !isEnded
    }

    /// Runs the readable handler (owner thread); false when the watch should end.
    func ownerReadable() -> Bool {
        guard !endRequested, let handler = onReadable else { return true }
        return handler()
    }

    /// Ends the entry (owner thread, or the maker's thread if it never reached one): releases
    /// the descriptor and the handlers, and runs `onConnectionClosed` when the connection's
    /// closing ended it and nobody had cancelled it. Once only.
    func ownerEnd(connectionClosed: Bool) {
        guard !ended.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let closedHandler = onConnectionClosed
        onReadable = nil
        onConnectionClosed = nil
        descriptor = nil
        if connectionClosed && !cancelled.load(ordering: .acquiring) { closedHandler?() }
    }
}
