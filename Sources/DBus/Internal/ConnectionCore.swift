// The engine behind `Connection`: the owner thread, its poll loop, and libdbus's callbacks.
import Foundation
import Glibc
import Synchronization
import Locking

/// Owns one libdbus connection and the thread that runs it.
///
/// `@unchecked Sendable`: every libdbus call on `raw` and every `owner*` property happen on the
/// owner thread (the thread started in `start()`); other threads reach them only by submitting
/// closures to `jobs`. Cross-thread state lives in `Locked`/`Atomic` properties
/// (`signals`, `exports`, `isClosed`); `ownerThread` is written once before `start()` returns.
final class ConnectionCore: LibDBusLoopDelegate, @unchecked Sendable {
    let raw: RawConnection
    let uniqueName: String
    let address: String
    let jobs = JobQueue()
    let isClosed = Atomic<Bool>(false)
    let signals = Locked(SignalTable())
    let exports = Locked(ExportTable())
    /// Counters for tests and diagnostics.
    let stats = Locked(Stats())
    /// Internal name-owner watches feeding `SignalTable.owners`.
    let ownerWatches = Locked<[String: SignalSubscription]>([:])

    struct Stats: Sendable {
        var addMatchSent = 0
        var removeMatchSent = 0
    }

    private var ownerThread = pthread_t()
    private let started = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    // MARK: Owner-thread state
    private final class WatchEntry {
        let raw: RawWatch
        var fd: Int32 = -1, read = false, write = false, enabled = false, removed = false
        init(_ raw: RawWatch) { self.raw = raw }
    }
    private final class TimeoutEntry {
        let raw: RawTimeout
        var intervalNanos: UInt64 = 0, deadline: UInt64 = 0, enabled = false, removed = false
        init(_ raw: RawTimeout) { self.raw = raw }
    }
    private var watches: [WatchEntry] = []
    private var timeouts: [TimeoutEntry] = []
    private var closeRequested = false
    /// Pending method calls, keyed by their box's identity (owner thread only).
    var ownerPending: [ObjectIdentifier: PendingCallBox] = [:]
    /// False once the bus connection is lost or closed (owner thread only).
    var ownerIsOpen = true
    /// The object path of the last signal dispatched (owner thread only): a burst of signals
    /// from one object reuses it instead of making a String per signal.
    var ownerLastSignalPath: String?
    /// Non-nil while `DBusFuzzing.dispatch` runs a call: what the owner thread sends is kept
    /// here instead of going to the bus (owner thread only).
    var ownerCapture: [OwnedMessage]?
    /// Descriptors watched for input in the loop's poll (owner thread only; see `DescriptorWatch`).
    var ownerDescriptors: [DescriptorEntry] = []

    init(raw: RawConnection, uniqueName: String, address: String) {
        self.raw = raw
        self.uniqueName = uniqueName
        self.address = address
    }

