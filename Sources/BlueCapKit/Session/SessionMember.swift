// SessionMember: what a BluetoothSession tells when it closes.
import Futures

/// A manager, adapter list or agent registration made on a ``BluetoothSession``: the session
/// holds it weakly and, on ``BluetoothSession/close(timeout:)``, asks it to end while the
/// connection is still open.
protocol SessionMember: AnyObject, Sendable {
    /// Ends what the member holds on the bus (scans, links, registrations) within `timeout`.
    /// The future never fails: a call that failed or timed out still ends the member.
    func sessionClosing(timeout: Duration) -> Future<Void>
}

extension Future {
    /// Completes with `()` when this future completes, whatever its result: how a member's
    /// ending waits for a call whose failure changes nothing.
    func settled() -> Future<Void> {
        let promise = Promise<Void>()
        onComplete(context: .immediate) { _ in promise.success(()) }
        return promise.future
    }
}
