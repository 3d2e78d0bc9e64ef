// LibMosquitto: the only place `mosquitto_*` is called (as DBus/Internal/LibDBus.swift is for
// libdbus). Everything above it speaks Swift: strings, Data, thrown MQTTError.

import CMosquitto
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Thin wrappers over libmosquitto's C API for one client handle.
///
/// libmosquitto is used in its threaded mode: ``startLoop(_:)`` starts its network thread, which
/// connects, reconnects with the delays of ``setReconnectDelay(_:_:_:)`` and calls the callbacks;
/// ``publish(_:_:_:)`` and ``subscribe(_:_:_:)`` may be called from any thread (libmosquitto
/// locks its own queues).
enum LibMosquitto {
    /// A client handle.
    typealias Handle = OpaquePointer

    /// A handle shared by the threads that publish.
    ///
    /// `@unchecked Sendable`: libmosquitto in threaded mode (`mosquitto_loop_start`) guards the
    /// handle's queues and socket with its own mutexes; the pointer itself never changes.
    final class SharedHandle: @unchecked Sendable {
        let handle: Handle
        init(_ handle: Handle) { self.handle = handle }
    }

    /// What the callbacks receive, reached through the handle's user data.
    final class Callbacks: @unchecked Sendable {
        // @unchecked Sendable: set once before the loop starts, then only read (by
        // libmosquitto's network thread).
        var connected: (@Sendable (Int32) -> Void)?
        var disconnected: (@Sendable (Int32) -> Void)?
        var published: (@Sendable (Int32) -> Void)?
        var message: (@Sendable (String, Data) -> Void)?
        init() {}
    }

    /// `mosquitto_lib_init`, once per process.
    private static let initialized: Bool = { mosquitto_lib_init() == MOSQ_ERR_SUCCESS.rawValue }()

    /// libmosquitto's version (`mosquitto_lib_version`), as `2.0.11`.
    static var version: String {
        var major: Int32 = 0, minor: Int32 = 0, revision: Int32 = 0
        _ = mosquitto_lib_version(&major, &minor, &revision)
        return "\(major).\(minor).\(revision)"
    }

    /// A new client (`mosquitto_new` with a clean session) whose callbacks go to `callbacks`,
    /// which must outlive the handle.
    static func new(clientID: String, callbacks: Callbacks) throws(MQTTError) -> Handle {
        guard initialized else { throw MQTTError(.library, "mosquitto_lib_init failed") }
        let user = Unmanaged.passUnretained(callbacks).toOpaque()
        guard let handle = mosquitto_new(clientID, true, user) else {
            throw MQTTError(.library, "mosquitto_new failed: \(String(cString: strerror(errno)))")
        }
        mosquitto_connect_callback_set(handle) { _, user, rc in
            guard let user else { return }
            Unmanaged<Callbacks>.fromOpaque(user).takeUnretainedValue().connected?(rc)
        }
        mosquitto_disconnect_callback_set(handle) { _, user, rc in
            guard let user else { return }
            Unmanaged<Callbacks>.fromOpaque(user).takeUnretainedValue().disconnected?(rc)
        }
        mosquitto_publish_callback_set(handle) { _, user, mid in
            guard let user else { return }
            Unmanaged<Callbacks>.fromOpaque(user).takeUnretainedValue().published?(mid)
        }
        mosquitto_message_callback_set(handle) { _, user, message in
            guard let user, let message, let topic = message.pointee.topic else { return }
            let length = Int(max(0, message.pointee.payloadlen))
            let payload = message.pointee.payload.map { Data(bytes: $0, count: length) } ?? Data()
            Unmanaged<Callbacks>.fromOpaque(user).takeUnretainedValue().message?(String(cString: topic), payload)
        }
        return handle
    }

    /// `mosquitto_username_pw_set`.
    static func setCredentials(_ handle: Handle, username: String, password: String?) throws(MQTTError) {
        try check(mosquitto_username_pw_set(handle, username, password), "setting the user name")
    }

