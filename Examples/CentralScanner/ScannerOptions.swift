// ScannerOptions: central-scanner's command line (DESIGN §7; scripts and tests drive it).

import BlueCapKit
import Foundation
import ExampleSupport

/// The parsed command line of `central-scanner`.
struct ScannerOptions: CommandOptions {
    static let program = "central-scanner"
    static let usage = """
        usage: central-scanner [--adapter hciN|all] [--service UUID]... [--name-prefix P] [--duration S] [--json] [--simulate]
               central-scanner --passive PATTERN... [--adapter hciN] [--duration S] [--json] [--simulate]
               central-scanner --list-adapters [--json] [--simulate]
               central-scanner --accelerometer [--samples N] [--period-ms M] [--start-notify] [--json] [--adapter hciN] [--simulate]
               central-scanner --pair ADDRESS [--passkey N | --auto-confirm] [--json] [--adapter hciN] [--simulate]
               central-scanner --connect ADDRESS [--address-type public|random] [--timeout S] [--json] [--adapter hciN] [--simulate]
               central-scanner --l2cap ADDRESS --psm N [--bytes B] [--timeout S] [--json] [--adapter hciN] [--simulate]
               central-scanner --doctor [--json] [--simulate]

          Scan mode: a live table on a terminal, one line per device otherwise, one JSON object per
          line with --json ({"event":"discovered","address":…,"name":…,"rssi":…,"uuids":[…],
          "manufacturerData":{"<id>":"<hex>"},"serviceData":{"<uuid>":"<hex>"},"txPower":…,
          "appearance":…,"addressType":"public"|"random","flags":6,"flagNames":[…],
          "advertisingData":{"0x26":"<hex>"}|null,"adStructures":{"0xFF":["<hex>"],…}}).
          advertisingData is what bluetoothd kept raw (Device1.AdvertisingData, null when it
          exports none: before BlueZ 5.78 only with bluetoothd --experimental); adStructures
          holds every AD structure, re-encoded from BlueZ's properties where it decoded them.
            --service UUID      only devices advertising this service (repeatable)
            --name-prefix P     only devices whose name starts with P
            --duration S        scan S seconds, then exit 0 (default: until Ctrl-C)
          When bluetoothd restarts (or the adapter goes away) the scan is interrupted
          ({"event":"interrupted","reason":…}) and resumes ({"event":"scanning",…}) once the
          adapter is powered on again, within --duration; each device is reported again when the
          resumed scan hears it.
            --adapter all       scan on every powered adapter at once; each line names the adapter

          Passive mode: no scan requests, bluetoothd's advertisement monitor (bluetoothd --experimental
          on BlueZ 5.66) reports devices found and lost ({"event":"found"|"lost","adapter":…,"address":…}).
            --passive PATTERN   TYPE:HEX or TYPE:OFFSET:HEX, hex AD type and bytes (repeatable, any
                                matches): ff:ffff01 is manufacturer data of company 0xFFFF starting
                                with 01. A BlueZ advertiser's name is in its scan response, which a
                                passive scan never gets: match its manufacturer data or UUIDs instead.

          List mode: the adapters, a table or one JSON object per line ({"event":"adapter","name":…,
          "address":…,"alias":…,"powered":…,"discoverable":…,"pairable":…,"discovering":…,
          "roles":[…],"monitoring":…}).

          Accelerometer mode: find a TI SensorTag accelerometer (service F000AA10-…), connect,
          enable it, set its period and print its samples in g ({"event":"sample","x":…,"y":…,"z":…}).
          At the end, when notifications were dropped, their counts ({"event":"notificationCounts",
          "received":…,"delivered":…,"dropped":…,"droppedBy":{"subscriberBacklog":…},"held":…}).
            --samples N         exit 0 after N samples (default: run until Ctrl-C)
            --period-ms M       update period to ask for, 10…2550 ms (default 100)
            --start-notify      turn notifications on with StartNotify (each sample a D-Bus signal,
                                what bluez-record records) instead of an AcquireNotify socket

          Pair mode: find ADDRESS (known to bluetoothd, else by a scan), pair with it through this
          program's pairing agent (org.bluez.Agent1; registering needs permission to call org.bluez:
          root or the bluetooth group), print the bond state ({"event":"paired","address":…,
          "bonded":…}) and exit 0.
            --passkey N         the agent is KeyboardDisplay: answers passkey requests with N and
                                confirms only N (0…999999)
            --auto-confirm      the agent is DisplayYesNo and confirms every passkey it is shown
                                (without either: NoInputNoOutput, Just Works)

          Connect mode: connect ADDRESS without a scan (Adapter1.ConnectDevice when bluetoothd runs
          with --experimental, else a discovery that stops as soon as ADDRESS is heard), print its
          services and characteristics ({"event":"service","uuid":…} and {"event":"characteristic",
          "service":…,"uuid":…,"properties":[…]}), disconnect and exit 0; exit 1 when it cannot connect.
            --address-type T    public (default) or random
            --timeout S         give up after S seconds (default 30)

          L2CAP mode: find ADDRESS (known to bluetoothd, else a scan of up to --timeout S), open an
          L2CAP channel (LE credit-based; the kernel makes the link) to PSM N (an echo service:
          accelerometer-peripheral --l2cap prints its PSM), send B bytes (default 65536) in 32 kB
          windows, check they come back, print the throughput ({"event":"l2cap","psm":N,"bytes":B,
          "matched":true,"seconds":…,"bytesPerSecond":…,"mtu":…} with --json); exit 0 when every
          byte came back, 1 otherwise. With --simulate the simulated peripheral publishes the echo on N.

          Doctor mode: what stops Bluetooth from working here, and how to fix it — bluetoothd on the
          bus, the D-Bus policy (calls, agent, GATT application, advertisement), rfkill, the adapters
          (power, roles, advertising instances), experimental interfaces, main.conf, the BlueZ
          version. A table, or one JSON object per finding ({"event":"finding","check":…,
          "status":"ok"|"info"|"warning"|"problem","cause":…,"fix":…}). Exit 0 without a problem,
          1 with one, 2 when bluetoothd cannot be reached. With --simulate it examines the
          simulated bluetoothd (and skips this machine's files).

          All modes:
            --adapter hciN      the adapter to use (default: the first powered one; hci0 with --simulate)
            --json              JSON lines on stdout (progress events included)
            --simulate          run against an in-process simulated bluetoothd on a private bus, with
                                a simulated SensorTag (this program's peripheral role) on hci1

          Exit status: 0 done, 1 failed, 2 no bluetoothd / no usable adapter, 64 bad arguments.
        """

