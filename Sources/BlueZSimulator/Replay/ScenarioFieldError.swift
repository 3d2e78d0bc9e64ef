// ScenarioFieldError: a bad field of a scenario line, before its line number is known.

// MARK: - ScenarioFieldError

/// What is wrong with one field of a scenario line; ``BlueZScenario`` adds the line number.
struct ScenarioFieldError: Error {
    let field: String
    let problem: String
}
