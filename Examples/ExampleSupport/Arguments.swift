// Arguments: a small command-line reader shared by the examples.

import Foundation

/// Bad command-line arguments: the message is printed with the usage, and the program exits
/// with ``exitCode`` (64, EX_USAGE).
package struct UsageError: Error, CustomStringConvertible {
    package static let exitCode: Int32 = 64
    package let description: String
    package init(_ description: String) { self.description = description }
}

/// Reads `--flag` and `--option value` arguments in order.
package struct Arguments {
    private var remaining: ArraySlice<String>

    package init(_ arguments: [String] = Array(CommandLine.arguments.dropFirst())) {
        remaining = arguments[...]
    }

    /// The next argument, or nil at the end.
    package mutating func next() -> String? { remaining.popFirst() }

    /// The value after `option`.
    package mutating func value(for option: String) throws(UsageError) -> String {
        guard let v = remaining.popFirst(), !v.hasPrefix("--") else { throw UsageError("\(option) needs a value") }
        return v
    }

    /// The integer after `option`, within `range`.
    package mutating func integer(for option: String, in range: ClosedRange<Int>) throws(UsageError) -> Int {
        let text = try value(for: option)
        guard let n = Int(text), range.contains(n) else {
            throw UsageError("\(option) needs a whole number from \(range.lowerBound) to \(range.upperBound), not \(text)")
        }
        return n
    }

    /// The number of seconds after `option` (decimals allowed), more than zero.
    package mutating func seconds(for option: String) throws(UsageError) -> Duration {
        let text = try value(for: option)
        guard let s = Double(text), s > 0, s < 1_000_000 else { throw UsageError("\(option) needs a number of seconds, not \(text)") }
        return .milliseconds(Int((s * 1000).rounded()))
    }

    /// An adapter name after `option` (`hci0`).
    package mutating func adapter(for option: String) throws(UsageError) -> String {
        let name = try value(for: option)
        guard name.hasPrefix("hci"), Int(name.dropFirst(3)) != nil else { throw UsageError("\(option) needs an adapter name like hci0, not \(name)") }
        return name
    }
}