    /// Starts the owner thread and waits until it runs.
    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "dbus \(uniqueName)"
        thread.start()
        started.wait()
    }

    // MARK: - Executor

    var isOwnerThread: Bool { pthread_equal(pthread_self(), ownerThread) != 0 }

    /// Runs `job` on the owner thread: inline when already there, else queued.
    /// Returns false (and does not run `job`) once the connection is closed.
    @discardableResult
    func perform(_ job: @escaping @Sendable () -> Void) -> Bool {
        if isOwnerThread {
            job()
            return true
        }
        return jobs.submit(job)
    }

    /// Queues `job` to run on the owner thread after what runs there now, never inline (a task
    /// executor must not run a job inside `enqueue`): from the owner thread without a wake-up,
    /// from any other thread as ``perform(_:)`` queues. Returns false (and does not run `job`)
    /// once the connection is closed.
    func enqueue(_ job: @escaping @Sendable () -> Void) -> Bool {
        isOwnerThread ? jobs.submitFromOwner(job) : jobs.submit(job)
    }

    /// Stops the loop, fails pending calls, closes the connection. Waits for the owner thread
    /// unless called on it.
    func close() {
        if isOwnerThread {
            closeRequested = true
            return
        }
        if jobs.submit({ [self] in closeRequested = true }) {
            finished.wait()
            finished.signal()
        }
    }

    // MARK: - The loop

    private static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    private func run() {
        ownerThread = pthread_self()
        _ = LibDBus.install(raw, delegate: self)
        started.signal()
        var fds: [pollfd] = []
        var polled: [WatchEntry?] = []
        var polledDescriptors: [DescriptorEntry] = []
        while true {
            for job in jobs.takeAll() { job() }
            if closeRequested { break }
            // Signals from the bus are taken off libdbus's queue and handled here; every other
            // message (method calls, replies completing pending calls, local signals) goes
            // through `dbus_connection_dispatch` and our filter.
            // One wake batch: async consumers of what these messages deliver are woken once
            // at its end, not once per message (see `WakeBatch`).
            WakeBatch.run {
                var budget = 256
                drain: while budget > 0 {
                    budget -= 1
                    switch LibDBus.takeSignal(raw) {
                    case .empty:
                        break drain
                    case .signal(let m):
                        if Log.enabled { Log.trace("recv", m, connection: uniqueName) }
                        dispatchSignal(m)
                        LibDBus.unref(message: m)
                    case .other:
                        _ = LibDBus.dispatch(raw)
                    }
                }
            }
            if closeRequested { break }

            fds.removeAll(keepingCapacity: true)
            polled.removeAll(keepingCapacity: true)
            fds.append(pollfd(fd: jobs.eventFD, events: Int16(POLLIN), revents: 0))
            polled.append(nil)
            for w in watches where w.enabled && !w.removed {
                var ev: Int16 = 0
                if w.read { ev |= Int16(POLLIN) }
                if w.write { ev |= Int16(POLLOUT) }
                fds.append(pollfd(fd: w.fd, events: ev, revents: 0))
                polled.append(w)
            }
            polledDescriptors = ownerDescriptors
            for d in polledDescriptors { fds.append(pollfd(fd: d.fd, events: Int16(POLLIN), revents: 0)) }
            var wait: Int32 = -1
            if LibDBus.hasDataToDispatch(raw) || !jobs.isEmpty {
                wait = 0
            } else {
                let now = ConnectionCore.now()
                for t in timeouts where t.enabled && !t.removed {
                    let ms = t.deadline <= now ? 0 : Int32(min((t.deadline - now + 999_999) / 1_000_000, 86_400_000))
                    if wait < 0 || ms < wait { wait = ms }
                }
            }
            let n = poll(&fds, nfds_t(fds.count), wait)
            if n > 0 {
                if fds[0].revents != 0 { jobs.drainWakeups() }
                for i in 1..<polled.count where fds[i].revents != 0 {
                    guard let w = polled[i], !w.removed, w.enabled else { continue }
                    let r = Int32(fds[i].revents)
                    LibDBus.handle(w.raw, readable: r & Int32(POLLIN) != 0, writable: r & Int32(POLLOUT) != 0,
                                   error: r & Int32(POLLERR) != 0, hangup: r & Int32(POLLHUP) != 0)
                }
                if !polledDescriptors.isEmpty {
                    ownerRunReadable(polledDescriptors, revents: fds[polled.count...])
                }
            }
            let now = ConnectionCore.now()
            for t in timeouts where t.enabled && !t.removed && t.deadline <= now {
                t.deadline = now + t.intervalNanos
                LibDBus.handle(timeout: t.raw)
            }
        }
        shutdown()
    }

    private func shutdown() {
        ownerIsOpen = false
        isClosed.store(true, ordering: .sequentiallyConsistent)
        failAllPending()
        for job in jobs.close() { job() }
        ownerEndDescriptors()
        LibDBus.close(raw)
        while LibDBus.hasDataToDispatch(raw) { _ = LibDBus.dispatch(raw) }
        LibDBus.unref(connection: raw)
        watches.removeAll()
        timeouts.removeAll()
        exports.withLock { $0 = ExportTable() }
        signals.withLock { $0 = SignalTable() }
        ownerWatches.withLock { $0 = [:] }
        finished.signal()
    }

    // MARK: - LibDBusLoopDelegate (owner thread)

    func addWatch(_ watch: RawWatch) -> Bool {
        let w = WatchEntry(watch)
        refresh(w)
        watches.append(w)
        return true
    }
    func removeWatch(_ watch: RawWatch) {
        if let i = watches.firstIndex(where: { $0.raw == watch }) {
            watches[i].removed = true
            watches.remove(at: i)
        }
    }
    func watchToggled(_ watch: RawWatch) {
        if let w = watches.first(where: { $0.raw == watch }) { refresh(w) }
    }
    private func refresh(_ w: WatchEntry) {
        w.fd = LibDBus.fd(w.raw)
        let f = LibDBus.flags(w.raw)
        w.read = f.read
        w.write = f.write
        w.enabled = LibDBus.isEnabled(w.raw)
    }

    func addTimeout(_ timeout: RawTimeout) -> Bool {
        let t = TimeoutEntry(timeout)
        refresh(t)
        timeouts.append(t)
        return true
    }
    func removeTimeout(_ timeout: RawTimeout) {
        if let i = timeouts.firstIndex(where: { $0.raw == timeout }) {
            timeouts[i].removed = true
            timeouts.remove(at: i)
        }
    }
    func timeoutToggled(_ timeout: RawTimeout) {
        if let t = timeouts.first(where: { $0.raw == timeout }) { refresh(t) }
    }
    private func refresh(_ t: TimeoutEntry) {
        t.intervalNanos = UInt64(max(0, LibDBus.interval(t.raw))) * 1_000_000
        t.deadline = ConnectionCore.now() + t.intervalNanos
        t.enabled = LibDBus.isEnabled(timeout: t.raw)
    }

    func wakeUp() {
        if !isOwnerThread { jobs.wake() }
    }
    func dispatchStatusChanged() {
        if !isOwnerThread { jobs.wake() }
    }

    func filter(_ m: RawMessage) -> Bool {
        if Log.enabled { Log.trace("recv", m, connection: uniqueName) }
        switch LibDBus.type(m) {
        case .signal:
            if LibDBus.isSignal(m, interface: "org.freedesktop.DBus.Local", member: "Disconnected") {
                ownerIsOpen = false
                failAllPending()
                return true
            }
            dispatchSignal(m)
            // Handled: no object path is registered with libdbus (method calls are dispatched
            // here too), so its object-tree lookup (the path split into allocated components)
            // has nothing to find.
            return true
        case .methodCall:
            dispatchMethodCall(m)
            return true
        default:
            return false
        }
    }

    // MARK: - Sending (owner thread)

    /// Sends `message` (owner thread); returns false when the connection is closed.
    func ownerSend(_ message: OwnedMessage) -> Bool {
        if ownerCapture != nil {
            ownerCapture!.append(message)
            return true
        }
        guard ownerIsOpen else { return false }
        let ok = LibDBus.send(raw, message.raw)
        if Log.enabled { Log.trace("send", message.raw, connection: uniqueName) }
        return ok
    }

    /// Sends `message` from any thread.
    func send(_ message: OwnedMessage) {
        perform { [self] in _ = ownerSend(message) }
    }
}

/// A libdbus message reference owned by Swift (unreferenced on deinit).
///
/// `@unchecked Sendable`: after construction the message is only read or sent, and libdbus
/// reference counts are atomic once threads are initialised.
final class OwnedMessage: @unchecked Sendable {
    let raw: RawMessage
    init(_ raw: RawMessage) { self.raw = raw }
    deinit { LibDBus.unref(message: raw) }
}
