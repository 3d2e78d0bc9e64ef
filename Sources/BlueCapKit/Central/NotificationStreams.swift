// NotificationStreams: the update streams of one characteristic and the rule that feeds them.
import Futures

/// The open update streams of one characteristic (one per ``Characteristic/receiveNotificationUpdates(capacity:)``
/// call), kept under the characteristic's lock. Each notification goes to every open stream once.
/// A stream leaves when it is finished (by the rules below, `stopNotifying`, `terminate`) or
/// abandoned (every subscription to it cancelled: `StreamPromise.onAbandoned`).
///
/// The rule (documented for users on ``Characteristic/receiveNotificationUpdates(capacity:)``):
/// - a stream gets the notifications that arrive after it was opened, never earlier ones;
/// - a stream stays open across link drops while re-subscription is on, so one subscription made
///   once follows the characteristic through reconnections;
/// - the app's ``Characteristic/startNotifying(timeout:resubscribeOnReconnect:via:)`` in a later
///   connection session (after a link drop) finishes the streams opened in earlier sessions: the app
///   is setting up again (BlueCap's example chain re-runs after `.reconnect`), and the streams it opens
///   next take over;
/// - so that nothing falls in the gap between that call and the new streams, the notifications in
///   between are held (at most ``heldLimit``, the oldest dropped beyond) and handed to the next
///   streams opened, one for each stream that was finished. The same hand-over covers the first
///   stream after a `startNotifying` that found no stream open (an app's first run of its chain).
///
/// Methods return what must be pushed or finished; callers do that outside the lock (a push runs
/// subscribers' callbacks), except the held values given to a new stream, which no one follows yet.
struct NotificationStreams<Element: Sendable> {
    /// One open stream.
    struct Entry {
        let id: Int
        /// The connection session it was opened in (see ``session``).
        let session: Int
        let promise: StreamPromise<Element>
    }

    /// Notifications held for the streams that replace finished ones.
    private struct Handoff {
        /// How many streams are still to receive `held`.
        var remaining: Int
        var held: [Element] = []
    }

    /// What ``Characteristic/notificationCounts`` reports, counted here under the
    /// characteristic's lock the notification path takes anyway (no lock of its own).
    struct Tally {
        var received = 0
        /// Deliveries pushed to streams (one per open stream, and per held value handed over).
        var pushed = 0
        var noStream = 0
        var heldLimit = 0
        /// `droppedCount` of the streams already removed.
        var removedStreamsBacklogDrops = 0
    }

    /// The most notifications held for streams yet to be opened.
    static var heldLimit: Int { 100 }

    /// The counts so far.
    private(set) var tally = Tally()

    /// The open streams, oldest first.
    private(set) var entries: [Entry] = []
    /// Counts link drops: streams opened before the latest drop belong to an earlier session.
    private(set) var session = 0
    private var nextID = 0
    private var handoff: Handoff?

    /// Whether notifications are being held for streams yet to be opened.
    var isHolding: Bool { handoff != nil }

    /// Opens a stream of `capacity` (its replay buffer for subscriptions made after values
    /// arrived); it starts with the held notifications it takes over, if any.
    mutating func open(capacity: Int) -> (id: Int, promise: StreamPromise<Element>) {
        nextID += 1
        let promise = StreamPromise<Element>(capacity: max(1, capacity))
        if var h = handoff {
            // No one follows the new stream yet: pushing runs no callback.
            for value in h.held { promise.success(value) }
            tally.pushed += h.held.count
            h.remaining -= 1
            handoff = h.remaining > 0 ? h : nil
        }
        entries.append(Entry(id: nextID, session: session, promise: promise))
        return (nextID, promise)
    }

    /// The app turned notifications on: returns the streams of earlier sessions, now removed, to
    /// finish; starts holding notifications for their replacements (or for the first stream when
    /// none is open).
    mutating func appStarted() -> [StreamPromise<Element>] {
        let current = session
        let old = entries.filter { $0.session < current }
        entries.removeAll { $0.session < current }
        retire(old.map(\.promise))
        if !old.isEmpty {
            handoff = Handoff(remaining: (handoff?.remaining ?? 0) + old.count, held: handoff?.held ?? [])
        } else if entries.isEmpty && handoff == nil {
            handoff = Handoff(remaining: 1)
        }
        return old.map(\.promise)
    }

    /// A notification arrived: holds it if streams are awaited; returns the open streams to push it to.
    mutating func deliver(_ value: Element) -> [Entry] {
        tally.received += 1
        tally.pushed += entries.count
        if handoff != nil {
            handoff!.held.append(value)
            if handoff!.held.count > Self.heldLimit {
                handoff!.held.removeFirst()
                tally.heldLimit += 1
            }
        } else if entries.isEmpty {
            tally.noStream += 1
        }
        return entries
    }

    /// The counts, with the open streams' subscriber-backlog drops read now (each stream's lock,
    /// taken inside the characteristic's: a stream never takes the characteristic's lock).
    func counts() -> NotificationCounts {
        let backlog = entries.reduce(tally.removedStreamsBacklogDrops) { $0 + $1.promise.stream.droppedCount }
        return NotificationCounts(received: tally.received, delivered: tally.pushed - backlog, held: handoff?.held.count ?? 0,
                                  droppedByRule: [.noStream: tally.noStream, .heldLimit: tally.heldLimit, .subscriberBacklog: backlog])
    }

    /// Keeps the backlog drops of streams being removed, and counts held values no stream will get.
    private mutating func retire(_ streams: [StreamPromise<Element>], discardingHeld: Bool = false) {
        for s in streams { tally.removedStreamsBacklogDrops += s.stream.droppedCount }
        if discardingHeld { tally.noStream += handoff?.held.count ?? 0 }
    }

    /// The link dropped. With `keepStreams` (re-subscription will follow) the streams stay open;
    /// otherwise they are removed and returned, to be finished with an error. Held values are dropped.
    mutating func linkLost(keepStreams: Bool) -> [StreamPromise<Element>] {
        session += 1
        retire([], discardingHeld: true)
        handoff = nil
        guard !keepStreams else { return [] }
        return removeAll()
    }

    /// Removes every stream (stopNotifying, terminate) and returns them to finish.
    mutating func removeAll() -> [StreamPromise<Element>] {
        retire(entries.map(\.promise), discardingHeld: true)
        handoff = nil
        defer { entries = [] }
        return entries.map(\.promise)
    }

    /// Removes the stream `id` (abandoned by its subscribers); returns it, to be finished.
    mutating func remove(id: Int) -> StreamPromise<Element>? {
        guard let i = entries.firstIndex(where: { $0.id == id }) else { return nil }
        let promise = entries.remove(at: i).promise
        retire([promise])
        return promise
    }
}
