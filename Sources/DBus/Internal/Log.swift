// BLUECAP_LOG=debug: one line per message sent or received, on stderr.
import Glibc

enum Log {
    /// Read once; every trace site checks this flag first.
    static let enabled: Bool = {
        guard let p = getenv("BLUECAP_LOG") else { return false }
        return String(cString: p) == "debug"
    }()

    static func trace(_ direction: String, _ raw: RawMessage, connection: String) {
        let kind: String
        switch LibDBus.type(raw) {
        case .methodCall: kind = "call"
        case .methodReturn: kind = "return"
        case .error: kind = "error"
        case .signal: kind = "signal"
        case .invalid: kind = "invalid"
        }
        let serial = LibDBus.serial(raw)
        let reply = LibDBus.replySerial(raw)
        let sender = LibDBus.sender(raw) ?? (direction == "send" ? connection : "-")
        let member = LibDBus.member(raw) ?? LibDBus.errorName(raw) ?? "-"
        var line = "[dbus \(connection)] \(direction) \(kind) #\(serial)"
        if reply != 0 { line += " reply-to #\(reply)" }
        line += " \(sender)→\(LibDBus.destination(raw) ?? "-") \(LibDBus.path(raw) ?? "-") "
        line += "\(LibDBus.interface(raw) ?? "-").\(member) (\(LibDBus.signature(raw)))\n"
        emit(line)
    }

    private static func emit(_ line: String) {
        var line = line
        line.withUTF8 { buf in _ = write(2, buf.baseAddress, buf.count) }
    }

    static func warning(_ text: String) {
        emit("bluecap: \(text)\n")
    }
}
