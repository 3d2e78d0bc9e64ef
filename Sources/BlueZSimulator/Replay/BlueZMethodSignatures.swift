// BlueZMethodSignatures: the methods of BlueZ's interfaces, so a replay answers every call.
import DBus

// MARK: - BlueZMethodSignatures

/// The input and output signatures of the methods of BlueZ's interfaces (doc/org.bluez.*.rst).
/// A replay exports them on every recorded object that has the interface, whether or not the
/// recording calls them: a call the recording does not have then reaches the replay and fails
/// with the divergence message, rather than with D-Bus's `UnknownMethod`.
enum BlueZMethodSignatures {
    /// Interface → member → (input, output).
    static let table: [String: [String: (DBusSignature, DBusSignature)]] = [
        "org.bluez.Adapter1": [
            "StartDiscovery": ("", ""), "StopDiscovery": ("", ""), "SetDiscoveryFilter": ("a{sv}", ""),
            "RemoveDevice": ("o", ""), "GetDiscoveryFilters": ("", "as"), "ConnectDevice": ("a{sv}", ""),
        ],
        "org.bluez.Device1": [
            "Connect": ("", ""), "Disconnect": ("", ""), "ConnectProfile": ("s", ""), "DisconnectProfile": ("s", ""),
            "Pair": ("", ""), "CancelPairing": ("", ""),
        ],
        "org.bluez.GattCharacteristic1": [
            "ReadValue": ("a{sv}", "ay"), "WriteValue": ("aya{sv}", ""), "AcquireWrite": ("a{sv}", "hq"),
            "AcquireNotify": ("a{sv}", "hq"), "StartNotify": ("", ""), "StopNotify": ("", ""), "Confirm": ("", ""),
        ],
        "org.bluez.GattDescriptor1": ["ReadValue": ("a{sv}", "ay"), "WriteValue": ("aya{sv}", "")],
        "org.bluez.GattManager1": ["RegisterApplication": ("oa{sv}", ""), "UnregisterApplication": ("o", "")],
        "org.bluez.LEAdvertisingManager1": ["RegisterAdvertisement": ("oa{sv}", ""), "UnregisterAdvertisement": ("o", "")],
        "org.bluez.AgentManager1": ["RegisterAgent": ("os", ""), "UnregisterAgent": ("o", ""), "RequestDefaultAgent": ("o", "")],
        "org.bluez.ProfileManager1": ["RegisterProfile": ("osa{sv}", ""), "UnregisterProfile": ("o", "")],
        "org.bluez.AdvertisementMonitorManager1": ["RegisterMonitor": ("o", ""), "UnregisterMonitor": ("o", "")],
    ]
}
