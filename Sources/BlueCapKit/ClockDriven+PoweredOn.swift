// ClockDriven+PoweredOn: the one wait for a manager's `.poweredOn`, shared by both roles.
import BlueZ
import Futures

// MARK: - Waiting for .poweredOn

extension ClockDriven {
    /// Completes once `states` yields `.poweredOn`; fails with `expired()` after `timeout` (on
    /// ``clock``). The state is read only after `tree` caught up with the bus (a round trip to
    /// the bus daemon, see `ObjectTree.synchronize`): called right after bluetoothd restarted, it
    /// waits for the new bluetoothd's adapter instead of completing from the state from before.
    func poweredOn(states: FutureStream<ManagerState>, tree: ObjectTree?, timeout: Duration,
                   expired: @escaping @Sendable () -> any Error) -> Future<Void> {
        let promise = Promise<Void>()
        let token = CancelToken()
        let deadline = after(timeout) { promise.failure(expired()) }
        // However it ends: stop listening and drop the timer (it holds the promise).
        promise.future.onComplete(context: .immediate) { _ in
            token.cancel()
            deadline.cancel()
        }
        let listen: @Sendable () -> Void = {
            states.onSuccess(context: .immediate, cancelToken: token) { s in
                if s == .poweredOn { promise.success(()) }
            }
        }
        if let tree { tree.synchronize(listen) } else { listen() }
        return promise.future
    }
}
