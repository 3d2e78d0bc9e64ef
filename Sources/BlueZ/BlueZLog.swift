// BLUECAP_LOG=debug: the BlueZ layer's debug lines on stderr.
import Glibc

/// Debug logging for the BlueZ layer and the layers above it, enabled with `BLUECAP_LOG=debug`.
public enum BlueZLog {
    /// Whether debug lines are written (read once from `BLUECAP_LOG`).
    public static let isEnabled: Bool = {
        guard let p = getenv("BLUECAP_LOG") else { return false }
        return String(cString: p) == "debug"
    }()

    /// Writes `text()` as one line on stderr when debug logging is on.
    public static func debug(_ text: @autoclosure () -> String) {
        guard isEnabled else { return }
        var line = "bluecap: " + text() + "\n"
        line.withUTF8 { buf in _ = write(2, buf.baseAddress, buf.count) }
    }
}
