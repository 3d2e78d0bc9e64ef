// The gateway to libdbus: every `dbus_*` call in the module goes through this file.
//
// Each wrapper is thin: it converts Swift strings and booleans, turns a set `DBusError` into a
// Swift `LibDBusFailure`, and keeps C types out of every signature above `internal`.
// Everything that touches a `DBusConnection` runs on that connection's owner thread
// (see `EventLoop`); message construction may run on any thread (libdbus messages are
// reference-counted atomically once `dbus_threads_init_default` has run, and a message
// under construction is touched by one thread only).
internal import CDBus
import Foundation

typealias RawConnection = OpaquePointer
typealias RawMessage = OpaquePointer
typealias RawWatch = OpaquePointer
typealias RawTimeout = OpaquePointer
typealias RawPendingCall = OpaquePointer
typealias RawIter = DBusMessageIter

/// A libdbus failure: the `DBusError` name and message.
struct LibDBusFailure: Error {
    var name: String
    var message: String
}

/// Callbacks libdbus makes into a connection's event loop, all on the owner thread.
protocol LibDBusLoopDelegate: AnyObject {
    func addWatch(_ watch: RawWatch) -> Bool
    func removeWatch(_ watch: RawWatch)
    func watchToggled(_ watch: RawWatch)
    func addTimeout(_ timeout: RawTimeout) -> Bool
    func removeTimeout(_ timeout: RawTimeout)
    func timeoutToggled(_ timeout: RawTimeout)
    func wakeUp()
    func dispatchStatusChanged()
    /// Returns true when the message was handled.
    func filter(_ message: RawMessage) -> Bool
}

enum LibDBus {
    // MARK: - Process-wide

    static let threadsInitialized: Bool = dbus_threads_init_default() != 0

    private static func withError<T>(_ body: (UnsafeMutablePointer<CDBus.DBusError>) -> T?) throws(LibDBusFailure) -> T {
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        let result = body(&error)
        if dbus_error_is_set(&error) != 0 {
            let failure = LibDBusFailure(
                name: error.name.map { String(cString: $0) } ?? "org.freedesktop.DBus.Error.Failed",
                message: error.message.map { String(cString: $0) } ?? "")
            dbus_error_free(&error)
            throw failure
        }
        guard let result else {
            throw LibDBusFailure(name: "org.freedesktop.DBus.Error.NoMemory", message: "libdbus returned no result")
        }
        return result
    }

