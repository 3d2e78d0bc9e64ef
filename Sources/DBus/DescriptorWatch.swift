// DescriptorWatch: input on a file descriptor, handled in a connection's owner-thread poll set.
import Glibc

// MARK: - DescriptorWatch

/// A file descriptor watched for input by a connection's owner thread, in the same `poll` as
/// the bus socket; made by ``Connection/watchInput(of:onReadable:onConnectionClosed:)``.
///
/// A descriptor read this way costs one thread wake-up per burst of input: the owner thread
/// wakes from its `poll`, runs the handler, and whatever the handler delivers to code running
/// on the owner thread (an `immediate` callback, a task on the connection's task executor) runs
/// there without another hop. A `DispatchSource` costs two: libdispatch's manager thread waits
/// in `epoll_wait` and hands each event to a worker thread.
///
/// The watch owns the descriptor until it ends; then the descriptor is released on the owner
/// thread (closed, when the watch held its last reference), never while a handler runs.
/// It ends when ``cancel()`` runs, when the handler returns false, or when the connection
/// closes.
public final class DescriptorWatch: Sendable {
    let entry: DescriptorEntry
    private let core: ConnectionCore

    init(entry: DescriptorEntry, core: ConnectionCore) {
        self.entry = entry
        self.core = core
    }

    /// Ends the watch from our side: the handler does not run again once the owner thread has
    /// taken the cancellation (a handler running now finishes), the descriptor is released after
    /// it, and `onConnectionClosed` never runs. Idempotent; any thread.
    public func cancel() {
        guard entry.requestEnd() else { return }
        let entry = self.entry
        let core = self.core
        // Never inline, even on the owner thread: a handler may be the caller, and the
        // descriptor must stay open until it has returned.
        if !core.enqueue({ core.ownerEnd(entry, connectionClosed: false) }) {
            // The connection closed: its shutdown ends (or has ended) every watch.
        }
    }

    /// False once the watch has ended or its cancellation was asked for.
    public var isActive: Bool { !entry.endRequested }
}

// MARK: - Connection

extension Connection {
    /// Watches `descriptor` for input on the owner thread: `onReadable` runs there each time
    /// `poll` reports it readable (or hung up, or in error), inside the loop's wake batch, until
    /// it returns false, ``DescriptorWatch/cancel()`` runs, or the connection closes.
    ///
    /// `onReadable` follows the owner thread's rule: it must not block. Read what is there with
    /// non-blocking calls and return true to keep watching; the poll is level-triggered, so what
    /// is left unread wakes it again at once (read a bounded amount per call: the bus's own
    /// messages wait while it runs). Return false at end of file or on an error: the watch ends
    /// and releases the descriptor.
    ///
    /// `onConnectionClosed` runs once if the connection closes while the watch is active (on the
    /// owner thread as it shuts down), or at once on the calling thread when the connection is
    /// already closed. It does not run after ``DescriptorWatch/cancel()`` or after `onReadable`
    /// returned false.
    public func watchInput(of descriptor: FileDescriptor,
                           onReadable: @escaping @Sendable () -> Bool,
                           onConnectionClosed: @escaping @Sendable () -> Void) -> DescriptorWatch {
        let entry = DescriptorEntry(descriptor, onReadable: onReadable, onConnectionClosed: onConnectionClosed)
        let core = self.core
        if !core.perform({ core.ownerAdd(entry) }) {
            entry.ownerEnd(connectionClosed: true)
        }
        return DescriptorWatch(entry: entry, core: core)
    }
}
