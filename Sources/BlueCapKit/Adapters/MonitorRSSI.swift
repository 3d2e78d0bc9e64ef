// MonitorRSSI: the RSSI thresholds and timeouts of a passive advertisement monitor.

/// When a monitored device counts as found and as lost (`RSSIHighThreshold`/`RSSIHighTimeout`,
/// `RSSILowThreshold`/`RSSILowTimeout`, `RSSISamplingPeriod` of `org.bluez.AdvertisementMonitor1`).
///
/// Found: its advertisements stayed above ``highThreshold`` for ``highTimeout`` seconds. Lost:
/// ``lowTimeout`` seconds below ``lowThreshold``, or without any advertisement (it stopped
/// advertising or went out of range). Without a `MonitorRSSI`, BlueZ reports every matching
/// advertisement as found and never reports a device lost.
public struct MonitorRSSI: Sendable, Hashable {
    /// In dBm, -127…20, above ``lowThreshold``.
    public var highThreshold: Int16
    /// Seconds, 1…300.
    public var highTimeout: UInt16
    /// In dBm, -127…20.
    public var lowThreshold: Int16
    /// Seconds, 1…300.
    public var lowTimeout: UInt16
    /// 0: every advertisement; 255: the first only; N: grouped by N × 100 ms (controller
    /// offloading only); nil: BlueZ's default.
    public var samplingPeriod: UInt16?

    /// Thresholds and timeouts; by default any signal counts, found after 1 s, lost after 5 s
    /// without an advertisement.
    public init(highThreshold: Int16 = -126, highTimeout: UInt16 = 1, lowThreshold: Int16 = -127, lowTimeout: UInt16 = 5,
                samplingPeriod: UInt16? = nil) {
        self.highThreshold = highThreshold
        self.highTimeout = highTimeout
        self.lowThreshold = lowThreshold
        self.lowTimeout = lowTimeout
        self.samplingPeriod = samplingPeriod
    }
}
