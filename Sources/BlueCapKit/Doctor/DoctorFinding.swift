// DoctorFinding: one line of BluetoothSession.diagnose's report — what was checked, how it
// stands, why, and what to do.

// MARK: - DoctorFinding

/// One result of ``BluetoothSession/diagnose(timeout:options:)``: a check, its status, the cause
/// found and the fix, each one line, ready to print (``line``, ``table(_:)``) or to encode as
/// JSON (`Codable`: `{"check":…,"status":"ok"|"info"|"warning"|"problem","cause":…,"fix":…}`).
public struct DoctorFinding: Sendable, Codable, Equatable, CustomStringConvertible {
    /// How a check stands.
    public enum Status: String, Sendable, Codable, Comparable, CaseIterable {
        /// Nothing to do.
        case ok
        /// Worth knowing; nothing is wrong (a BlueZ version, an experimental feature that is off).
        case info
        /// Something may get in the way of some uses (an adapter that is off, no advertising
        /// instance left).
        case warning
        /// Something stops the library from working (no bluetoothd, a policy that refuses the
        /// calls, a blocked radio, no adapter).
        case problem

        private var rank: Int { Self.allCases.firstIndex(of: self) ?? 0 }
        /// `ok` < `info` < `warning` < `problem`.
        public static func < (a: Status, b: Status) -> Bool { a.rank < b.rank }
    }

    /// What was checked: `bluetoothd`, `policy.call`, `policy.agent`, `policy.application`,
    /// `policy.advertisement`, `rfkill`, `adapters`, `adapter hciN`, `advertising hciN`,
    /// `experimental`, `main.conf`, `main.conf Key`, `version`.
    public var check: String
    /// How it stands.
    public var status: Status
    /// What was found, one line.
    public var cause: String
    /// What to do about it, one line; empty when there is nothing to do.
    public var fix: String

    /// A finding.
    public init(check: String, status: Status, cause: String, fix: String = "") {
        self.check = check
        self.status = status
        self.cause = cause
        self.fix = fix
    }

    // MARK: Names

    /// The check that says whether bluetoothd can be reached (`org.bluez` has an owner): when it
    /// is a ``Status/problem``, the bus checks did not run.
    public static let bluetoothdCheck = "bluetoothd"

    // MARK: Text

    /// `check  status  cause — fix`, one line.
    public var line: String { "\(check)  \(status.rawValue)  \(cause)" + (fix.isEmpty ? "" : " — \(fix)") }

    /// ``line``.
    public var description: String { line }

    /// The findings as a table: a header, then one row per finding with the check and the status
    /// padded to columns, the cause, and the fix after an arrow.
    public static func table(_ findings: [DoctorFinding]) -> String {
        let checkWidth = max(5, findings.map(\.check.count).max() ?? 0)
        let statusWidth = 7
        func pad(_ s: String, _ n: Int) -> String { s.padding(toLength: max(n, s.count), withPad: " ", startingAt: 0) }
        var out = pad("CHECK", checkWidth) + "  " + pad("STATUS", statusWidth) + "  CAUSE → FIX\n"
        for f in findings {
            out += pad(f.check, checkWidth) + "  " + pad(f.status.rawValue, statusWidth) + "  " + f.cause
            if !f.fix.isEmpty { out += " → " + f.fix }
            out += "\n"
        }
        return out
    }
}
