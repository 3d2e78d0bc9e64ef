// AdvertisingInstance: one of several advertisements a PeripheralManager keeps on air at once.

import BlueZ
import Foundation
import Futures

// MARK: - AdvertisingInstance

/// An advertisement added with ``PeripheralManager/addAdvertisement(_:)``, next to the one
/// ``PeripheralManager/startAdvertising(_:uuids:)`` manages: an `org.bluez.LEAdvertisement1`
/// object registered with `org.bluez.LEAdvertisingManager1.RegisterAdvertisement`.
///
/// It stays on air until ``stop(timeout:)``, the manager's ``PeripheralManager/shutdown()``, its
/// `Timeout` (bluetoothd calls `Release()`), or bluetoothd going away; it is not registered
/// again after bluetoothd restarts (add it again).
public final class AdvertisingInstance: Sendable {
    let handle: AdvertisementHandle
    private let context: any ExecutionContext
    private let stopped: @Sendable (AdvertisingInstance) -> Void

    init(handle: AdvertisementHandle, context: any ExecutionContext, stopped: @escaping @Sendable (AdvertisingInstance) -> Void) {
        self.handle = handle
        self.context = context
        self.stopped = stopped
    }

    /// What is advertised.
    public var advertisement: LocalAdvertisement { handle.advertisement }

    /// The exported `org.bluez.LEAdvertisement1` object's path, for logs.
    public var path: String { handle.path.rawValue }

    /// Whether bluetoothd holds it: registered, not released (`Release()`), not stopped.
    public var isAdvertising: Bool { handle.isRegistered }

    /// Stops it: `org.bluez.LEAdvertisingManager1.UnregisterAdvertisement`, then the object is
    /// unexported. Idempotent; an advertisement bluetoothd already released or a bluetoothd
    /// already gone is no failure.
    @discardableResult
    public func stop(timeout: Duration = .seconds(5)) -> Future<Void> {
        let promise = Promise<Void>()
        let context = self.context
        Task { [self] in
            let error = await handle.unregister(timeout: timeout)
            stopped(self)
            let result: Result<Void, any Error>
            if let error, error.kind != .serviceUnavailable, error.kind != .doesNotExist {
                result = .failure(BlueCapError(error, operation: "AdvertisingInstance.stop (org.bluez.LEAdvertisingManager1.UnregisterAdvertisement)"))
            } else {
                result = .success(())
            }
            context.execute { promise.complete(result) }
        }
        return promise.future
    }
}
