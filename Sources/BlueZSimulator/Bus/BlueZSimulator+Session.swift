// BlueZSimulator+Session: sessions on the simulator's bus, for the app under test.
import BlueCapKit

extension BlueZSimulator {
    /// A new `BluetoothSession` on the simulator's bus: give it to the managers under
    /// test (`CentralManager(session: simulator.session())`). Each call opens one connection;
    /// share the session between the managers of one simulated program, as a real program
    /// shares `BluetoothSession.default`. `clock` times the managers' deadlines (pass
    /// the `ManualClock` the simulator was started with to drive both sides); `context` is where
    /// callbacks run by default. L2CAP channels (`publishL2CAPChannel`, `openL2CAPChannel`)
    /// between sessions of this simulator in this process meet over Unix socket pairs.
    public func session(context: any ExecutionContext = .futuresDefault,
                        clock: any TimerClock = SystemClock.shared) -> BluetoothSession {
        BluetoothSession(bus: .address(busAddress), context: context, clock: clock)
    }
}
