// InterfaceEra: which BlueZ releases a running bluetoothd can be, read from the properties its
// Adapter1 objects export.

// MARK: - InterfaceEra

/// The range of BlueZ releases whose `org.bluez.Adapter1` exports the properties seen. bluetoothd
/// does not say its version over D-Bus; what it exports narrows it down, and tells a bluetoothd
/// built from source, or one not restarted after an upgrade, from the installed package.
///
/// The markers (each read from BlueZ's `src/adapter.c` of that release, and checked in the VM
/// tier on 5.55, 5.66 and 5.82): `Roles` 5.55; `PowerState` 5.66, exported only with
/// `--experimental` until 5.73; `Manufacturer` and `Version` 5.71; `Connectable` 5.79.
struct InterfaceEra: Equatable, Sendable {
    /// The oldest release that fits ("5.66"), or nil when older than every marker.
    var from: String?
    /// The newest release that fits ("5.70"), or nil when open-ended.
    var through: String?

    /// The era of an `Adapter1` whose property names are `properties`, on a bluetoothd whose
    /// experimental interfaces are on or off (`experimental`): without them 5.66–5.72 hide
    /// `PowerState`.
    init(adapterProperties properties: Set<String>, experimental: Bool) {
        let powerState = properties.contains("PowerState")
        switch (properties.contains("Connectable"), properties.contains("Manufacturer"), powerState, properties.contains("Roles")) {
        case (true, _, _, _): (from, through) = ("5.79", nil)
        case (false, true, true, _): (from, through) = (experimental ? "5.71" : "5.73", "5.78")
        case (false, true, false, _): (from, through) = ("5.71", "5.72")
        case (false, false, true, _): (from, through) = ("5.66", "5.70")
        case (false, false, false, true): (from, through) = ("5.55", experimental ? "5.65" : "5.70")
        case (false, false, false, false): (from, through) = (nil, "5.54")
        }
    }

    init(from: String?, through: String?) {
        self.from = from
        self.through = through
    }

    /// "5.66–5.70", "5.79 or later", "before 5.55".
    var description: String {
        switch (from, through) {
        case (let f?, let t?): return "\(f)–\(t)"
        case (let f?, nil): return "\(f) or later"
        case (nil, let t?): return "\(t) or older"
        case (nil, nil): return "any"
        }
    }

    /// Whether the release `version` ("5.66-1+deb12u1", "5.82") is in the range; nil when
    /// `version` does not start with MAJOR.MINOR.
    func contains(version: String) -> Bool? {
        guard let v = Self.parse(version) else { return nil }
        if let f = from.flatMap(Self.parse), v < f { return false }
        if let t = through.flatMap(Self.parse), v > t { return false }
        return true
    }

    /// "5.66-1+deb12u1" → (5, 66); an epoch ("1:5.66") is skipped.
    private static func parse(_ version: String) -> Version? {
        let plain = version.split(separator: ":").last.map(String.init) ?? version
        let digits = plain.prefix { $0.isNumber || $0 == "." }.split(separator: ".")
        guard digits.count >= 2, let major = Int(digits[0]), let minor = Int(digits[1]) else { return nil }
        return Version(major: major, minor: minor)
    }

    private struct Version: Comparable {
        var major: Int
        var minor: Int
        static func < (a: Version, b: Version) -> Bool { (a.major, a.minor) < (b.major, b.minor) }
    }
}
