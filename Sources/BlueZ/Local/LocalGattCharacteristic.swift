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
/// while notifying. `AcquireNotify`/`AcquireWrite` are answered `org.bluez.Error.NotSupported`
/// (the `NotifyAcquired`/`WriteAcquired` properties are not exported, so bluetoothd uses D-Bus).
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
    }
    // Sendable through this lock; the callback is copied out and called after unlocking.
    private let notifyState = Locked(NotifyState())

    /// A characteristic. `maxLength` bounds writes (`InvalidValueLength` beyond it); requests
    /// the application leaves unanswered fail after `requestTimeout`. Reads and writes are
    /// allowed when `flags` allow them and `readable` / `writable` are true
    /// (`org.bluez.Error.NotPermitted` otherwise).
    public init(uuid: String, flags: [String], value: Data = Data(), maxLength: Int = LocalGattCharacteristic.defaultMaxLength,
                requestTimeout: Duration = .seconds(10), readable: Bool = true, writable: Bool = true,
                descriptors: [LocalGattDescriptor] = []) {
        self.uuid = uuid.lowercased()
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

    /// Stores `value` and, while notifying, emits `PropertiesChanged` with the new `Value`
    /// (bluetoothd sends it as a notification or indication to every subscribed central).
    /// Returns whether it was sent.
    @discardableResult
    public func notify(_ value: Data) -> Bool {
        attribute.value = value
        guard isNotifying, let handle = attribute.exportHandle else { return false }
        do {
            try handle.setProperty("Value", value.dbusValue, interface: Self.interface)
            return true
        } catch {
            return false
        }
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

    /// Forgets the notifying state without a `StopNotify`: bluetoothd went away (its
    /// subscriptions with it) or the application was unregistered.
    public func resetNotifying() { setNotifying(false) }

    // MARK: Export

    func dbusInterface(service: ObjectPath) -> DBusInterface {
        let canNotify = flags.contains { $0 == "notify" || $0 == "indicate" || $0.hasSuffix("-notify") || $0.hasSuffix("-indicate") }
        let notSupported: @Sendable (MethodCall, Responder) -> Void = { _, r in
            r.fail(name: "org.bluez.Error.NotSupported", message: "Operation is not supported")
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
                DBusMethod("AcquireNotify", input: "a{sv}", output: "hq", handler: notSupported),
                DBusMethod("AcquireWrite", input: "a{sv}", output: "hq", handler: notSupported),
            ],
            properties: [
                DBusProperty("UUID", type: .string, value: .string(uuid)),
                DBusProperty("Service", type: .objectPath, value: .objectPath(service)),
                DBusProperty("Flags", type: .array(.string), value: flags.dbusValue),
                DBusProperty("Notifying", type: .bool, value: .bool(isNotifying)),
                DBusProperty("Value", type: .array(.byte), value: value.dbusValue),
            ])
    }
}
