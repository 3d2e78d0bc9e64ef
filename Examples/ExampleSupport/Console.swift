// Console: the examples' output — JSON lines, plain lines, progress on stderr.
//
// Shared by central-scanner and accelerometer-peripheral (both depend on ExampleSupport).

import Foundation
#if canImport(Glibc)
import Glibc
#endif

// MARK: - JSON values

/// A JSON value with ordered object keys, enough for one event per line.
package enum JSON: Sendable {
    case string(String)
    case number(Double)
    case integer(Int)
    case bool(Bool)
    case null
    case array([JSON])
    case object([(String, JSON)])

    /// The compact text form.
    package var text: String {
        switch self {
        case .string(let s): return JSON.quote(s)
        case .number(let d): return d.isFinite ? "\(d)" : "null"
        case .integer(let i): return "\(i)"
        case .bool(let b): return b ? "true" : "false"
        case .null: return "null"
        case .array(let items): return "[" + items.map(\.text).joined(separator: ",") + "]"
        case .object(let pairs): return "{" + pairs.map { JSON.quote($0.0) + ":" + $0.1.text }.joined(separator: ",") + "}"
        }
    }

    package static func quote(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let c where c.value < 0x20: out += String(format: "\\u%04x", c.value)
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }

    /// An optional string as a string or null.
    package static func optional(_ s: String?) -> JSON { s.map(JSON.string) ?? .null }
}

// MARK: - Console

/// Where an example writes. Lines are written whole (one `write(2)` each) under a lock so events
/// from different threads never interleave.
package final class Console: Sendable {
    /// One JSON object per line on stdout instead of text.
    package let json: Bool
    /// The program name for messages (`central-scanner`).
    package let program: String
    /// Whether stdout is a terminal.
    package let stdoutIsTTY: Bool
    /// Progress/status lines go to stderr unless this is false (a role running in the background).
    package let verbose: Bool
    /// Prefix for text lines (e.g. "simulated central: ").
    package let prefix: String

    /// Whether this console writes only to stderr (a background role's).
    private let toStderrOnly: Bool
    /// Serialises writes so that lines from several threads never interleave; its state counts
    /// the writes. (Not a zero-sized state: ThreadSanitizer's Swift access checks report an
    /// empty lock state as a race on the lock itself.)
    private let lock = Guarded(0)

    package init(program: String, json: Bool, verbose: Bool = true, prefix: String = "", toStderrOnly: Bool = false) {
        self.program = program
        self.json = json
        self.verbose = verbose
        self.prefix = prefix
        self.toStderrOnly = toStderrOnly
        stdoutIsTTY = isatty(STDOUT_FILENO) == 1
    }

    /// A console for a role running next to the main one (`--simulate`): its events go to
    /// stderr as prefixed text, never to stdout.
    package func background(_ prefix: String) -> Console {
        Console(program: program, json: false, verbose: verbose, prefix: prefix, toStderrOnly: true)
    }

    /// An event: a JSON line on stdout with `--json`, else `text` (stdout when `result`, else stderr).
    package func event(_ name: String, _ fields: [(String, JSON)] = [], text: @autoclosure () -> String, result: Bool = false) {
        if json && !toStderrOnly {
            writeLine(JSON.object([("event", .string(name))] + fields).text, fd: STDOUT_FILENO)
        } else if result && !toStderrOnly {
            writeLine(prefix + text(), fd: STDOUT_FILENO)
        } else if verbose {
            writeLine(prefix + text(), fd: STDERR_FILENO)
        }
    }

    /// A line on stdout as is (the live table).
    package func raw(_ text: String) {
        lock.withLock { writes in Console.writeAll(text, fd: STDOUT_FILENO); writes += 1 }
    }

    /// `program: message` on stderr.
    package func error(_ message: String) {
        writeLine("\(program): \(message)", fd: STDERR_FILENO)
    }

    private func writeLine(_ line: String, fd: Int32) {
        lock.withLock { writes in Console.writeAll(line + "\n", fd: fd); writes += 1 }
    }

    private static func writeAll(_ text: String, fd: Int32) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            offset += n
        }
    }
}

/// Hex digits of `data`, lowercase, no separators.
package func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

/// A value in g with 3 decimals for text output.
package func grams(_ v: Double) -> String { String(format: "%+.3f", v) }
