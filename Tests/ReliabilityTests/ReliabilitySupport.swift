// The reliability suites' helpers around TestSupport.CentralRig: a ready SensorTag, addresses,
// device paths, a future's failure within a deadline.
import BlueCapKit
import BlueZSimulator
import Foundation
import Futures
import TestSupport

extension CentralRig {
    /// One simulated SensorTag at the first of ``addresses(_:block:)``, discovered, connected
    /// and its accelerometer service discovered (``CentralRig/ready(_:disconnectRetries:)``).
    func readyTag(disconnectRetries: Int = 0) async throws -> (address: String, peripheral: Peripheral, service: Service, events: ConnectionEvents) {
        let a = addresses(1)[0]
        simulator.add(simulatedSensorTag(a))
        let (p, service, events) = try await ready(a, disconnectRetries: disconnectRetries)
        return (a, p, service, events)
    }
}

/// How soon "at once" must be: far below the 20–30 s timeouts of the operations it is checked
/// against, with room for a loaded 2-core machine or a sanitizer build.
let promptly: Duration = .seconds(8)

/// `n` distinct addresses `C0:FF:EE:xx:yy:zz` (`xx` is `block`).
func addresses(_ n: Int, block: Int = 0) -> [String] {
    (0..<n).map { String(format: "C0:FF:EE:%02X:%02X:%02X", block, $0 / 256, $0 % 256) }
}

/// The device path of `address` on hci0.
func devicePath(_ address: String) -> String { "/org/bluez/hci0/dev_" + address.replacingOccurrences(of: ":", with: "_") }

/// The error a future failed with (nil when it succeeded), within `timeout`.
func failure<T: Sendable>(of future: Future<T>, within timeout: Duration = .seconds(5)) async throws -> (any Error)? {
    try await withDeadline(timeout, "future") { () async -> Result<Bool, any Error> in
        do { _ = try await future.value; return .success(true) } catch { return .failure(error) }
    }.failureValue
}

extension Result {
    var failureValue: Failure? { if case .failure(let e) = self { e } else { nil } }
}

/// Seconds as a Double, for messages.
extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