    /// A non-blocking, close-on-exec eventfd (the owner thread's wake-up channel).
    static func makeEventFD() -> Int32 { eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK)) }

    // MARK: - Connections

    static func openPrivate(_ address: String) throws(LibDBusFailure) -> RawConnection {
        _ = threadsInitialized
        return try withError { dbus_connection_open_private(address, $0) }
    }

    static func busRegister(_ connection: RawConnection) throws(LibDBusFailure) {
        _ = try withError { dbus_bus_register(connection, $0) != 0 ? true : nil }
    }

    static func uniqueName(_ connection: RawConnection) -> String? {
        dbus_bus_get_unique_name(connection).map { String(cString: $0) }
    }

    static func close(_ connection: RawConnection) { dbus_connection_close(connection) }
    static func unref(connection: RawConnection) { dbus_connection_unref(connection) }
    static func setExitOnDisconnect(_ connection: RawConnection, _ exit: Bool) {
        dbus_connection_set_exit_on_disconnect(connection, exit ? 1 : 0)
    }
    static func isConnected(_ connection: RawConnection) -> Bool { dbus_connection_get_is_connected(connection) != 0 }
    static func canSendUnixFDs(_ connection: RawConnection) -> Bool {
        dbus_connection_can_send_type(connection, CDBUS_TYPE_UNIX_FD) != 0
    }

    /// Installs watch, timeout, wake-up and dispatch-status functions and the message filter,
    /// all forwarding to `delegate` (held unretained: the delegate outlives the connection).
    static func install(_ connection: RawConnection, delegate: LibDBusLoopDelegate) -> Bool {
        let data = Unmanaged.passUnretained(delegate as AnyObject).toOpaque()
        func loop(_ p: UnsafeMutableRawPointer?) -> LibDBusLoopDelegate {
            Unmanaged<AnyObject>.fromOpaque(p!).takeUnretainedValue() as! LibDBusLoopDelegate
        }
        let watches = dbus_connection_set_watch_functions(
            connection,
            { w, d in (Unmanaged<AnyObject>.fromOpaque(d!).takeUnretainedValue() as! LibDBusLoopDelegate).addWatch(w!) ? 1 : 0 },
            { w, d in (Unmanaged<AnyObject>.fromOpaque(d!).takeUnretainedValue() as! LibDBusLoopDelegate).removeWatch(w!) },
            { w, d in (Unmanaged<AnyObject>.fromOpaque(d!).takeUnretainedValue() as! LibDBusLoopDelegate).watchToggled(w!) },
            data, nil)
        let timeouts = dbus_connection_set_timeout_functions(
            connection,
            { t, d in (Unmanaged<AnyObject>.fromOpaque(d!).takeUnretainedValue() as! LibDBusLoopDelegate).addTimeout(t!) ? 1 : 0 },
            { t, d in (Unmanaged<AnyObject>.fromOpaque(d!).takeUnretainedValue() as! LibDBusLoopDelegate).removeTimeout(t!) },
            { t, d in (Unmanaged<AnyObject>.fromOpaque(d!).takeUnretainedValue() as! LibDBusLoopDelegate).timeoutToggled(t!) },
            data, nil)
        dbus_connection_set_wakeup_main_function(
            connection, { d in loop(d).wakeUp() }, data, nil)
        dbus_connection_set_dispatch_status_function(
            connection, { _, _, d in loop(d).dispatchStatusChanged() }, data, nil)
        let filter = dbus_connection_add_filter(
            connection,
            { _, m, d in
                (Unmanaged<AnyObject>.fromOpaque(d!).takeUnretainedValue() as! LibDBusLoopDelegate).filter(m!)
                    ? DBUS_HANDLER_RESULT_HANDLED : DBUS_HANDLER_RESULT_NOT_YET_HANDLED
            },
            data, nil)
        return watches != 0 && timeouts != 0 && filter != 0
    }

    /// Dispatches one queued message; returns true when more data remains.
    static func dispatch(_ connection: RawConnection) -> Bool {
        dbus_connection_dispatch(connection) == DBUS_DISPATCH_DATA_REMAINS
    }
    /// The next queued message, when it is a signal from the bus (not libdbus's local
    /// `org.freedesktop.DBus.Local` ones): taken off the queue (the caller owns it and must
    /// unreference it) so that it is handled without `dbus_connection_dispatch` (its filter list
    /// copy, connection reference and dispatch lock per message, `dbus_connection_borrow_message`
    /// then `dbus_connection_steal_borrowed_message`). `.other` leaves any other message queued for
    /// ``dispatch(_:)`` (method returns complete their pending calls only there); `.empty` when
    /// nothing is queued.
    static func takeSignal(_ connection: RawConnection) -> QueuedMessage {
        guard let m = dbus_connection_borrow_message(connection) else { return .empty }
        if dbus_message_get_type(m) == CDBUS_MESSAGE_TYPE_SIGNAL && dbus_message_has_interface(m, "org.freedesktop.DBus.Local") == 0 {
            dbus_connection_steal_borrowed_message(connection, m)
            return .signal(m)
        }
        dbus_connection_return_message(connection, m)
        return .other
    }
    enum QueuedMessage {
        case empty
        case signal(RawMessage)
        case other
    }
    static func hasDataToDispatch(_ connection: RawConnection) -> Bool {
        dbus_connection_get_dispatch_status(connection) == DBUS_DISPATCH_DATA_REMAINS
    }

    /// Queues `message` for sending; returns false when out of memory.
    static func send(_ connection: RawConnection, _ message: RawMessage) -> Bool {
        dbus_connection_send(connection, message, nil) != 0
    }

    static func sendWithReply(_ connection: RawConnection, _ message: RawMessage, timeoutMilliseconds: Int32) -> RawPendingCall? {
        var pending: OpaquePointer?
        guard dbus_connection_send_with_reply(connection, message, &pending, timeoutMilliseconds) != 0 else { return nil }
        return pending
    }

    // MARK: - Pending calls

    /// Sets the completion of `pending`; `box` is retained until libdbus frees the notify data.
    static func setNotify(_ pending: RawPendingCall, box: AnyObject, _ notify: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void) -> Bool {
        let data = Unmanaged.passRetained(box).toOpaque()
        return dbus_pending_call_set_notify(pending, notify, data, { d in
            Unmanaged<AnyObject>.fromOpaque(d!).release()
        }) != 0
    }
    static func stealReply(_ pending: RawPendingCall) -> RawMessage? { dbus_pending_call_steal_reply(pending) }
    static func cancel(_ pending: RawPendingCall) { dbus_pending_call_cancel(pending) }
    static func unref(pending: RawPendingCall) { dbus_pending_call_unref(pending) }

    // MARK: - Watches and timeouts

    static func fd(_ watch: RawWatch) -> Int32 { dbus_watch_get_unix_fd(watch) }
    /// (readable, writable) interest of the watch.
    static func flags(_ watch: RawWatch) -> (read: Bool, write: Bool) {
        let f = dbus_watch_get_flags(watch)
        return (f & DBUS_WATCH_READABLE.rawValue != 0, f & DBUS_WATCH_WRITABLE.rawValue != 0)
    }
    static func isEnabled(_ watch: RawWatch) -> Bool { dbus_watch_get_enabled(watch) != 0 }
    static func handle(_ watch: RawWatch, readable: Bool, writable: Bool, error: Bool, hangup: Bool) {
        var f: UInt32 = 0
        if readable { f |= DBUS_WATCH_READABLE.rawValue }
        if writable { f |= DBUS_WATCH_WRITABLE.rawValue }
        if error { f |= DBUS_WATCH_ERROR.rawValue }
        if hangup { f |= DBUS_WATCH_HANGUP.rawValue }
        _ = dbus_watch_handle(watch, f)
    }
    static func interval(_ timeout: RawTimeout) -> Int32 { dbus_timeout_get_interval(timeout) }
    static func isEnabled(timeout: RawTimeout) -> Bool { dbus_timeout_get_enabled(timeout) != 0 }
    static func handle(timeout: RawTimeout) { _ = dbus_timeout_handle(timeout) }

    // MARK: - Messages: creation and header

    static func newMethodCall(destination: String?, path: String, interface: String?, member: String) -> RawMessage? {
        dbus_message_new_method_call(destination, path, interface, member)
    }
    static func newSignal(path: String, interface: String, member: String) -> RawMessage? {
        dbus_message_new_signal(path, interface, member)
    }
    static func newMethodReturn(replySerial: UInt32, destination: String?) -> RawMessage? {
        guard let m = dbus_message_new(CDBUS_MESSAGE_TYPE_METHOD_RETURN) else { return nil }
        _ = dbus_message_set_reply_serial(m, replySerial)
        if let destination { _ = dbus_message_set_destination(m, destination) }
        dbus_message_set_no_reply(m, 1)
        return m
    }
    static func newError(replySerial: UInt32, destination: String?, name: String, message: String) -> RawMessage? {
        guard let m = dbus_message_new(CDBUS_MESSAGE_TYPE_ERROR) else { return nil }
        _ = dbus_message_set_reply_serial(m, replySerial)
        _ = dbus_message_set_error_name(m, name)
        if let destination { _ = dbus_message_set_destination(m, destination) }
        dbus_message_set_no_reply(m, 1)
        if !message.isEmpty {
            message.withCString { p in
                var ptr: UnsafePointer<CChar>? = p
                var iter = DBusMessageIter()
                dbus_message_iter_init_append(m, &iter)
                _ = dbus_message_iter_append_basic(&iter, CDBUS_TYPE_STRING, &ptr)
            }
        }
        return m
    }
    static func setDestination(_ m: RawMessage, _ destination: String) { _ = dbus_message_set_destination(m, destination) }
    static func setNoReply(_ m: RawMessage) { dbus_message_set_no_reply(m, 1) }
    static func unref(message: RawMessage) { dbus_message_unref(message) }

    /// Parses a message from its wire bytes (`dbus_message_demarshal`); nil when libdbus rejects them.
    static func demarshal(_ bytes: UnsafeRawBufferPointer) -> RawMessage? {
        guard let base = bytes.baseAddress, bytes.count > 0, bytes.count <= Int(Int32.max) else { return nil }
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        let m = dbus_message_demarshal(base.assumingMemoryBound(to: CChar.self), Int32(bytes.count), &error)
        if dbus_error_is_set(&error) != 0 { dbus_error_free(&error) }
        return m
    }

    /// The wire bytes of a message (`dbus_message_marshal`).
    static func marshal(_ m: RawMessage) -> [UInt8]? {
        var data: UnsafeMutablePointer<CChar>?
        var length: Int32 = 0
        guard dbus_message_marshal(m, &data, &length) != 0, let data else { return nil }
        defer { dbus_free(data) }
        return [UInt8](UnsafeRawBufferPointer(start: data, count: Int(length)))
    }

    /// Sets a message's serial (needed before `dbus_message_marshal`).
    static func setSerial(_ m: RawMessage, _ serial: UInt32) { dbus_message_set_serial(m, serial) }

    enum MessageType { case methodCall, methodReturn, error, signal, invalid }
    static func type(_ m: RawMessage) -> MessageType {
        switch dbus_message_get_type(m) {
        case CDBUS_MESSAGE_TYPE_METHOD_CALL: .methodCall
        case CDBUS_MESSAGE_TYPE_METHOD_RETURN: .methodReturn
        case CDBUS_MESSAGE_TYPE_ERROR: .error
        case CDBUS_MESSAGE_TYPE_SIGNAL: .signal
        default: .invalid
        }
    }
    static func serial(_ m: RawMessage) -> UInt32 { dbus_message_get_serial(m) }
    static func replySerial(_ m: RawMessage) -> UInt32 { dbus_message_get_reply_serial(m) }
    static func noReply(_ m: RawMessage) -> Bool { dbus_message_get_no_reply(m) != 0 }
    static func path(_ m: RawMessage) -> String? { dbus_message_get_path(m).map { String(cString: $0) } }
    /// The path header field; `previous` itself when it holds the same text (compared in place,
    /// no String made).
    static func path(_ m: RawMessage, reusing previous: String?) -> String? {
        guard let p = dbus_message_get_path(m) else { return nil }
        if let previous, cStringEquals(p, previous) { return previous }
        return String(cString: p)
    }
    static func interface(_ m: RawMessage) -> String? { dbus_message_get_interface(m).map { String(cString: $0) } }
    static func member(_ m: RawMessage) -> String? { dbus_message_get_member(m).map { String(cString: $0) } }
    static func errorName(_ m: RawMessage) -> String? { dbus_message_get_error_name(m).map { String(cString: $0) } }
    static func destination(_ m: RawMessage) -> String? { dbus_message_get_destination(m).map { String(cString: $0) } }
    static func sender(_ m: RawMessage) -> String? { dbus_message_get_sender(m).map { String(cString: $0) } }
    /// Whether the message's signature is the literal `signature` (passed to libdbus without
    /// bridging a String).
    static func hasSignature(_ m: RawMessage, literal signature: StaticString) -> Bool {
        signature.withUTF8Buffer { utf8 in
            utf8.withMemoryRebound(to: CChar.self) { dbus_message_has_signature(m, $0.baseAddress) != 0 }
        }
    }
    static func isSignal(_ m: RawMessage, interface: String, member: String) -> Bool {
        dbus_message_is_signal(m, interface, member) != 0
    }
    static func signature(_ m: RawMessage) -> String { dbus_message_get_signature(m).map { String(cString: $0) } ?? "" }
    /// The message's signature in place (valid while the message lives).
    static func signaturePointer(_ m: RawMessage) -> UnsafePointer<CChar>? { dbus_message_get_signature(m) }

    // MARK: - Message iterators: writing

    static func initAppend(_ m: RawMessage, _ iter: UnsafeMutablePointer<RawIter>) { dbus_message_iter_init_append(m, iter) }

    static func append<T: BitwiseCopyable>(_ iter: UnsafeMutablePointer<RawIter>, _ code: UInt8, _ value: T) -> Bool {
        var v = value
        return dbus_message_iter_append_basic(iter, Int32(code), &v) != 0
    }
    static func append(_ iter: UnsafeMutablePointer<RawIter>, _ code: UInt8, string: String) -> Bool {
        string.withCString { p in
            var ptr: UnsafePointer<CChar>? = p
            return dbus_message_iter_append_basic(iter, Int32(code), &ptr) != 0
        }
    }
    static func appendBytes(_ iter: UnsafeMutablePointer<RawIter>, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { buf in
            var p: UnsafePointer<UInt8>? = buf.baseAddress
            var dummy: UInt8 = 0
            if p == nil { p = withUnsafePointer(to: &dummy) { $0 } }
            return dbus_message_iter_append_fixed_array(iter, CDBUS_TYPE_BYTE, &p, Int32(buf.count)) != 0
        }
    }
    static func openContainer(_ iter: UnsafeMutablePointer<RawIter>, _ code: UInt8, _ signature: String?, _ sub: UnsafeMutablePointer<RawIter>) -> Bool {
        dbus_message_iter_open_container(iter, Int32(code), signature, sub) != 0
    }
    static func closeContainer(_ iter: UnsafeMutablePointer<RawIter>, _ sub: UnsafeMutablePointer<RawIter>) -> Bool {
        dbus_message_iter_close_container(iter, sub) != 0
    }
    static func abandonContainer(_ iter: UnsafeMutablePointer<RawIter>, _ sub: UnsafeMutablePointer<RawIter>) {
        dbus_message_iter_abandon_container_if_open(iter, sub)
    }

    // MARK: - Message iterators: reading

    /// Starts reading `m`; false when the body is empty.
    static func initRead(_ m: RawMessage, _ iter: UnsafeMutablePointer<RawIter>) -> Bool { dbus_message_iter_init(m, iter) != 0 }
    static func argType(_ iter: UnsafeMutablePointer<RawIter>) -> UInt8 { UInt8(truncatingIfNeeded: dbus_message_iter_get_arg_type(iter)) }
    static func next(_ iter: UnsafeMutablePointer<RawIter>) -> Bool { dbus_message_iter_next(iter) != 0 }
    static func elementType(_ iter: UnsafeMutablePointer<RawIter>) -> UInt8 {
        UInt8(truncatingIfNeeded: dbus_message_iter_get_element_type(iter))
    }
    static func recurse(_ iter: UnsafeMutablePointer<RawIter>, _ sub: UnsafeMutablePointer<RawIter>) { dbus_message_iter_recurse(iter, sub) }
    static func basic<T: BitwiseCopyable>(_ iter: UnsafeMutablePointer<RawIter>, as: T.Type, zero: T) -> T {
        var v = zero
        dbus_message_iter_get_basic(iter, &v)
        return v
    }
    static func string(_ iter: UnsafeMutablePointer<RawIter>) -> String {
        var p: UnsafePointer<CChar>? = nil
        dbus_message_iter_get_basic(iter, &p)
        return p.map { String(cString: $0) } ?? ""
    }
    static func bytes(_ iter: UnsafeMutablePointer<RawIter>) -> [UInt8] {
        var p: UnsafeRawPointer? = nil
        var n: Int32 = 0
        dbus_message_iter_get_fixed_array(iter, &p, &n)
        guard let p, n > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: p, count: Int(n)))
    }
    /// Whether the first argument is a string equal to `text`, without making a String.
    static func firstStringEquals(_ m: RawMessage, _ text: String) -> Bool {
        cStringEquals(firstArgumentString(m), text)
    }
    /// The first argument when it is a string: libdbus's pointer into the message body (valid
    /// while the message lives).
    static func firstArgumentString(_ m: RawMessage) -> UnsafePointer<CChar>? {
        var iter = RawIter()
        guard initRead(m, &iter), argType(&iter) == typeString else { return nil }
        var p: UnsafePointer<CChar>? = nil
        dbus_message_iter_get_basic(&iter, &p)
        return p
    }
    /// The first argument when it is a string or object path: libdbus's pointer into the message
    /// body (valid while the message lives).
    static func firstArgumentText(_ m: RawMessage) -> UnsafePointer<CChar>? {
        var iter = RawIter()
        guard initRead(m, &iter), argType(&iter) == typeString || argType(&iter) == typeObjectPath else { return nil }
        var p: UnsafePointer<CChar>? = nil
        dbus_message_iter_get_basic(&iter, &p)
        return p
    }
    /// Whether the interface and member header fields are `interface` and `member` (nil: the
    /// field is absent), compared in place without making Strings.
    static func hasHeader(_ m: RawMessage, interface: String?, member: String?) -> Bool {
        cStringEquals(dbus_message_get_interface(m), interface) && cStringEquals(dbus_message_get_member(m), member)
    }
    /// Whether the C string `p` equals `text` (both absent counts as equal).
    private static func cStringEquals(_ p: UnsafePointer<CChar>?, _ text: String?) -> Bool {
        guard let p, var text else { return p == nil && text == nil }
        return text.withUTF8 { utf8 in
            utf8.withMemoryRebound(to: CChar.self) { t in
                guard let base = t.baseAddress else { return p[0] == 0 }
                return strncmp(p, base, t.count) == 0 && p[t.count] == 0
            }
        }
    }
    /// The signature of the value under the iterator (for a container, its full type).
    static func currentSignature(_ iter: UnsafeMutablePointer<RawIter>) -> String {
        guard let p = dbus_message_iter_get_signature(iter) else { return "" }
        defer { dbus_free(p) }
        return String(cString: p)
    }

    // MARK: - Name validation (libdbus aborts on invalid names, so check first)

    static func isValidInterface(_ s: String) -> Bool { !s.utf8.contains(0) && dbus_validate_interface(s, nil) != 0 }
    static func isValidMember(_ s: String) -> Bool { !s.utf8.contains(0) && dbus_validate_member(s, nil) != 0 }
    static func isValidBusName(_ s: String) -> Bool { !s.utf8.contains(0) && dbus_validate_bus_name(s, nil) != 0 }
    static func isValidErrorName(_ s: String) -> Bool { !s.utf8.contains(0) && dbus_validate_error_name(s, nil) != 0 }

    // MARK: - Type codes (from the shim)

    static let typeByte = UInt8(CDBUS_TYPE_BYTE), typeBoolean = UInt8(CDBUS_TYPE_BOOLEAN)
    static let typeInt16 = UInt8(CDBUS_TYPE_INT16), typeUInt16 = UInt8(CDBUS_TYPE_UINT16)
    static let typeInt32 = UInt8(CDBUS_TYPE_INT32), typeUInt32 = UInt8(CDBUS_TYPE_UINT32)
    static let typeInt64 = UInt8(CDBUS_TYPE_INT64), typeUInt64 = UInt8(CDBUS_TYPE_UINT64)
    static let typeDouble = UInt8(CDBUS_TYPE_DOUBLE), typeString = UInt8(CDBUS_TYPE_STRING)
    static let typeObjectPath = UInt8(CDBUS_TYPE_OBJECT_PATH), typeSignature = UInt8(CDBUS_TYPE_SIGNATURE)
    static let typeUnixFD = UInt8(CDBUS_TYPE_UNIX_FD), typeArray = UInt8(CDBUS_TYPE_ARRAY)
    static let typeVariant = UInt8(CDBUS_TYPE_VARIANT), typeStruct = UInt8(CDBUS_TYPE_STRUCT)
    static let typeDictEntry = UInt8(CDBUS_TYPE_DICT_ENTRY), typeInvalid = UInt8(CDBUS_TYPE_INVALID)
}
