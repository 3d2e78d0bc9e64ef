// ReplayLog: divergences on stderr, as they happen.
import Foundation

// MARK: - ReplayLog

/// Writes each divergence to stderr when it happens (a test's log then shows where the app
/// left the recording even when the app swallows the error).
enum ReplayLog {
    static func divergence(_ message: String) {
        FileHandle.standardError.write(Data("BlueZReplayer: \(message)\n".utf8))
    }
}
