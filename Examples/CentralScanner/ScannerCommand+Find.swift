// ScannerCommand+Find: the device a mode is given by address (--pair, --l2cap).

import BlueCapKit
import Foundation
import ExampleSupport

extension ScannerCommand {
    // MARK: - Finding a device by address

    /// The device bluetoothd knows at `address` under the manager's adapter, else the first a
    /// scan of up to `timeout` finds; fails saying so when the scan ends without it.
    static func find(_ address: String, _ manager: CentralManager, timeout: Duration) async throws -> Peripheral {
        if let known = manager.retrievePeripherals(withAddresses: [address]).first { return known }
        let found = Promise<Peripheral>()
        let scan = manager.startScanning(timeout: timeout)
        scan.onSuccess { if $0.address.uppercased() == address { found.success($0) } }
        scan.onFailure { error in
            if let error = error as? CentralManagerError, error.kind == .scanTimedOut {
                found.failure(PairModeError("\(address) was not found within \(timeout)"))
            } else {
                found.failure(error)
            }
        }
        scan.onFinish { found.failure(PairModeError("\(address) was not found within \(timeout)")) }
        defer { manager.stopScanning() }
        return try await found.future.value
    }
}
