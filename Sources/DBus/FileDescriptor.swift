// An owned Unix file descriptor travelling in D-Bus messages.

import Glibc




/// A Unix file descriptor owned by this object and closed when it is released.
///
/// Received descriptors are duplicates owned by the receiver; sending duplicates the
/// descriptor into the message, so the object stays valid after sending.
public final class FileDescriptor: Sendable, Equatable, CustomStringConvertible {
    /// The descriptor number; valid while this object is alive.
    public let rawValue: Int32

    /// Takes ownership of `rawValue` (it is closed on deinit).
    public init(taking rawValue: Int32) { self.rawValue = rawValue }

    /// Duplicates `rawValue` (the caller keeps its own descriptor).
    public init(duplicating rawValue: Int32) throws(DBusDecodingError) {
        let fd = fcntl(rawValue, F_DUPFD_CLOEXEC, 0)
        guard fd >= 0 else { throw DBusDecodingError("dup(\(rawValue)) failed: errno \(errno)") }
        self.rawValue = fd
    }

    deinit { _ = Glibc.close(rawValue) }

    public static func == (a: FileDescriptor, b: FileDescriptor) -> Bool { a === b }
    public var description: String { "fd \(rawValue)" }
}
