// GatewayOptions: ble-gateway's command line.

import ExampleSupport
import Foundation

/// `ble-gateway [--config FILE] [--broker HOST:PORT] [--prefix P] [--gateway NAME] [--adapter hciN]
/// [--queue N] [--duration S] [--json] [--simulate [--simulated-devices N] [--notify-hz F]]`.
package struct GatewayOptions: CommandOptions {
    package static let program = "ble-gateway"
    package static let usage = """
    Usage: ble-gateway [--config FILE] [--broker HOST:PORT] [--prefix P] [--gateway NAME]
                       [--adapter hciN] [--queue N] [--duration S] [--json]
           ble-gateway --simulate [--broker HOST:PORT] [--simulated-devices N] [--notify-hz F] ...

    Follows BLE devices by address and reports matching advertisements to an MQTT broker:
      <prefix>/<gateway>/<address>/<characteristic>   readings (JSON, QoS 1)
      <prefix>/<gateway>/<address>/<characteristic>/set   writes in ({"value": 1}, {"hex": "01"}),
                                                   answered on …/set/result
      <prefix>/<gateway>/adv/<address>             advertisements matching a pattern
      <prefix>/<gateway>/status                    online / offline (retained, last will)
      <prefix>/<gateway>/stats                     counts (retained)
      homeassistant/sensor/…/config                Home Assistant discovery (retained)

      --config FILE     the JSON configuration (devices, characteristics, advertisement
                        patterns; see the README's "BLE-to-MQTT gateway" section)
      --broker H:P      the broker (default: the file's, else localhost:1883; with --simulate
                        a private mosquitto on a free loopback port)
      --prefix P        first topic level (default bluecap)
      --gateway NAME    this gateway's topic level (default: the host name); unique per broker
      --adapter hciN    the adapter (default: BlueZ's first)
      --queue N         readings kept while the broker is away (default 1000; oldest dropped)
      --duration S      stop after S seconds (default: until SIGINT/SIGTERM)
      --json            progress as JSON lines on stdout (default: text on stderr)
      --simulate        a simulated world: a SensorTag to follow, advertising sensors, and a
                        broker of its own unless --broker is given
      --simulated-devices N  with --simulate: N more devices notifying (a load test)
      --notify-hz F     with --simulate: notifications per second of each of those (default 10)

    Exit status: 0 done, 1 failure, 2 no usable Bluetooth, 64 bad arguments or configuration.
    """

    package var config: String?
    package var broker: BrokerAddress?
    package var prefix: String?
    package var gateway: String?
    package var adapter: String?
    package var queue: Int?
    package var duration: Duration?
    package var json = false
    package var simulate = false
    package var simulatedDevices = 0
    package var notifyHz = 10.0

    package init() {}

    package mutating func take(_ option: String, from a: inout Arguments) throws(UsageError) -> Bool {
        switch option {
        case "--config": config = try a.value(for: option)
        case "--broker": broker = try BrokerAddress(parsing: a.value(for: option))
        case "--prefix": prefix = try level(a.value(for: option), option)
        case "--gateway": gateway = try level(a.value(for: option), option)
        case "--adapter": adapter = try a.adapter(for: option)
        case "--queue": queue = try a.integer(for: option, in: 1...1_000_000)
        case "--duration": duration = try a.seconds(for: option)
        case "--json": json = true
        case "--simulate": simulate = true
        case "--simulated-devices": simulatedDevices = try a.integer(for: option, in: 0...500)
        case "--notify-hz":
            let text = try a.value(for: option)
            guard let hz = Double(text), hz > 0, hz <= 1000 else { throw UsageError("--notify-hz needs a rate from 0 to 1000, not \(text)") }
            notifyHz = hz
        default: return false
        }
        return true
    }

    package func validate() throws(UsageError) {
        if simulatedDevices > 0 && !simulate { throw UsageError("--simulated-devices needs --simulate") }
        if config == nil && !simulate { throw UsageError("give --config FILE (what to follow), or try --simulate") }
    }

    private func level(_ text: String, _ option: String) throws(UsageError) -> String {
        guard !text.isEmpty, text.count <= 64, !text.contains(where: { "/+#".contains($0) }) else {
            throw UsageError("\(option) needs a topic level (no '/', '+', '#'), not \(text)")
        }
        return text
    }
}