    var adapter: String?
    var services: [BLEUUID] = []
    var namePrefix: String?
    var duration: Duration?
    var json = false
    var simulate = false
    var accelerometer = false
    var samples: Int?
    var periodMs = 100
    var startNotify = false
    var allAdapters = false
    var passive: [MonitorPattern] = []
    var listAdapters = false
    var pair: String?
    var passkey: UInt32?
    var autoConfirm = false
    var doctor = false
    var connect: String?
    var addressType: PeripheralAddressType = .public
    var connectTimeout: Duration = .seconds(30)
    var l2cap: String?
    var psm: UInt16?
    var bytes = 65_536

    /// Options given that only scan mode / only accelerometer mode takes, in order (for ``validate()``).
    private var scanOnly: [String] = []
    private var accelerometerOnly: [String] = []
    private var pairOnly: [String] = []
    private var connectOnly: [String] = []
    private var l2capOnly: [String] = []

    /// Takes one option of `central-scanner` (``CommandOptions``).
    mutating func take(_ option: String, from args: inout Arguments) throws(UsageError) -> Bool {
        switch option {
        case "--adapter":
            if args.peek == "all" {
                _ = try args.value(for: option)
                allAdapters = true
                scanOnly.append("--adapter all")
            } else {
                adapter = try args.adapter(for: option)
            }
        case "--passive":
            let text = try args.value(for: option)
            guard let pattern = MonitorPattern(parsing: text) else { throw UsageError("--passive needs TYPE:HEX or TYPE:OFFSET:HEX, not \(text)") }
            passive.append(pattern)
            scanOnly.append(option)
        case "--list-adapters": listAdapters = true
        case "--doctor": doctor = true
        case "--service":
            let text = try args.value(for: option)
            guard let uuid = BLEUUID(string: text) else { throw UsageError("--service needs a UUID (180D or 128-bit), not \(text)") }
            services.append(uuid)
            scanOnly.append(option)
        case "--name-prefix": namePrefix = try args.value(for: option); scanOnly.append(option)
        case "--duration": duration = try args.seconds(for: option); scanOnly.append(option)
        case "--json": json = true
        case "--simulate": simulate = true
        case "--accelerometer": accelerometer = true
        case "--samples": samples = try args.integer(for: option, in: 1...1_000_000); accelerometerOnly.append(option)
        case "--period-ms": periodMs = try args.integer(for: option, in: 10...2550); accelerometerOnly.append(option)
        case "--start-notify": startNotify = true; accelerometerOnly.append(option)
        case "--pair": pair = try Self.address(args.value(for: option), for: option)
        case "--connect": connect = try Self.address(args.value(for: option), for: option)
        case "--l2cap": l2cap = try Self.address(args.value(for: option), for: option)
        case "--psm": psm = UInt16(try args.integer(for: option, in: 1...0xFFFF)); l2capOnly.append(option)
        case "--bytes": bytes = try args.integer(for: option, in: 0...100_000_000); l2capOnly.append(option)
        case "--address-type":
            let text = try args.value(for: option)
            guard let type = PeripheralAddressType(rawValue: text) else { throw UsageError("--address-type is public or random, not \(text)") }
            addressType = type
            connectOnly.append(option)
        case "--timeout": connectTimeout = try args.seconds(for: option); connectOnly.append(option)
        case "--passkey": passkey = UInt32(try args.integer(for: option, in: 0...999_999)); pairOnly.append(option)
        case "--auto-confirm": autoConfirm = true; pairOnly.append(option)
        default: return false
        }
        return true
    }

