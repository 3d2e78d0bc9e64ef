// Preflight: before using the system bus, say clearly what is missing (exit code 2).

import BlueCapKit
import Foundation

/// The system bus is unusable for BlueZ: printed as one line, exit code 2.
package struct MissingBlueZ: Error, CustomStringConvertible {
    package static let exitCode: Int32 = 2
    package let description: String
}

package enum Preflight {
    /// The process's session on the system bus (`DBUS_SYSTEM_BUS_ADDRESS` if set), once
    /// `org.bluez` is known to have an owner (``BluetoothSession/checkAvailable(timeout:)``).
    package static func systemSession() async throws(MissingBlueZ) -> BluetoothSession {
        let session = BluetoothSession.default
        do {
            try await session.checkAvailable(timeout: .seconds(5)).value
        } catch let error as BlueCapError {
            throw MissingBlueZ(description: "\(error.message) Or try --simulate")
        } catch {
            throw MissingBlueZ(description: "\(error) Or try --simulate")
        }
        return session
    }
}
