// ScenarioEvent: one line of a recording after the object tree.

// MARK: - ScenarioEvent

/// What happened on the bus between the app and BlueZ, at an offset from the start of the
/// recording.
package enum ScenarioEvent: Sendable, Equatable {
    /// BlueZ emitted a signal (`InterfacesAdded`, `PropertiesChanged`…).
    case signal(at: Duration, ScenarioMessage)
    /// The app called BlueZ; BlueZ answered `outcome` after `latency`.
    case call(at: Duration, ScenarioMessage, ScenarioOutcome, latency: Duration)
    /// BlueZ called into the app (agent, GATT application, advertisement); the app answered `outcome`.
    case incoming(at: Duration, ScenarioMessage, ScenarioOutcome)

    /// The offset from the start of the recording.
    package var at: Duration {
        switch self {
        case .signal(let at, _), .call(let at, _, _, _), .incoming(let at, _, _): at
        }
    }

    /// Whether the event is a call of the app.
    package var isCall: Bool { if case .call = self { true } else { false } }

    /// The message of the event.
    package var message: ScenarioMessage {
        switch self {
        case .signal(_, let m), .call(_, let m, _, _), .incoming(_, let m, _): m
        }
    }
}
