// PeripheralRigRecorder: PeripheralRig's optional recording of signals, states and advertising.
import BlueCapKit
import DBus
import Foundation

// MARK: - PeripheralRigRecorder

/// What a ``PeripheralRig`` started with `recording: true` records from its first moment: every
/// signal from org.bluez and from the peripheral's connection as the central's connection sees
/// them, the peripheral manager's states and advertising changes, each in arrival order.
public final class PeripheralRigRecorder: Sendable {
    /// Signals from org.bluez and from the peripheral's connection, in arrival order.
    public let signals = Collector<Message>()
    /// The peripheral manager's states.
    public let states = Collector<ManagerState>()
    /// The peripheral manager's advertising changes.
    public let advertising = Collector<Bool>()
    private let subscriptions: [SignalSubscription]

    init(central: Connection, peripheral: Connection, manager: PeripheralManager) {
        let signals = self.signals, states = self.states, advertising = self.advertising
        subscriptions = [
            central.subscribe(rule: MatchRule(sender: "org.bluez")) { signals.append($0) },
            central.subscribe(rule: MatchRule(sender: peripheral.uniqueName)) { signals.append($0) },
        ]
        manager.whenStateChanges().onSuccess(context: .immediate) { states.append($0) }
        manager.whenAdvertisingChanges().onSuccess(context: .immediate) { advertising.append($0) }
    }

    /// Waits until the bus delivers the recorded signals.
    func established() async throws {
        for s in subscriptions { try await s.established() }
    }

    /// Stops recording signals.
    func cancel() {
        for s in subscriptions { s.cancel() }
    }
}
