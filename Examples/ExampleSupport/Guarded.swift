// Guarded: the examples' lock, a value behind an NSLock.

import Foundation

// MARK: - Guarded

/// A value that several threads share, read and written only under a lock.
///
/// The examples use this instead of `Synchronization.Mutex` for one reason: on Linux `Mutex`
/// locks with futexes that ThreadSanitizer does not see, so a program built with
/// `-sanitize=thread` reports every access a `Mutex` protects as a data race. `NSLock` is a
/// pthread mutex, which ThreadSanitizer understands. Without the sanitizer either is fine; copy
/// this type if you want to run your program under ThreadSanitizer too.
///
/// Like `Mutex`, `withLock` must stay short and must not call code that may take the lock
/// again (it is not recursive). Copies of a `Guarded` share the value and the lock.
public struct Guarded<Value>: @unchecked Sendable {
    // @unchecked Sendable: `box.value` is only read or written between `box.lock.lock()` and
    // `box.lock.unlock()`, in `withLock`.
    private final class Box {
        let lock = NSLock()
        var value: Value
        init(_ value: Value) { self.value = value }
    }

    private let box: Box

    /// A lock holding `initial`.
    public init(_ initial: Value) { box = Box(initial) }

    /// Runs `body` with exclusive access to the value and returns what it returns.
    public func withLock<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        box.lock.lock()
        defer { box.lock.unlock() }
        return try body(&box.value)
    }
}
