// DoctorMode: central-scanner --doctor — BluetoothSession.diagnose's findings as a table or
// JSON lines.

import BlueCapKit
import ExampleSupport
import Foundation

enum DoctorMode {
    /// Runs the doctor on the system bus (or the simulated world); returns the exit status:
    /// 0 without a problem, 1 with one, 2 when bluetoothd cannot be reached.
    static func run(_ options: ScannerOptions, _ console: Console) async -> Int32 {
        var world: SimulatedWorld?
        let session: BluetoothSession
        let doctorOptions: DoctorOptions
        if options.simulate {
            do { world = try await SimulatedWorld.start(neighbours: false) } catch {
                console.error("cannot start the simulation: \(error)")
                return 1
            }
            session = world!.session()
            // The simulated bluetoothd is not this machine's: its files are not read.
            doctorOptions = .busOnly
        } else {
            session = BluetoothSession.default
            doctorOptions = DoctorOptions()
        }
        let findings = (try? await session.diagnose(options: doctorOptions).value) ?? []
        if console.json {
            for f in findings {
                console.event("finding", [("check", .string(f.check)), ("status", .string(f.status.rawValue)),
                                          ("cause", .string(f.cause)), ("fix", .string(f.fix))], text: f.line)
            }
        } else {
            console.raw(DoctorFinding.table(findings))
        }
        _ = try? await session.close().value
        world?.stop()
        if findings.contains(where: { $0.check == DoctorFinding.bluetoothdCheck && $0.status == .problem }) { return MissingBlueZ.exitCode }
        return findings.contains { $0.status == .problem } ? 1 : 0
    }
}
