// CommandOptions: the command-line handling both examples share — the argument loop, -h/--help,
// and a usage error printed with the usage and turned into exit status 64.

import Foundation

/// An example's command line: the options one program understands, read one at a time by
/// ``parse(_:)``; ``read(_:)`` adds the help and usage-error handling every example does the same way.
package protocol CommandOptions {
    /// The program name for messages (`central-scanner`).
    static var program: String { get }
    /// The text printed for `-h`/`--help`, and after a usage error.
    static var usage: String { get }
    /// The defaults, before any argument is read.
    init()
    /// Takes `option` (and its value from `arguments`); false when this program has no such option.
    mutating func take(_ option: String, from arguments: inout Arguments) throws(UsageError) -> Bool
    /// Checks the options together once every argument is read.
    func validate() throws(UsageError)
}

/// Reading the command line ended the program: after `--help` (status 0) or a usage error
/// (status 64, ``UsageError/exitCode``); what to print has been printed.
package struct CommandLineExit: Error {
    package let status: Int32
}

extension CommandOptions {
    package func validate() throws(UsageError) {}

    /// Parses the arguments; `help` is true for `-h`/`--help` (the arguments after it are not read).
    package static func parse(_ arguments: [String]) throws(UsageError) -> (options: Self, help: Bool) {
        var options = Self()
        var args = Arguments(arguments)
        while let a = args.next() {
            if a == "-h" || a == "--help" { return (options, true) }
            guard try options.take(a, from: &args) else { throw UsageError("unknown argument \(a)") }
        }
        try options.validate()
        return (options, false)
    }

    /// The options to run with. For `--help` prints the usage on stdout; for bad arguments prints
    /// `program: message` and the usage on stderr; both end the program with ``CommandLineExit``.
    package static func read(_ arguments: [String]) throws(CommandLineExit) -> Self {
        let parsed: (options: Self, help: Bool)
        do { parsed = try parse(arguments) } catch {
            FileHandle.standardError.write(Data("\(program): \(error)\n\(usage)\n".utf8))
            throw CommandLineExit(status: UsageError.exitCode)
        }
        if parsed.help {
            print(usage)
            throw CommandLineExit(status: 0)
        }
        return parsed.options
    }
}
