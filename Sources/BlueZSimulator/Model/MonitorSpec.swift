// MonitorSpec: one org.bluez.AdvertisementMonitor1 object of a registered monitoring app, as
// bluetoothd reads it, and the per-device state bluetoothd keeps for it.

// MARK: - MonitorSpec

/// A monitor of type `or_patterns`: its patterns and RSSI settings.
public struct MonitorSpec: Sendable, Equatable {
    /// One `(start position, AD type, content)` entry of `Patterns`.
    public struct Pattern: Sendable, Equatable {
        /// The offset in the AD structure's data where `content` must start.
        public var start: UInt8
        /// The AD type the pattern applies to (e.g. 0xFF manufacturer data).
        public var adType: UInt8
        /// The bytes to match (1…31).
        public var content: [UInt8]

        /// A pattern matching `content` at `start` in AD structures of type `adType`.
        public init(start: UInt8, adType: UInt8, content: [UInt8]) {
            self.start = start
            self.adType = adType
            self.content = content
        }

        /// Whether the AD structure `(type, data)` holds the content at `start`.
        func matches(type: UInt8, data: [UInt8]) -> Bool {
            guard type == adType, !content.isEmpty, Int(start) + content.count <= data.count else { return false }
            return Array(data[Int(start)..<Int(start) + content.count]) == content
        }
    }

    /// RSSI thresholds (dBm) and timeouts (seconds), all set.
    public struct RSSI: Sendable, Equatable {
        /// `RSSIHighThreshold`: a device at or above it for `highTimeout` s is found.
        public var high: Int16
        /// `RSSIHighTimeout`, seconds.
        public var highTimeout: UInt16
        /// `RSSILowThreshold`: a found device below it for `lowTimeout` s is lost.
        public var low: Int16
        /// `RSSILowTimeout`, seconds.
        public var lowTimeout: UInt16
    }

    /// The object path.
    public var path: String
    /// The `Patterns` entries; an advertisement matching any one of them matches.
    public var patterns: [Pattern]
    /// nil: every matching advertisement is reported found, and no device is ever lost.
    public var rssi: RSSI?

    /// Validates what the app exported as bluetoothd does; nil when bluetoothd would release it:
    /// a type other than `or_patterns`, no pattern, a pattern longer than 31 bytes, or RSSI values
    /// that are not all unset (127 / 0) or all valid (-127…20 with high > low, timeouts 1…300).
    static func parse(path: String, type: String?, patterns: [Pattern]?, lowThreshold: Int16?, highThreshold: Int16?,
                      lowTimeout: UInt16?, highTimeout: UInt16?) -> MonitorSpec? {
        guard type == "or_patterns", let patterns, !patterns.isEmpty,
              patterns.allSatisfy({ !$0.content.isEmpty && $0.content.count <= 31 }) else { return nil }
        let values: [Int?] = [lowThreshold.map(Int.init), highThreshold.map(Int.init), lowTimeout.map(Int.init), highTimeout.map(Int.init)]
        let unset = [127, 127, 0, 0]
        if zip(values, unset).allSatisfy({ $0 == nil || $0 == $1 }) {
            return MonitorSpec(path: path, patterns: patterns, rssi: nil)
        }
        guard let l = lowThreshold, let h = highThreshold, let lt = lowTimeout, let ht = highTimeout,
              (-127...20).contains(l), (-127...20).contains(h), h > l, (1...300).contains(lt), (1...300).contains(ht) else { return nil }
        return MonitorSpec(path: path, patterns: patterns, rssi: RSSI(high: h, highTimeout: ht, low: l, lowTimeout: lt))
    }
}

// MARK: - MonitorApp

/// A registered monitoring application (`RegisterMonitor(root)` by `owner`).
// Confined to the simulator's queue (see SimulatorCore); `@unchecked Sendable` only so scheduled
// closures running on that same queue may capture it.
final class MonitorApp: @unchecked Sendable {
    /// bluetoothd's per-device tracking for one monitor.
    // Confined to the simulator's queue like its app; `@unchecked Sendable` for its timers' closures.
    final class Tracked: @unchecked Sendable {
        var found = false
        var highWork: ClockTask?
        var lostWork: ClockTask?
    }

    let owner: String
    let root: String
    let adapter: Int
    let monitors: [MonitorSpec]
    /// (monitor index, device address) → tracking.
    var tracked: [Int: [String: Tracked]] = [:]

    init(owner: String, root: String, adapter: Int, monitors: [MonitorSpec]) {
        self.owner = owner
        self.root = root
        self.adapter = adapter
        self.monitors = monitors
    }

    func cancelTimers() {
        for devices in tracked.values {
            for t in devices.values {
                t.highWork?.cancel()
                t.lostWork?.cancel()
            }
        }
    }
}

// MARK: - MonitorBridge

/// How the simulated bluetoothd calls a monitoring app's objects (no reply expected).
public protocol MonitorBridge: AnyObject, Sendable {
    /// Calls `member` (`Activate`, `Release`, `DeviceFound`, `DeviceLost`) on
    /// `org.bluez.AdvertisementMonitor1` at `path` of `owner`, with `device` for the last two.
    func callMonitor(owner: String, path: String, member: String, device: String?)
}
