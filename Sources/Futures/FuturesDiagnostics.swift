#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Locking

// MARK: - FuturesDiagnostics

/// Debugging aids: a one-line warning on standard error when a ``Promise`` is deinitialised
/// without having been completed (its future, and everything chained on it, can then never
/// complete: usually a forgotten `success`/`failure` on some path).
///
/// On in DEBUG builds and whenever the environment variable `BLUECAP_LOG` is `debug`; an explicit
/// other `BLUECAP_LOG` level (such as `info`) turns it off in DEBUG builds too. Off otherwise, where
/// it costs one flag test per deinitialised promise. It never traps.
enum FuturesDiagnostics {
    /// Whether uncompleted promises are reported (decided once, from the build and environment).
    static let warnsOnUncompletedPromise: Bool = {
        if let level = getenv("BLUECAP_LOG") {
            return String(cString: level).lowercased() == "debug"
        }
        #if DEBUG
        return true
        #else
        return false
        #endif
    }()

    /// Where warnings go instead of standard error, when set (tests capture them here).
    static let sink = Locked<WarningSink?>(nil)

    /// Reports that a `Promise<T>` was deinitialised while its future was pending.
    static func reportUncompletedPromise<T>(of type: T.Type) {
        let message = "Futures: warning: Promise<\(type)> deinitialised without being completed;"
            + " its future will never complete"
        if let sink = sink.withLock({ $0 }) {
            sink.handler(message)
            return
        }
        let line = message + "\n"
        _ = line.utf8CString.withUnsafeBufferPointer { buffer in
            write(2, buffer.baseAddress, buffer.count - 1)
        }
    }
}

/// A replacement destination for diagnostics (a class, so that storing it in a `Locked` does
/// not re-wrap the closure).
final class WarningSink: Sendable {
    let handler: @Sendable (String) -> Void

    init(_ handler: @escaping @Sendable (String) -> Void) {
        self.handler = handler
    }
}