    /// The two modes' options do not mix.
    /// `text` as a Bluetooth address (six hex pairs separated by colons), upper case; the
    /// usage error names `option`.
    static func address(_ text: String, for option: String) throws(UsageError) -> String {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6, parts.allSatisfy({ $0.count == 2 && UInt8($0, radix: 16) != nil }) else {
            throw UsageError("\(option) needs a Bluetooth address (AA:BB:CC:DD:EE:FF), not \(text)")
        }
        return text.uppercased()
    }

    func validate() throws(UsageError) {
        if accelerometer, let first = scanOnly.first { throw UsageError("\(first) is for scan mode, not --accelerometer") }
        if !accelerometer, let first = accelerometerOnly.first { throw UsageError("\(first) needs --accelerometer") }
        if allAdapters, !passive.isEmpty { throw UsageError("--passive monitors one adapter, not --adapter all") }
        if listAdapters, accelerometer || pair != nil || !scanOnly.isEmpty { throw UsageError("--list-adapters takes only --json and --simulate") }
        if doctor, listAdapters || accelerometer || pair != nil || !scanOnly.isEmpty || !accelerometerOnly.isEmpty || adapter != nil {
            throw UsageError("--doctor takes only --json and --simulate")
        }
        if pair != nil, accelerometer { throw UsageError("--pair and --accelerometer do not mix") }
        if pair != nil, let first = scanOnly.first { throw UsageError("\(first) is for scan mode, not --pair") }
        if pair == nil, let first = pairOnly.first { throw UsageError("\(first) needs --pair") }
        if l2cap != nil {
            if connect != nil || accelerometer || pair != nil || listAdapters || doctor {
                throw UsageError("--l2cap is a mode of its own: no --connect, --accelerometer, --pair, --list-adapters or --doctor")
            }
            if psm == nil { throw UsageError("--l2cap needs --psm N (the PSM the peripheral published)") }
            if let first = scanOnly.first ?? accelerometerOnly.first ?? pairOnly.first { throw UsageError("\(first) is not for --l2cap") }
            return
        } else if let first = l2capOnly.first {
            throw UsageError("\(first) needs --l2cap")
        }
        if connect != nil {
            if accelerometer || pair != nil || listAdapters || doctor { throw UsageError("--connect is a mode of its own: no --accelerometer, --pair, --list-adapters or --doctor") }
            if let first = scanOnly.first ?? accelerometerOnly.first ?? pairOnly.first { throw UsageError("\(first) is not for --connect") }
        } else if let first = connectOnly.first {
            throw UsageError("\(first) needs --connect")
        }
        if passkey != nil, autoConfirm { throw UsageError("--passkey and --auto-confirm do not mix") }
    }
}
