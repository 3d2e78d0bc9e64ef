// GattOperation: a running GATT operation's only way to end, completing its promise.

import BlueZ
import Futures

/// A queued GATT operation once it runs: what its start closure is handed by ``GattOperationQueue``.
///
/// Ending the operation and completing its promise are one step: ``succeed(_:)`` and
/// ``fail(_:)`` complete the promise first (so its callbacks see the operation's result before
/// anything queued after it starts) and then let the queue start what waits. An operation
/// cannot end without an answer for its caller, and an answer cannot leave the queue blocked.
///
/// The operation may already be over when its D-Bus call answers: its deadline passed, or the
/// queue was failed (link lost, terminate). The promise is then completed already and the
/// queue has moved on; ``succeed(_:)`` and ``fail(_:)`` change nothing, and state the start
/// claimed is its own only while still tagged with ``id``.
struct GattOperation<Value: Sendable>: Sendable {
    /// Unique within the queue: tags state the operation owns while it runs (see `NotificationStateMachine.Phase.starting`).
    let id: Int
    /// "Type.method (org.bluez.Interface.Member)", for errors.
    let operation: String
    /// The object the operation acts on, for errors.
    let path: String
    /// The operation's deadline, reported by errors that are timeouts.
    let timeout: Duration?
    let promise: Promise<Value>
    let finish: @Sendable () -> Void
    /// Tells the queue that BlueZ answered the operation saying the link is gone (see
    /// ``GattOperationQueue/whenLinkGone(_:)``): the queue lets the operation go (the link's end
    /// fails the others, not this one) and tells the peripheral. Nothing when the operation is over.
    let linkGone: @Sendable (PeripheralError) -> Void

    /// Completes the promise with `value` and ends the operation.
    func succeed(_ value: Value) {
        promise.success(value)
        finish()
    }

    /// Fails the promise with `error` and ends the operation.
    func fail(_ error: PeripheralError) {
        promise.failure(error)
        finish()
    }

    /// Fails the promise with BlueZ's answer to the operation's call, and ends the operation.
    /// An answer saying the link is gone (``BlueZError/saysNotConnected``) first ends the
    /// peripheral's connection (``GattOperationQueue/whenLinkGone(_:)``), then fails the promise
    /// with `.notConnected`: its caller finds the peripheral disconnected already.
    func fail(_ error: BlueZError) {
        let failure = PeripheralError(error, operation: operation, path: path, timeout: timeout)
        guard error.saysNotConnected else { return fail(failure) }
        linkGone(failure)
        fail(failure)
    }

    /// Fails the promise with an error of `kind`, and ends the operation.
    func fail(_ kind: PeripheralError.Kind, _ message: String = "") {
        fail(PeripheralError(kind: kind, operation: operation, path: path, message: message))
    }

    /// Ends the operation with BlueZ's answer: `value` on success, the error otherwise.
    func complete<Answer>(_ result: Result<Answer, BlueZError>, with value: (Answer) -> Value) {
        switch result {
        case .success(let answer): succeed(value(answer))
        case .failure(let error): fail(error)
        }
    }
}
