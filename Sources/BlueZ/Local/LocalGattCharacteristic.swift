// LocalGattCharacteristic: an org.bluez.GattCharacteristic1 object this process exports.

import DBus
import Foundation
import Locking
import Timing

/// A characteristic of a local GATT application, exported as `org.bluez.GattCharacteristic1`
/// at `<root>/serviceN/charM`.
///
/// Without handlers, reads answer the stored ``value`` and writes store the bytes (after the
/// flag, offset and length checks). With ``setReadHandler(_:)`` / ``setWriteHandler(_:)`` the
/// application decides each request; bluetoothd gets its reply only then.
/// `StartNotify`/`StopNotify` toggle `Notifying`; ``notify(_:)`` sends `PropertiesChanged(Value)`
/// while notifying.
///
/// A notifying characteristic also exports `NotifyAcquired` (unless `acquireNotify` is false), so
/// bluetoothd asks for a socket instead (`AcquireNotify`, when the first central subscribes):
/// ``notify(_:)`` then writes each value to that socket (one datagram, no D-Bus message) until
/// bluetoothd closes it (the last central unsubscribed or went).
///
/// With ``acquireWrite`` set (off by default), a characteristic that takes writes without
/// response also exports `WriteAcquired`, and bluetoothd hands it the writes on a socket
/// (`AcquireWrite`, at the first one): each datagram goes to the write handler as a `WriteValue`
/// would, attributed to the device named in the `AcquireWrite` call. bluetoothd acknowledges
/// them itself and shares the socket among all centrals: the application can refuse none, and
/// with several centrals writing it cannot tell them apart.
public final class LocalGattCharacteristic: Sendable {
    /// The interface name.
    public static let interface = "org.bluez.GattCharacteristic1"
    /// The default maximum value length (ATT's 512 bytes).
    public static let defaultMaxLength = 512

    /// The UUID, lowercase 128-bit form.
    public let uuid: String
    /// The `Flags` exported (`read`, `write`, `notify`, `encrypt-read`, …).
    public let flags: [String]
    /// The descriptors, exported at `<char>/descK`.
    public let descriptors: [LocalGattDescriptor]
    let attribute: LocalAttribute

    private struct NotifyState {
        var notifying = false
        var onChange: (@Sendable (Bool) -> Void)?
        /// The socket bluetoothd acquired for notifications, while open.
        var socket: AcquiredServerSocket?
        /// Values the socket refused (its buffer full), over every socket.
        var droppedBefore = 0
    }
    /// Whether bluetoothd is offered `AcquireNotify` (`NotifyAcquired` exported). Read when the
    /// application is exported: set it before registering.
    public var acquireNotify: Bool {
        get { offersSocket.withLock { $0 } }
        set { offersSocket.withLock { $0 = newValue } }
    }
    private let offersSocket: Locked<Bool>

    /// Whether bluetoothd is offered `AcquireWrite` (`WriteAcquired` exported) for writes without
    /// response; false by default. Read when the application is exported: set it before registering.
    public var acquireWrite: Bool {
        get { writeSocket.withLock { $0.offered } }
        set { writeSocket.withLock { $0.offered = newValue } }
    }
    private struct WriteSocketState {
        var offered = false
        var socket: AcquiredServerSocket?
    }
    // Sendable through this lock.
    private let writeSocket = Locked(WriteSocketState())
    // Sendable through this lock; the callback is copied out and called after unlocking.
    private let notifyState = Locked(NotifyState())

    /// A characteristic. `acquireNotify` offers bluetoothd the notification socket. `maxLength` bounds writes (`InvalidValueLength` beyond it); requests
    /// the application leaves unanswered fail after `requestTimeout`. Reads and writes are
    /// allowed when `flags` allow them and `readable` / `writable` are true
    /// (`org.bluez.Error.NotPermitted` otherwise).
    public init(uuid: String, flags: [String], value: Data = Data(), maxLength: Int = LocalGattCharacteristic.defaultMaxLength,
                requestTimeout: Duration = .seconds(10), readable: Bool = true, writable: Bool = true,
                descriptors: [LocalGattDescriptor] = [], acquireNotify: Bool = true) {
        self.uuid = uuid.lowercased()
        offersSocket = Locked(acquireNotify)
        self.flags = flags
        self.descriptors = descriptors
        attribute = LocalAttribute(interface: Self.interface, canRead: readable && LocalAttribute.allowsRead(flags),
                                   canWrite: writable && LocalAttribute.allowsWrite(flags), maxLength: maxLength,
                                   value: value, requestTimeout: requestTimeout)
    }

