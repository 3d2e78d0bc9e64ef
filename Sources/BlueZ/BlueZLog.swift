// BLUECAP_LOG=debug: the BlueZ layer's debug lines on stderr; an observer may receive them too.
import Glibc
import Synchronization
import Locking

/// Debug logging for the BlueZ layer and the layers above it, enabled with `BLUECAP_LOG=debug`,
/// or by installing an observer (``setObserver(_:)``) that receives each line.
public enum BlueZLog {
    /// Whether debug lines are written to stderr (read once from `BLUECAP_LOG`).
    public static let isEnabled: Bool = {
        guard let p = getenv("BLUECAP_LOG") else { return false }
        return String(cString: p) == "debug"
    }()

    private static let observed = Atomic<Bool>(false)
    private static let observer = Locked<(@Sendable (String) -> Void)?>(nil)

    /// Installs (or, with nil, removes) a function that receives every debug line, whether or
    /// not `BLUECAP_LOG=debug` is set: a bridge to an app's logger, or a test's check that bad
    /// bus input was logged. It runs on the thread that logs (often a D-Bus owner thread): it
    /// must not block.
    public static func setObserver(_ body: (@Sendable (String) -> Void)?) {
        observer.withLock { $0 = body }
        observed.store(body != nil, ordering: .releasing)
    }

    /// Writes `text()` as one line on stderr when debug logging is on, and hands it to the observer.
    public static func debug(_ text: @autoclosure () -> String) {
        let observing = observed.load(ordering: .acquiring)
        guard isEnabled || observing else { return }
        let message = text()
        if isEnabled {
            var line = "bluecap: " + message + "\n"
            line.withUTF8 { buf in _ = write(2, buf.baseAddress, buf.count) }
        }
        if observing, let body = observer.withLock({ $0 }) { body(message) }
    }

    /// Writes `text` as one `bluecap: warning:` line on stderr, always (a misuse the app must
    /// fix, such as a request left unanswered), and hands it to the observer.
    public static func warning(_ text: String) {
        var line = "bluecap: warning: " + text + "\n"
        line.withUTF8 { buf in _ = write(2, buf.baseAddress, buf.count) }
        if observed.load(ordering: .acquiring), let body = observer.withLock({ $0 }) { body("warning: " + text) }
    }
}
