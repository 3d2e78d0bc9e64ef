// BlueZSimulator+Replay: a recorded scenario played back instead of the simulated world.

extension BlueZSimulator {
    /// A replay of `scenario` as `org.bluez` on `busAddress` instead of a simulated world: see
    /// ``BlueZReplayer``. Hand its ``BlueZReplayer/session(context:clock:)`` to the app under
    /// test and check ``BlueZReplayer/report`` at the end.
    public static func start(busAddress: String, replaying scenario: BlueZScenario, clock: (any TimerClock)? = nil,
                             unordered: Set<String> = BlueZReplayer.defaultUnordered) async throws -> BlueZReplayer {
        try await BlueZReplayer.start(busAddress: busAddress, replaying: scenario, clock: clock, unordered: unordered)
    }
}
