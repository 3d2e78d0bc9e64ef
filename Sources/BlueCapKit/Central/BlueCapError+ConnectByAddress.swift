// BlueCapError+ConnectByAddress: why CentralManager.connect(address:addressType:timeout:) failed.
import BlueZ

extension BlueZErrorKind {
    /// A device address is not six hexadecimal byte pairs separated by colons.
    public static let invalidAddress = Self(rawValue: "org.bluecap.Error.InvalidAddress")
}

// MARK: - Connect by address

extension BlueCapError {
    /// `.invalidAddress`: `address` is not `XX:XX:XX:XX:XX:XX` (hexadecimal, any case); nothing
    /// was sent to BlueZ.
    public static func invalidAddress(_ address: String) -> BlueCapError {
        BlueCapError(kind: .invalidAddress, operation: "CentralManager.connect(address:)",
                     message: "\"\(address)\" is not a Bluetooth device address: write six hexadecimal byte pairs"
                        + " separated by colons, e.g. C0:FF:EE:00:00:01")
    }

    /// `.timeout`: `address` was not connected on `adapter` within `timeout`. The message says
    /// whether `org.bluez.Adapter1.ConnectDevice` was available (`connectDevice`; nil when it
    /// was not asked), and how to enable it when it was not, or that the device object
    /// existed and `Device1.Connect` did not complete (`knownDevice`).
    static func addressConnectTimedOut(_ address: String, adapter: String, timeout: Duration,
                                       connectDevice: Bool?, knownDevice: Bool) -> BlueCapError {
        let (seconds, attoseconds) = timeout.components
        let text = attoseconds == 0 ? "\(seconds)" : "\(Double(seconds) + Double(attoseconds) / 1e18)"
        var message = "\(address) was not connected on \(adapter) within \(text) s: "
        if knownDevice {
            message += "BlueZ knew the device and org.bluez.Device1.Connect did not complete"
        } else {
            switch connectDevice {
            case true?:
                message += "org.bluez.Adapter1.ConnectDevice was available (bluetoothd --experimental) and did not reach it"
            case false?:
                message += "org.bluez.Adapter1.ConnectDevice is not available (bluetoothd runs without --experimental;"
                    + " start it with -E, or set Experimental = true in /etc/bluetooth/main.conf, to connect without a"
                    + " discovery), and a discovery (transport le) did not hear the address"
            case nil:
                message += "the address was not heard"
            }
        }
        message += "; check that the device is powered, in range and advertising connectable, and its address type"
            + " (public or random); or pass a longer timeout"
        return BlueCapError(kind: .timeout, operation: "CentralManager.connect(address:)", timeout: timeout, message: message)
    }

    /// BlueZ refused `org.bluez.Adapter1.ConnectDevice` or the discovery for a connection by address.
    static func addressConnectFailed(_ error: BlueZError, address: String) -> BlueCapError {
        BlueCapError(error, operation: "CentralManager.connect(address: \(address)) (\(error.operation ?? "org.bluez.Adapter1.ConnectDevice"))")
    }
}
