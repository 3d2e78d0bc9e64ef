// L2CAPSecurity: the security level an L2CAP channel asks of its link.

/// The security a channel asks of its LE link (the socket option `BT_SECURITY`): the kernel
/// encrypts the link (pairing first when there is no key) before the channel opens, and a
/// listener refuses connections whose link is not at the level.
public enum L2CAPSecurity: UInt8, Sendable, Hashable, CaseIterable {
    /// No encryption required (`BT_SECURITY_LOW`).
    case low = 1
    /// An encrypted link (`BT_SECURITY_MEDIUM`), paired without MITM protection or better.
    case medium = 2
    /// An encrypted and authenticated link (`BT_SECURITY_HIGH`): paired with MITM protection.
    case high = 3
}
