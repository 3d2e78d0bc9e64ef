// Preflight: before using the system bus, say clearly what is missing (exit code 2).

import BlueCapKit  // Connection (re-exported): NameHasOwner before the managers exist, the examples' one raw D-Bus call
import Foundation

/// The system bus is unusable for BlueZ: printed as one line, exit code 2.
package struct MissingBlueZ: Error, CustomStringConvertible {
    package static let exitCode: Int32 = 2
    package let description: String
}

package enum Preflight {
    /// Connects to the system bus (`DBUS_SYSTEM_BUS_ADDRESS` if set) and checks that
    /// `org.bluez` has an owner (`org.freedesktop.DBus.NameHasOwner`).
    package static func systemBus() async throws(MissingBlueZ) -> Connection {
        let connection: Connection
        do {
            connection = try Connection(.system)
        } catch {
            throw MissingBlueZ(description: "cannot connect to the system bus (\(error)) — is dbus running? Or try --simulate")
        }
        let hasOwner: Bool
        do {
            let reply = try await connection.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                                  interface: "org.freedesktop.DBus", member: "NameHasOwner",
                                                  arguments: [.string("org.bluez")], timeout: .seconds(5))
            hasOwner = reply.body.first == .bool(true)
        } catch {
            connection.close()
            throw MissingBlueZ(description: "the system bus did not answer (\(error)) — is dbus running? Or try --simulate")
        }
        guard hasOwner else {
            connection.close()
            throw MissingBlueZ(description: "no org.bluez on the system bus — is bluetoothd running? (systemctl start bluetooth) Or try --simulate")
        }
        return connection
    }
}