    /// `mosquitto_will_set`: what the broker publishes when the connection is lost unannounced.
    static func setWill(_ handle: Handle, _ message: MQTTMessage) throws(MQTTError) {
        let rc = message.payload.withUnsafeBytes { bytes in
            mosquitto_will_set(handle, message.topic, Int32(bytes.count), bytes.baseAddress, Int32(message.qos), message.retain)
        }
        try check(rc, "setting the last will")
    }

    /// `mosquitto_reconnect_delay_set`, seconds.
    static func setReconnectDelay(_ handle: Handle, _ delay: UInt32, _ maximum: UInt32, _ exponential: Bool) {
        _ = mosquitto_reconnect_delay_set(handle, delay, maximum, exponential)
    }

    /// `mosquitto_connect_async`: starts connecting; the network thread finishes (and retries).
    /// Returns the first attempt's failure, if any (the loop keeps trying).
    static func connectAsync(_ handle: Handle, host: String, port: Int, keepalive: Int) -> MQTTError? {
        let rc = mosquitto_connect_async(handle, host, Int32(port), Int32(keepalive))
        return rc == MOSQ_ERR_SUCCESS.rawValue ? nil : error(rc, "connecting to \(host):\(port)")
    }

    /// `mosquitto_loop_start`: the network thread.
    static func startLoop(_ handle: Handle) throws(MQTTError) {
        try check(mosquitto_loop_start(handle), "starting the network thread")
    }

    /// `mosquitto_publish`; returns the message id.
    static func publish(_ handle: Handle, _ message: MQTTMessage) throws(MQTTError) -> Int32 {
        var mid: Int32 = 0
        let rc = message.payload.withUnsafeBytes { bytes in
            mosquitto_publish(handle, &mid, message.topic, Int32(bytes.count), bytes.baseAddress, Int32(message.qos), message.retain)
        }
        try check(rc, "publishing to \(message.topic)")
        return mid
    }

    /// `mosquitto_subscribe`.
    static func subscribe(_ handle: Handle, _ filter: String, _ qos: Int) throws(MQTTError) {
        try check(mosquitto_subscribe(handle, nil, filter, Int32(qos)), "subscribing to \(filter)")
    }

    /// `mosquitto_disconnect`, `mosquitto_loop_stop` (waits for the thread), `mosquitto_destroy`.
    static func close(_ handle: Handle) {
        _ = mosquitto_disconnect(handle)
        _ = mosquitto_loop_stop(handle, false)
        mosquitto_destroy(handle)
    }

    /// The text of a connection answer (`mosquitto_connack_string`).
    static func connackText(_ rc: Int32) -> String { String(cString: mosquitto_connack_string(rc)) }

    /// The text of an error code (`mosquitto_strerror`; errno's text for `MOSQ_ERR_ERRNO`).
    static func text(_ rc: Int32) -> String {
        if rc == MOSQ_ERR_ERRNO.rawValue { return String(cString: strerror(errno)) }
        return String(cString: mosquitto_strerror(rc))
    }

    // MARK: Errors

    private static func check(_ rc: Int32, _ what: String) throws(MQTTError) {
        if let e = error(rc, what) { throw e }
    }

    private static func error(_ rc: Int32, _ what: String) -> MQTTError? {
        guard rc != MOSQ_ERR_SUCCESS.rawValue else { return nil }
        let kind: MQTTError.Kind
        switch rc {
        case MOSQ_ERR_NO_CONN.rawValue, MOSQ_ERR_CONN_LOST.rawValue, MOSQ_ERR_ERRNO.rawValue, MOSQ_ERR_CONN_REFUSED.rawValue:
            kind = .unreachable
        case MOSQ_ERR_PAYLOAD_SIZE.rawValue, MOSQ_ERR_INVAL.rawValue, MOSQ_ERR_MALFORMED_UTF8.rawValue:
            kind = .invalid
        default:
            kind = .library
        }
        return MQTTError(kind, "\(what): \(text(rc))")
    }
}
