// StopSignals: SIGINT and SIGTERM end the recording instead of the process.
import Dispatch
import Foundation

// MARK: - StopSignals

/// Turns SIGINT and SIGTERM into ``stopRequested`` (handled on a queue of their own, not the
/// main actor, which the recording loop occupies).
enum StopSignals {
    /// Installs the handlers; keep the sources alive while recording.
    static func install() -> [any DispatchSourceSignal] {
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let queue = DispatchQueue(label: "bluez-record.signals")
        return [SIGINT, SIGTERM].map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { stopRequested.store(true, ordering: .relaxed) }
            source.resume()
            return source
        }
    }
}
