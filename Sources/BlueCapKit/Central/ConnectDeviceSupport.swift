// ConnectDeviceSupport: what the session learned about Adapter1.ConnectDevice, per adapter.
import Locking

/// Whether each adapter's bluetoothd answers `org.bluez.Adapter1.ConnectDevice` (it does only with
/// `--experimental`), learned from its first answer — `UnknownMethod` or anything else — and kept
/// for the session. Keyed by bluetoothd's unique bus name and the adapter path, so a bluetoothd
/// restarted with other options is asked again.
final class ConnectDeviceSupport: Sendable {
    // Sendable through this lock: the only state.
    private let known = Locked<[String: Bool]>([:])

    init() {}

    /// What was learned for `adapter` of the bluetoothd owning `owner`; nil when not asked yet.
    func available(owner: String?, adapter: String) -> Bool? {
        known.withLock { $0[Self.key(owner, adapter)] }
    }

    /// Records the answer for `adapter` of the bluetoothd owning `owner`.
    func record(_ available: Bool, owner: String?, adapter: String) {
        known.withLock { $0[Self.key(owner, adapter)] = available }
    }

    private static func key(_ owner: String?, _ adapter: String) -> String { (owner ?? "?") + " " + adapter }
}
