// PeripheralManager: the bond state of the centrals that use our services.
import BlueZ
import DBus
import Futures

extension PeripheralManager {
    /// The bond state of `central` (the `org.bluez.Device1` object bluetoothd keeps for it under
    /// our adapter, as named by each request's ``CentralIdentity``): whether the central that made
    /// a request is paired. Nil when bluetoothd has no such device.
    public func pairingState(of central: CentralIdentity) -> PairingState? {
        guard let tree = session.tree, let path = try? ObjectPath(central.devicePath),
              let raw = tree.properties(at: path, interface: Device1.interface) else { return nil }
        return PairingState(Device1.Properties(raw, path: path))
    }

    /// Removes `central`'s device object and bond (`org.bluez.Adapter1.RemoveDevice` on our
    /// adapter): its next access to an encrypted characteristic needs pairing again.
    public func forget(_ central: CentralIdentity) -> Future<Void> {
        let promise = Promise<Void>()
        let context = self.context
        let parent = "/" + central.devicePath.split(separator: "/").dropLast().joined(separator: "/")
        guard let connection, let path = try? ObjectPath(central.devicePath), let adapter = try? ObjectPath(parent) else {
            return Future(error: BlueCapError(kind: .invalidArguments, operation: "PeripheralManager.forget (org.bluez.Adapter1.RemoveDevice)",
                                              message: "no device path for \(central)"))
        }
        Task {
            let result: Result<Void, any Error>
            do throws(BlueZError) {
                try await Adapter1(connection: connection, path: adapter).removeDevice(path)
                result = .success(())
            } catch {
                result = .failure(BlueCapError(error, operation: "PeripheralManager.forget (org.bluez.Adapter1.RemoveDevice)"))
            }
            context.execute { promise.complete(result) }
        }
        return promise.future
    }
}
