// The error model: one open set of kinds, matched like an enum; unknown BlueZ names kept; one
// ATT code type for the library and the simulator.
import BlueCapKit
import BlueZSimulator
import DBus
import Foundation
import Testing

@Suite("Error model: open kinds, BlueZ names, one ATT type")
struct ErrorModelTests {
    /// What a user's handler looks like: enum-style cases over the open set, with a default.
    static func advice(for error: BlueCapError) -> String {
        switch error.kind {
        case .inProgress, .notReady: return "retry"
        case .authenticationFailed, .authenticationRejected: return "pair again"
        case .notConnected, .disconnected: return "reconnect"
        case .timeout: return "timeout"
        case .terminated: return "terminated"
        case .other("org.example.Error.Custom"): return "custom"
        default: return "report"
        }
    }

    @Test("user code switching over kinds with a default compiles and matches each case")
    func switchOverKinds() {
        func error(_ kind: BlueCapError.Kind) -> BlueCapError { BlueCapError(kind: kind, operation: "test") }
        #expect(Self.advice(for: error(.inProgress)) == "retry")
        #expect(Self.advice(for: error(.notReady)) == "retry")
        #expect(Self.advice(for: error(.authenticationFailed)) == "pair again")
        #expect(Self.advice(for: error(.disconnected)) == "reconnect")
        #expect(Self.advice(for: error(.timeout)) == "timeout")
        #expect(Self.advice(for: error(.terminated)) == "terminated")
        #expect(Self.advice(for: error(.other("org.example.Error.Custom"))) == "custom")
        #expect(Self.advice(for: error(.failed)) == "report")
        #expect(Self.advice(for: error(.other("org.bluez.Error.SomethingNew"))) == "report")
    }

    @Test("a BlueZ error name the library does not know maps to .other(name), keeping the name")
    func unknownNameIsOther() {
        let remote = DBusCallError.remote(DBusRemoteError(name: "org.bluez.Error.SomethingNew", message: "from BlueZ 6"))
        let error = BlueZError(remote, operation: "org.bluez.Device1.Pair", path: "/org/bluez/hci0/dev_X")
        #expect(error.kind == .other("org.bluez.Error.SomethingNew"))
        #expect(error.kind.rawValue == "org.bluez.Error.SomethingNew")
        #expect(error.errorName == "org.bluez.Error.SomethingNew")
        #expect("\(error)".contains("SomethingNew"))
        let wrapped = BlueCapError(error, operation: "Peripheral.pair (org.bluez.Device1.Pair)")
        #expect(wrapped.kind == .other("org.bluez.Error.SomethingNew"))
        #expect(wrapped.path == "/org/bluez/hci0/dev_X")
    }

    @Test("a known BlueZ error name maps to its named kind, and .other of the same name is equal")
    func knownNames() {
        for (name, kind) in [("org.bluez.Error.InProgress", BlueCapError.Kind.inProgress),
                             ("org.bluez.Error.AuthenticationFailed", .authenticationFailed),
                             ("org.bluez.Error.AuthenticationCanceled", .authenticationCanceled),
                             ("org.bluez.Error.AuthenticationRejected", .authenticationRejected),
                             ("org.bluez.Error.AuthenticationTimeout", .authenticationTimeout),
                             ("org.bluez.Error.ConnectionAttemptFailed", .connectionAttemptFailed),
                             ("org.bluez.Error.AlreadyExists", .alreadyExists),
                             ("org.freedesktop.DBus.Error.ServiceUnknown", .serviceUnavailable),
                             ("org.freedesktop.DBus.Error.UnknownObject", .unknownObject)] {
            #expect(BlueZError.kind(forErrorName: name) == kind, "\(name)")
        }
        #expect(BlueCapError.Kind.other("org.bluez.Error.InProgress") == .inProgress)
        #expect(BlueCapError.Kind.inProgress.description == "InProgress")
    }

    @Test("a BlueZ error wrapped by a role keeps its kind, the operation and the path")
    func wrappingKeepsKind() {
        let bluez = BlueZError(kind: .notAuthorized, message: "Operation Not Authorized",
                               operation: "org.bluez.Device1.Connect", path: "/org/bluez/hci0/dev_A")
        let error = PeripheralError(bluez, operation: "Peripheral.connect (org.bluez.Device1.Connect)")
        #expect(error.kind == .notAuthorized)
        #expect(error.bluez == bluez)
        #expect(error.path == "/org/bluez/hci0/dev_A")
        #expect("\(error)" == "Peripheral.connect (org.bluez.Device1.Connect) on /org/bluez/hci0/dev_A failed: NotAuthorized (Operation Not Authorized)")
    }

    @Test("the simulator's firmware and the library answer with the same ATT type and names")
    func sharedATTType() {
        // The firmware's handler type spelled with BlueCapKit's ATTError: compiles only if they are one type.
        let firmware = PeripheralFirmware(onRead: { _ in .failure(.unlikelyError) })
        let handler: (@Sendable (GattRequest) -> Result<Data, BlueCapKit.ATTError>?)? = firmware.onRead
        #expect(handler != nil)
        // A library value is a firmware answer and an ATTResult without conversion.
        let fromLibrary: BlueCapKit.ATTError = .unlikelyError
        let firmwareAnswer: Result<Data, ATTError> = .failure(fromLibrary)
        guard case .failure(let code) = firmwareAnswer else { Issue.record("no failure"); return }
        #expect(ATTResult.failure(code) == .failure(.unlikelyError))
        #expect(code.code == 0x0e)
    }

    @Test("ATT codes round-trip through bluetoothd's D-Bus forms in both directions")
    func attMapping() {
        // The central reads the code back from bluetoothd's GATT client message.
        #expect(ATTError(bluezMessage: "Operation failed with ATT error: 0x0e") == .unlikelyError)
        #expect(ATTError(bluezMessage: "Operation failed with ATT error: 0x80") == .application(0x80))
        #expect(ATTError(bluezMessage: "Not paired") == nil)
        // A local app's reply maps to the code bluetoothd's GATT server answers.
        for code in [ATTError.readNotPermitted, .requestNotSupported, .invalidOffset, .insufficientAuthorization,
                     .invalidAttributeValueLength, .unlikelyError, .application(0x80), .application(0x9f)] {
            let reply = code.bluezError
            let permission: ATTError = code == .readNotPermitted ? .readNotPermitted : .writeNotPermitted
            #expect(ATTError(applicationReply: reply.errorName, message: reply.message, permissionError: permission) == code, "\(code)")
        }
    }
}
