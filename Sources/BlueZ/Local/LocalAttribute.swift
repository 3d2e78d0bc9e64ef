// LocalAttribute: the value, handlers and ReadValue/WriteValue logic shared by exported
// characteristics and descriptors.

import DBus
import Foundation
import Locking
import Timing

// MARK: - Handlers

/// Decides a read or write of a local attribute: answer the request (now or later, from any
/// thread) with `succeed` or `fail`. Called on the D-Bus connection's thread: do not block.
public typealias GattRequestHandler = @Sendable (GattServerRequest) -> Void

// MARK: - LocalAttribute

/// The state of one exported characteristic or descriptor value.
final class LocalAttribute: Sendable {
    struct State {
        var value: Data
        var readHandler: GattRequestHandler?
        var writeHandler: GattRequestHandler?
        var unansweredHandler: (@Sendable (GattServerRequest, Duration?) -> Void)?
        var requestTimeout: Duration
        /// What times ``requestTimeout``.
        var clock: any TimerClock = SystemClock.shared
        var export: ExportHandle?
    }

    let interface: String
    let canRead: Bool
    let canWrite: Bool
    let maxLength: Int
    // Sendable through this lock; user handlers are copied out and called after unlocking.
    let state: Locked<State>

    init(interface: String, canRead: Bool, canWrite: Bool, maxLength: Int, value: Data, requestTimeout: Duration) {
        self.interface = interface
        self.canRead = canRead
        self.canWrite = canWrite
        self.maxLength = maxLength
        state = Locked(State(value: value, requestTimeout: requestTimeout))
    }

    var value: Data {
        get { state.withLock { $0.value } }
        set { state.withLock { $0.value = newValue } }
    }

    var exportHandle: ExportHandle? { state.withLock { $0.export } }

    // MARK: Methods

    /// `ReadValue(a{sv}) -> ay`.
    func readValue(_ call: MethodCall, _ responder: Responder) {
        let path = call.path ?? .root
        guard canRead else {
            return responder.fail(name: "org.bluez.Error.NotPermitted", message: "Read not permitted")
        }
        let options: GattRequestOptions
        do { options = try GattRequestOptions(dbusValue: call.body.first) } catch {
            return responder.fail(name: error.errorName, message: error.message)
        }
        let (handler, timeout, unanswered, clock) = state.withLock {
            ($0.readHandler, $0.requestTimeout, $0.unansweredHandler, $0.clock)
        }
        guard let handler else { return reply(read: nil, options: options, responder) }
        let request = GattServerRequest(operation: .read, attribute: path, options: options,
                                        onUnanswered: unanswered) { [self] result in
            switch result {
            case .success(let value): reply(read: value, options: options, responder)
            case .failure(let e): responder.fail(name: e.errorName, message: e.message)
            }
        }
        request.arm(timeout: timeout, clock: clock)
        handler(request)
    }

    private func reply(read value: Data?, options: GattRequestOptions, _ responder: Responder) {
        let full = value ?? self.value
        guard options.offset <= full.count else {
            return responder.fail(name: "org.bluez.Error.InvalidOffset",
                                  message: "offset \(options.offset) beyond the \(full.count)-byte value")
        }
        responder.succeed([Data(full.dropFirst(options.offset)).dbusValue])
    }

    /// `WriteValue(ay, a{sv})`.
    func writeValue(_ call: MethodCall, _ responder: Responder) {
        let path = call.path ?? .root
        guard canWrite else {
            return responder.fail(name: "org.bluez.Error.NotPermitted", message: "Write not permitted")
        }
        let options: GattRequestOptions
        let bytes: Data
        do {
            bytes = try Data(dbusValue: call.body.first ?? .array(element: .byte, []))
            options = try GattRequestOptions(dbusValue: call.body.count > 1 ? call.body[1] : nil)
        } catch let e as BlueZError {
            return responder.fail(name: e.errorName, message: e.message)
        } catch {
            return responder.fail(name: "org.bluez.Error.InvalidArguments", message: "\(error)")
        }
        let (stored, handler, timeout, unanswered, clock) = state.withLock {
            ($0.value, $0.writeHandler, $0.requestTimeout, $0.unansweredHandler, $0.clock)
        }
        guard options.offset <= stored.count else {
            return responder.fail(name: "org.bluez.Error.InvalidOffset",
                                  message: "offset \(options.offset) beyond the \(stored.count)-byte value")
        }
        guard options.offset + bytes.count <= maxLength else {
            return responder.fail(name: "org.bluez.Error.InvalidValueLength",
                                  message: "\(options.offset + bytes.count) bytes exceed the maximum of \(maxLength)")
        }
        let commit: @Sendable () -> Void = { [self] in
            if !options.prepareAuthorize { store(bytes, at: options.offset) }
            responder.succeed()
        }
        guard let handler else { return commit() }
        let request = GattServerRequest(operation: .write(bytes), attribute: path, options: options,
                                        onUnanswered: unanswered) { result in
            switch result {
            case .success: commit()
            case .failure(let e): responder.fail(name: e.errorName, message: e.message)
            }
        }
        request.arm(timeout: timeout, clock: clock)
        handler(request)
    }

    /// A value a central wrote without response that arrived on the socket bluetoothd acquired
    /// (`AcquireWrite`): checked and handed to the write handler as a `WriteValue` would be,
    /// with `options` (the device of the `AcquireWrite` call). Nothing is answered: bluetoothd
    /// acknowledged it already. Returns false when the value was refused by the checks.
    @discardableResult
    func socketWrite(_ bytes: Data, options: GattRequestOptions, path: ObjectPath) -> Bool {
        guard canWrite, bytes.count <= maxLength else { return false }
        let (handler, timeout, unanswered, clock) = state.withLock {
            ($0.writeHandler, $0.requestTimeout, $0.unansweredHandler, $0.clock)
        }
        guard let handler else {
            store(bytes, at: 0)
            return true
        }
        let request = GattServerRequest(operation: .write(bytes), attribute: path, options: options,
                                        onUnanswered: unanswered) { [self] result in
            if case .success = result { store(bytes, at: 0) }
        }
        request.arm(timeout: timeout, clock: clock)
        handler(request)
        return true
    }

    /// Replaces the bytes from `offset` on with `bytes` (the value is cut at `offset` first).
    private func store(_ bytes: Data, at offset: Int) {
        state.withLock { s in
            let head = s.value.prefix(min(offset, s.value.count))
            s.value = Data(head) + bytes
        }
    }
}

// MARK: - Flags

extension LocalAttribute {
    /// Whether BlueZ `Flags` allow reading (`read` or a secured read).
    static func allowsRead(_ flags: [String]) -> Bool {
        flags.contains { $0 == "read" || $0.hasSuffix("-read") }
    }

    /// Whether BlueZ `Flags` allow any kind of write.
    static func allowsWrite(_ flags: [String]) -> Bool {
        flags.contains {
            ["write", "write-without-response", "reliable-write", "authenticated-signed-writes"].contains($0)
                || $0.hasSuffix("-write")
        }
    }
}
