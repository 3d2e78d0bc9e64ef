// GattServerRequest: one ReadValue/WriteValue call bluetoothd made on a local attribute,
// answered once by the application (or by its deadline).

import DBus
import Dispatch
import Foundation
import Synchronization
import Locking
import Timing

// MARK: - Options

/// How a central wrote (`type` in `WriteValue`'s options).
public enum GattWriteType: String, Sendable, Equatable {
    /// Write Request: the central waits for the response (`"request"`).
    case request
    /// Write Command, without response (`"command"`).
    case command
    /// Part of a reliable (queued) write (`"reliable"`).
    case reliable
}

/// The options bluetoothd passes with `org.bluez.GattCharacteristic1.ReadValue`/`WriteValue`
/// (and the `GattDescriptor1` methods) to an exported attribute.
public struct GattRequestOptions: Sendable, Equatable {
    /// `offset` (q): where the read or write starts.
    public var offset: Int
    /// `mtu` (q): the ATT MTU of the link, when given.
    public var mtu: Int?
    /// `device` (o): the central's `org.bluez.Device1` object.
    public var device: ObjectPath?
    /// `link` (s): the link type, e.g. `"LE"` or `"BR/EDR"`.
    public var link: String?
    /// `type` (s): the kind of write; nil for reads.
    public var writeType: GattWriteType?
    /// `prepare-authorize` (b): bluetoothd asks the application to authorize a prepared write
    /// before executing it; the value is not to be stored yet.
    public var prepareAuthorize: Bool

    /// Options with the given fields.
    public init(offset: Int = 0, mtu: Int? = nil, device: ObjectPath? = nil, link: String? = nil,
                writeType: GattWriteType? = nil, prepareAuthorize: Bool = false) {
        self.offset = offset
        self.mtu = mtu
        self.device = device
        self.link = link
        self.writeType = writeType
        self.prepareAuthorize = prepareAuthorize
    }

    /// Parses the `a{sv}` argument. Unknown keys are ignored; a known key of the wrong type
    /// throws ``BlueZError/Kind/invalidArguments``.
    public init(dbusValue: DBusValue?) throws(BlueZError) {
        self.init()
        guard let dbusValue else { return }
        let dict: [String: DBusValue]
        do { dict = try [String: DBusValue](dbusValue: dbusValue) } catch {
            throw BlueZError(kind: .invalidArguments, message: "options: \(error.message)")
        }
        do throws(DBusDecodingError) {
            if let v = dict["offset"] { offset = Int(try UInt16(dbusValue: v)) }
            if let v = dict["mtu"] { mtu = Int(try UInt16(dbusValue: v)) }
            if let v = dict["device"] { device = try ObjectPath(dbusValue: v) }
            if let v = dict["link"] { link = try String(dbusValue: v) }
            if let v = dict["prepare-authorize"] { prepareAuthorize = try Bool(dbusValue: v) }
            if let v = dict["type"] {
                let text = try String(dbusValue: v)
                guard let t = GattWriteType(rawValue: text) else {
                    throw DBusDecodingError("unknown write type \"\(text)\"")
                }
                writeType = t
            }
        } catch {
            throw BlueZError(kind: .invalidArguments, message: "options: \(error.message)")
        }
    }
}

// MARK: - Request

/// A read or write of a local characteristic or descriptor, waiting for the application.
///
/// bluetoothd's D-Bus call is answered only when ``succeed(value:)`` or ``fail(_:)`` is called
/// (from any thread, first answer wins), or when the attribute's request timeout elapses. A
/// request the application leaves unanswered (timed out, or released) is answered with the ATT
/// Unlikely Error (``ATTError/unlikelyErrorName``, which bluetoothd sends the central as 0x0E,
/// distinct from any application error 0x80…0x9F), so bluetoothd never waits forever; the
/// attribute's unanswered handler is told.
public final class GattServerRequest: Sendable, CustomStringConvertible {
    /// What the central asked for.
    public enum Operation: Sendable, Equatable {
        /// `ReadValue`.
        case read
        /// `WriteValue` with these bytes.
        case write(Data)
    }

