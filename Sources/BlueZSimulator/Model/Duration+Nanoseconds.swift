// Duration+Nanoseconds: whole nanoseconds for poll timeouts and D-Bus replies.

extension Duration {
    /// Nanoseconds, saturating at zero.
    var nanoseconds: Int {
        let (s, a) = components
        return max(0, Int(s) * 1_000_000_000 + Int(a / 1_000_000_000))
    }
}
