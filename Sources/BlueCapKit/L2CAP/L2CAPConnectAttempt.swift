// L2CAPConnectAttempt: a non-blocking L2CAP connect, waited for on its socket becoming writable.
import BlueZ
import Dispatch
import Futures
import Glibc
import Locking

/// One `connect` in progress: the socket's write source fires when the kernel finished (the
/// result is `SO_ERROR`); the deadline, on the peripheral's clock, closes the socket.
///
/// `@unchecked Sendable`: the constants are set once in `init`; `done` (behind its lock)
/// makes the ending run once; the source's handlers run on its queue.
final class L2CAPConnectAttempt: @unchecked Sendable {
    private let fd: Int32
    private let remote: String
    private let psm: UInt16
    private let capacity: Int
    private let operation: String
    private let promise = Promise<L2CAPChannel>()
    private let source: any DispatchSourceWrite
    /// Whether the attempt ended, and its deadline (cancelled when it ends).
    private let done = Locked<(ended: Bool, deadline: ScheduledTask?)>((false, nil))

    init(fd: Int32, remote: String, psm: UInt16, capacity: Int, operation: String) {
        self.fd = fd
        self.remote = remote
        self.psm = psm
        self.capacity = capacity
        self.operation = operation
        source = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: DispatchQueue(label: "bluecap.l2cap.connect"))
    }

    // MARK: Waiting

    /// Waits for the connection; fails with `.timeout` after `timeout` on `clock`'s clock.
    func run(timeout: Duration, clock: some ClockDriven) -> Future<L2CAPChannel> {
        let fd = self.fd
        source.setEventHandler { [self] in
            let code = L2CAPSocketCalls.pendingError(fd)
            if code == 0 {
                let mtus = L2CAPSocketCalls.mtus(fd)
                finish(keepSocket: true) {
                    .success(L2CAPChannel(fd: fd, remoteAddress: remote, psm: psm, sendMTU: mtus.send, receiveMTU: mtus.receive, capacity: capacity))
                }
            } else {
                finish(keepSocket: false) {
                    .failure(L2CAPErrors.error(L2CAPSocketError(call: "connect", errno: code), operation: operation, psm: psm, address: remote))
                }
            }
        }
        let deadline = clock.after(timeout) { [self] in
            finish(keepSocket: false) {
                .failure(BlueCapError(kind: .timeout, operation: operation, timeout: timeout,
                                      message: "no L2CAP channel to PSM \(psm) at \(remote) within \(timeout): the device is out of range or not advertising connectable"))
            }
        }
        let late = done.withLock { d -> Bool in
            if d.ended { return true }
            d.deadline = deadline
            return false
        }
        if late { deadline.cancel() }
        source.resume()
        return promise.future
    }

    /// Ends the attempt once: the channel takes the socket, or it is closed. `result` runs only
    /// for the attempt's first ending.
    private func finish(keepSocket: Bool, _ result: () -> Result<L2CAPChannel, BlueCapError>) {
        guard let deadline = done.withLock({ d -> ScheduledTask?? in
            guard !d.ended else { return nil }
            d.ended = true
            return .some(d.deadline)
        }) else { return }
        deadline?.cancel()
        let fd = self.fd
        // The source is cancelled before anything else uses or closes the descriptor.
        source.setCancelHandler { if !keepSocket { L2CAPSocketCalls.close(fd) } }
        source.cancel()
        switch result() {
        case .success(let channel): promise.success(channel)
        case .failure(let error): promise.failure(error)
        }
    }
}