    /// Read or write (with the bytes written).
    public let operation: Operation
    /// The exported attribute's object path.
    public let attribute: ObjectPath
    /// The call's options (offset, MTU, device, link, write type).
    public let options: GattRequestOptions
    private let completion: @Sendable (Result<Data?, BlueZError>) -> Void
    private let onUnanswered: (@Sendable (GattServerRequest, Duration?) -> Void)?
    private let answered = Atomic<Bool>(false)
    /// The request timeout's timer, cancelled as soon as the request is answered.
    private let deadline = Locked<ClockTask?>(nil)

    init(operation: Operation, attribute: ObjectPath, options: GattRequestOptions,
         onUnanswered: (@Sendable (GattServerRequest, Duration?) -> Void)? = nil,
         completion: @escaping @Sendable (Result<Data?, BlueZError>) -> Void) {
        self.operation = operation
        self.attribute = attribute
        self.options = options
        self.onUnanswered = onUnanswered
        self.completion = completion
    }

    /// Whether the request has been answered (or timed out).
    public var isAnswered: Bool { answered.load(ordering: .sequentiallyConsistent) }

    /// Answers with success. For a read, `value` is the attribute's whole value (the request's
    /// offset is applied when replying; nil replies the stored value); for a write, the written
    /// bytes are stored at the offset and `value` is ignored. Returns false if already answered.
    @discardableResult
    public func succeed(value: Data? = nil) -> Bool {
        guard claim() else { return false }
        completion(.success(value))
        return true
    }

    /// Answers with `error`; bluetoothd receives `error.errorName` (e.g. `org.bluez.Error.NotPermitted`)
    /// and turns it into the matching ATT error. Returns false if already answered.
    @discardableResult
    public func fail(_ error: BlueZError) -> Bool {
        guard claim() else { return false }
        completion(.failure(error))
        return true
    }

    private func claim() -> Bool {
        guard !answered.exchange(true, ordering: .sequentiallyConsistent) else { return false }
        cancelDeadline()
        return true
    }

    /// Answers the request with the Unlikely Error after `timeout` unless answered before, and
    /// tells the unanswered handler; the timer is cancelled by the answer rather than left
    /// pending until the deadline.
    func arm(timeout: Duration, clock: any TimerClock) {
        let timer = clock.schedule(after: timeout) { [weak self] in
            self?.expire(message: "the application did not answer within \(timeout)", timeout: timeout)
        }
        deadline.withLock { $0 = timer }
        // Answered before the timer was stored: nobody else will cancel it.
        if isAnswered { cancelDeadline() }
    }

    private func cancelDeadline() {
        deadline.withLock { timer in
            timer?.cancel()
            timer = nil
        }
    }

    var operationName: String {
        if case .read = operation { return "ReadValue" }
        return "WriteValue"
    }

    /// Answers with the Unlikely Error and reports the request as unanswered.
    private func expire(message: String, timeout: Duration?) {
        guard claim() else { return }
        BlueZLog.warning("\(self): unanswered, \(message); the central gets ATT error 0x0e (Unlikely Error). "
                         + "Answer every request with respondToRequest(_:withResult:)")
        completion(.failure(Self.unanswered(message, operation: operationName, path: attribute.rawValue)))
        onUnanswered?(self, timeout)
    }

    static func unanswered(_ message: String, operation: String?, path: String?) -> BlueZError {
        BlueZError(kind: .other(ATTError.unlikelyErrorName), message: message, operation: operation, path: path)
    }

    deinit {
        // Released unanswered: no handler call (the request is going away), but bluetoothd still
        // gets its answer.
        if claim() {
            BlueZLog.warning("\(description): released unanswered; the central gets ATT error 0x0e (Unlikely Error)")
            completion(.failure(Self.unanswered("the application released the request without answering",
                                                operation: operationName, path: attribute.rawValue)))
        }
    }

    /// `ReadValue /path offset 0` or `WriteValue /path 3 bytes offset 0 (request)`.
    public var description: String {
        switch operation {
        case .read: return "ReadValue \(attribute) offset \(options.offset)"
        case .write(let d):
            return "WriteValue \(attribute) \(d.count) bytes offset \(options.offset)"
                + (options.writeType.map { " (\($0.rawValue))" } ?? "")
        }
    }
}