    // MARK: Value and handlers

    /// The stored value: what reads answer when there is no read handler. Setting it does not notify.
    public var value: Data {
        get { attribute.value }
        set { attribute.value = newValue }
    }

    /// The longest value a write may produce.
    public var maxLength: Int { attribute.maxLength }

    /// How long a request waits for the application before it is answered with the ATT
    /// Unlikely Error (see ``setUnansweredHandler(_:)``).
    public var requestTimeout: Duration {
        get { attribute.state.withLock { $0.requestTimeout } }
        set { attribute.state.withLock { $0.requestTimeout = newValue } }
    }

    /// What times ``requestTimeout`` (real time by default; a `ManualClock` in tests).
    public var clock: any TimerClock {
        get { attribute.state.withLock { $0.clock } }
        set { attribute.state.withLock { $0.clock = newValue } }
    }

    /// Routes `ReadValue` calls to `handler` (nil: answer from ``value``).
    public func setReadHandler(_ handler: GattRequestHandler?) {
        attribute.state.withLock { $0.readHandler = handler }
    }

    /// Routes `WriteValue` calls (after the flag, offset and length checks) to `handler`
    /// (nil: store the bytes).
    public func setWriteHandler(_ handler: GattRequestHandler?) {
        attribute.state.withLock { $0.writeHandler = handler }
    }

    /// Calls `handler` with each request the application left unanswered for ``requestTimeout``
    /// (the timeout is passed), after bluetoothd was answered with the Unlikely Error. Runs on a
    /// timer thread: do not block.
    public func setUnansweredHandler(_ handler: (@Sendable (GattServerRequest, Duration?) -> Void)?) {
        attribute.state.withLock { $0.unansweredHandler = handler }
    }

    // MARK: Notifications

    /// Whether bluetoothd asked for notifications (`StartNotify`, until `StopNotify`).
    public var isNotifying: Bool { notifyState.withLock { $0.notifying } }

    /// Calls `handler` with the new `Notifying` state after each `StartNotify`/`StopNotify`
    /// that changed it (on the D-Bus connection's thread).
    public func setNotifyingHandler(_ handler: (@Sendable (Bool) -> Void)?) {
        notifyState.withLock { $0.onChange = handler }
    }

    /// Stores `value` and, while notifying, sends it: as one datagram on the socket bluetoothd
    /// acquired (`AcquireNotify`), else as `PropertiesChanged` with the new `Value`; bluetoothd
    /// notifies or indicates it to every subscribed central. Returns whether it was sent: false
    /// when nobody subscribed, or when the socket's buffer is full (the value is dropped and
    /// counted in ``droppedNotificationCount``; the next value may go through).
    @discardableResult
    public func notify(_ value: Data) -> Bool {
        attribute.value = value
        if let socket = notifyState.withLock({ $0.socket }) {
            switch socket.send(value) {
            case .sent: return true
            case .full: return false
            case .closed: notifySocketEnded(); return false
            }
        }
        guard isNotifying, let handle = attribute.exportHandle else { return false }
        do {
            try handle.setProperty("Value", value.dbusValue, interface: Self.interface)
            return true
        } catch {
            return false
        }
    }

    /// Whether notifications go through a socket bluetoothd acquired (`AcquireNotify`).
    public var isNotifyAcquired: Bool { notifyState.withLock { $0.socket?.isOpen ?? false } }

    /// Values ``notify(_:)`` could not send because the acquired socket's buffer was full.
    public var droppedNotificationCount: Int {
        notifyState.withLock { $0.droppedBefore + ($0.socket?.dropped.load(ordering: .relaxed) ?? 0) }
    }

    // MARK: Acquired notifications

