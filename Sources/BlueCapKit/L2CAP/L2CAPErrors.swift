// L2CAPErrors: the socket errors of L2CAP channels as BlueCapErrors naming cause and fix.
import BlueZ
import Glibc

/// Maps a failed L2CAP socket call to a ``BlueCapError`` that names the cause and the fix.
enum L2CAPErrors {
    static func error(_ e: L2CAPSocketError, operation: String, psm: UInt16, address: String) -> BlueCapError {
        let psmText = "PSM \(psm) (0x\(String(psm, radix: 16)))"
        let text = L2CAPSocketCalls.describe(e.errno)
        let (kind, message): (BlueCapError.Kind, String)
        if e.isRefused {
            (kind, message) = (.connectionAttemptFailed, "no channel published on \(psmText) at \(address) (\(e.call): \(text)): publish one there first, or check the PSM")
        } else if e.isPermission && e.call == "bind" {
            (kind, message) = (.notPermitted, "\(e.call) on \(psmText) was refused (\(text)): a fixed PSM (0x0001–0x007F) needs CAP_NET_BIND_SERVICE; use a dynamic PSM (0x0080–0x00FF) or psm nil to let the kernel choose")
        } else if e.isUnreachable {
            (kind, message) = (.connectionAttemptFailed, "\(address) did not answer (\(e.call): \(text)): the device is out of range or not advertising connectable")
        } else if e.isInUse {
            (kind, message) = (.alreadyExists, "\(psmText) is already published on \(address) (\(text)): unpublish it or choose another PSM")
        } else if e.isUnsupported {
            (kind, message) = (.notSupported, "this kernel has no Bluetooth L2CAP sockets (\(e.call): \(text)): load the bluetooth module (modprobe bluetooth)")
        } else if e.errno == EINVAL && e.call == "bind" {
            (kind, message) = (.invalidArguments, "cannot bind \(psmText) on \(address) (\(text)): an LE PSM is 0x0001–0x00FF (0x0080–0x00FF dynamic), and the adapter address must be the adapter's")
        } else if e.errno == EACCES || e.errno == ECONNRESET {
            (kind, message) = (.authenticationFailed, "\(address) refused the channel's security (\(e.call): \(text)): pair the devices first")
        } else {
            (kind, message) = (.failed, "\(e.call) on \(psmText) at \(address) failed: \(text)")
        }
        return BlueCapError(kind: kind, operation: operation, message: message)
    }
}
