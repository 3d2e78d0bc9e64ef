// FirstConnection: the retries of a first connection to the broker that failed.

import Dispatch

/// Signals between ``MQTTClient/close()`` and the thread retrying a failed first connection:
/// `stop` ends the wait between attempts at once, `finished` says the thread no longer touches
/// the libmosquitto handle (so that it can be destroyed).
final class FirstConnection: Sendable {
    let stop = DispatchSemaphore(value: 0)
    let finished = DispatchSemaphore(value: 0)
    init() {}
}
