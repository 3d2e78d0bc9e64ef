// PeripheralOptions: accelerometer-peripheral's command line (DESIGN §7).

import Foundation
import ExampleSupport

/// The parsed command line of `accelerometer-peripheral`.
struct PeripheralOptions: CommandOptions {
    static let program = "accelerometer-peripheral"
    static let usage = """
        usage: accelerometer-peripheral [--adapter hciN] [--name NAME] [--secure] [--l2cap] [--json] [--simulate]

          Serves a TI SensorTag accelerometer (service F000AA10-…): Data (read, notify), Enabled
          (read, write; 0/1), UpdatePeriod (read, write; period ms = max(10, 10 × raw)). Advertises
          NAME with the service UUID, notifies synthetic motion every period while enabled, and
          prints what centrals do. Runs until SIGINT/SIGTERM, then unregisters and exits 0.
            --adapter hciN    the adapter to serve on (default: the first powered one; hci1 with --simulate)
            --name NAME       the advertised local name (default SensorTag)
            --secure          reading Data needs an encrypted link (encrypt-read): centrals pair first;
                              registers the default pairing agent (NoInputNoOutput) that accepts them
                              (needs permission to call org.bluez: root or the bluetooth group)
            --l2cap           also publish an L2CAP echo channel (LE credit-based; the kernel picks
                              the PSM) and print its PSM ({"event":"l2cap","psm":N} with --json); with
                              --simulate the simulated central also opens it and checks an echo
            --json            JSON lines on stdout; each sample sent is an {"event":"sent",…} line
            --simulate        run against an in-process simulated bluetoothd on a private bus, with a
                              simulated central on hci0 that connects, enables and subscribes

          Exit status: 0 stopped by a signal, 1 failed, 2 no bluetoothd / no usable adapter, 64 bad arguments.
        """

    var adapter: String?
    var name = "SensorTag"
    var json = false
    var simulate = false
    var secure = false
    var l2cap = false

    /// Takes one option of `accelerometer-peripheral` (``CommandOptions``).
    mutating func take(_ option: String, from args: inout Arguments) throws(UsageError) -> Bool {
        switch option {
        case "--adapter": adapter = try args.adapter(for: option)
        case "--name":
            name = try args.value(for: option)
            guard !name.isEmpty, name.utf8.count <= 29 else { throw UsageError("--name needs 1 to 29 bytes (it must fit the advertisement)") }
        case "--json": json = true
        case "--simulate": simulate = true
        case "--secure": secure = true
        case "--l2cap": l2cap = true
        default: return false
        }
        return true
    }
}