    /// `AcquireNotify(a{sv})`: a socket pair; bluetoothd gets one end and the MTU back, and the
    /// characteristic notifies through the other.
    private func handleAcquireNotify(_ call: MethodCall, _ r: Responder) {
        let options: GattRequestOptions
        do { options = try GattRequestOptions(dbusValue: call.body.first) } catch {
            return r.fail(name: "org.bluez.Error.InvalidArguments", message: error.message)
        }
        let mtu = UInt16(clamping: max(23, options.mtu ?? 23))
        // bluetoothd asks again once it closed the socket it had (the last central left, the link
        // dropped): the end of file may not have been handled yet (its handler runs on the
        // sockets' queue, on a busy host after this call). Only a socket bluetoothd still holds
        // makes the call a second acquisition.
        if let held = notifyState.withLock({ $0.socket }), !held.peerHasClosed {
            return r.fail(name: "org.bluez.Error.NotPermitted", message: "Notify already acquired")
        }
        let made: (AcquiredServerSocket, FileDescriptor)
        do {
            made = try AcquiredServerSocket.make(mtu: mtu) { [weak self] in self?.notifySocketEnded() }
        } catch {
            return r.fail(name: "org.bluez.Error.Failed", message: error.message)
        }
        let previous = notifyState.withLock { s -> AcquiredServerSocket? in
            defer { s.socket = made.0 }
            if let old = s.socket { s.droppedBefore += old.dropped.load(ordering: .relaxed) }
            return s.socket
        }
        previous?.close()
        r.succeed([.unixFD(made.1), .uint16(mtu)])
        try? attribute.exportHandle?.setProperty("NotifyAcquired", .bool(true), interface: Self.interface)
        setNotifying(true)
    }

    /// Whether writes arrive through a socket bluetoothd acquired (`AcquireWrite`).
    public var isWriteAcquired: Bool { writeSocket.withLock { $0.socket?.isOpen ?? false } }

    /// `AcquireWrite(a{sv})`: a socket pair; bluetoothd writes each value a central wrote without
    /// response to its end, and the characteristic hands them to the write handler.
    private func handleAcquireWrite(_ call: MethodCall, _ r: Responder) {
        let options: GattRequestOptions
        do { options = try GattRequestOptions(dbusValue: call.body.first) } catch {
            return r.fail(name: "org.bluez.Error.InvalidArguments", message: error.message)
        }
        // As for AcquireNotify: a socket whose end of file is still to be handled is no obstacle.
        if let held = writeSocket.withLock({ $0.socket }), !held.peerHasClosed {
            return r.fail(name: "org.bluez.Error.NotPermitted", message: "Write already acquired")
        }
        let mtu = UInt16(clamping: max(23, options.mtu ?? 23))
        let path = call.path ?? .root
        let writeOptions = GattRequestOptions(offset: 0, mtu: options.mtu, device: options.device, link: options.link, writeType: .command)
        let made: (AcquiredServerSocket, FileDescriptor)
        do {
            made = try AcquiredServerSocket.make(mtu: mtu, onDatagram: { [attribute] bytes in
                attribute.socketWrite(Data(bytes), options: writeOptions, path: path)
            }, onClose: { [weak self] in self?.writeSocketEnded() })
        } catch {
            return r.fail(name: "org.bluez.Error.Failed", message: error.message)
        }
        let previousWrite = writeSocket.withLock { s -> AcquiredServerSocket? in
            defer { s.socket = made.0 }
            return s.socket
        }
        previousWrite?.close()
        r.succeed([.unixFD(made.1), .uint16(mtu)])
        try? attribute.exportHandle?.setProperty("WriteAcquired", .bool(true), interface: Self.interface)
    }

    /// bluetoothd closed the write socket (the link went, or it gave up on it).
    private func writeSocketEnded() {
        let ended = writeSocket.withLock { s -> Bool in
            guard let socket = s.socket, !socket.isOpen else { return false }
            s.socket = nil
            return true
        }
        if ended { try? attribute.exportHandle?.setProperty("WriteAcquired", .bool(false), interface: Self.interface) }
    }

