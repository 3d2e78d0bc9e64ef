// ScanOptions+Checks: the filter checks the manager repeats on its side.
import DBus

extension ScanOptions {
    /// Whether a device with `Device1` properties `raw`, heard at `rssi`, passes ``pathloss``
    /// (advertised `TxPower` − RSSI ≤ pathloss; without TxPower it does not pass, as in bluetoothd).
    func passesPathloss(_ raw: [String: DBusValue], rssi: Int16) -> Bool {
        guard let pathloss else { return true }
        guard let tx = raw["TxPower"].flatMap({ try? Int16(dbusValue: $0) }) else { return false }
        return Int(tx) - Int(rssi) <= Int(pathloss)
    }
}
