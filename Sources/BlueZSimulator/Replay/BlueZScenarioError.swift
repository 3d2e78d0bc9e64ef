// BlueZScenarioError: why a scenario file could not be read.

// MARK: - BlueZScenarioError

/// A scenario file that cannot be read: the line (1-based), the field on it and what is wrong.
/// Fix the file at that line (or record it again); nothing of a file with an error is used.
public struct BlueZScenarioError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The 1-based line number in the file (0: the file as a whole).
    public let line: Int
    /// The field on that line (`"call.args[1]"`), or `""` for the line as a whole.
    public let field: String
    /// What is wrong, and what was expected.
    public let problem: String

    /// An error at `line`, `field`.
    public init(line: Int, field: String, problem: String) {
        self.line = line
        self.field = field
        self.problem = problem
    }

    /// "line 4, call.args[0]: expected …".
    public var description: String {
        "scenario line \(line)\(field.isEmpty ? "" : ", \(field)"): \(problem)"
    }
}