    /// The acquired socket closed (bluetoothd's end, or a send found it gone): notifications stop.
    private func notifySocketEnded() {
        let ended = notifyState.withLock { s -> Bool in
            guard let socket = s.socket, !socket.isOpen else { return false }
            s.droppedBefore += socket.dropped.load(ordering: .relaxed)
            s.socket = nil
            return true
        }
        guard ended else { return }
        try? attribute.exportHandle?.setProperty("NotifyAcquired", .bool(false), interface: Self.interface)
        setNotifying(false)
    }

    private func setNotifying(_ on: Bool) {
        let changed = notifyState.withLock { s -> (@Sendable (Bool) -> Void)?? in
            guard s.notifying != on else { return .none }
            s.notifying = on
            return .some(s.onChange)
        }
        guard case .some(let callback) = changed else { return }
        try? attribute.exportHandle?.setProperty("Notifying", .bool(on), interface: Self.interface)
        callback?(on)
    }

    /// Forgets the notifying state without a `StopNotify`, and closes the acquired sockets:
    /// bluetoothd went away (its subscriptions with it) or the application was unregistered.
    public func resetNotifying() {
        writeSocket.withLock { s -> AcquiredServerSocket? in
            defer { s.socket = nil }
            return s.socket
        }?.close()
        let socket = notifyState.withLock { s -> AcquiredServerSocket? in
            defer { s.socket = nil }
            if let socket = s.socket { s.droppedBefore += socket.dropped.load(ordering: .relaxed) }
            return s.socket
        }
        socket?.close()
        setNotifying(false)
    }

    // MARK: Export

    func dbusInterface(service: ObjectPath) -> DBusInterface {
        let canNotify = flags.contains { $0 == "notify" || $0 == "indicate" || $0.hasSuffix("-notify") || $0.hasSuffix("-indicate") }
        var acquired: [DBusProperty] = []
        let acquireNotify = self.acquireNotify, acquireWrite = self.acquireWrite
        let canWriteCommand = flags.contains("write-without-response") && attribute.canWrite
        if canNotify && acquireNotify {
            acquired.append(DBusProperty("NotifyAcquired", type: .bool, value: .bool(isNotifyAcquired)))
        }
        if canWriteCommand && acquireWrite {
            acquired.append(DBusProperty("WriteAcquired", type: .bool, value: .bool(isWriteAcquired)))
        }
        return DBusInterface(
            name: Self.interface,
            methods: [
                DBusMethod("ReadValue", input: "a{sv}", output: "ay") { [attribute] in attribute.readValue($0, $1) },
                DBusMethod("WriteValue", input: "aya{sv}") { [attribute] in attribute.writeValue($0, $1) },
                DBusMethod("StartNotify") { [weak self] _, r in
                    guard canNotify else { return r.fail(name: "org.bluez.Error.NotSupported", message: "Notify not supported") }
                    self?.setNotifying(true)
                    r.succeed()
                },
                DBusMethod("StopNotify") { [weak self] _, r in
                    self?.setNotifying(false)
                    r.succeed()
                },
                DBusMethod("Confirm") { _, r in r.succeed() },
                DBusMethod("AcquireNotify", input: "a{sv}", output: "hq") { [weak self, acquireNotify] call, r in
                    guard canNotify, acquireNotify, let self else {
                        return r.fail(name: "org.bluez.Error.NotSupported", message: "Operation is not supported")
                    }
                    self.handleAcquireNotify(call, r)
                },
                DBusMethod("AcquireWrite", input: "a{sv}", output: "hq") { [weak self, acquireWrite] call, r in
                    guard canWriteCommand, acquireWrite, let self else {
                        return r.fail(name: "org.bluez.Error.NotSupported", message: "Operation is not supported")
                    }
                    self.handleAcquireWrite(call, r)
                },
            ],
            properties: [
                DBusProperty("UUID", type: .string, value: .string(uuid)),
                DBusProperty("Service", type: .objectPath, value: .objectPath(service)),
                DBusProperty("Flags", type: .array(.string), value: flags.dbusValue),
                DBusProperty("Notifying", type: .bool, value: .bool(isNotifying)),
                DBusProperty("Value", type: .array(.byte), value: value.dbusValue),
            ] + acquired)
    }
}
