// ScanView: what the scanner shows — a live table on a terminal, plain lines otherwise,
// JSON lines with --json.

import BlueCapKit
import Dispatch
import Foundation
import ExampleSupport

/// One row of the scan: the latest advertising data of a device.
struct ScanRow: Sendable {
    var address: String
    var name: String?
    var rssi: Int16?
    var uuids: [BLEUUID]
    var manufacturerData: [UInt16: Data]
    var lastSeen: ContinuousClock.Instant
    /// The whole advertisement (service data, raw AD structures, flags, address type, …).
    var advertisement = Advertisement()

    /// What identifies the advertisement apart from RSSI (a change is reported again).
    var identity: String {
        "\(name ?? "")|\(uuids.map(\.uuidString).sorted())|\(manufacturerData.keys.sorted().map { "\($0)=\(hex(manufacturerData[$0]!))" })"
            + "|\(adStructuresJSON.text)|\(advertisement.addressType?.rawValue ?? "")"
    }

    /// `{"0x16":["d2fc…"],…}`: every AD structure by type (``Advertisement/adStructures``).
    private var adStructuresJSON: JSON {
        .object(advertisement.adStructures.keys.sorted().map { type in
            (typeKey(type), .array(advertisement.adStructures[type]!.map { .string(hex($0)) }))
        })
    }

    private func typeKey(_ type: UInt8) -> String { String(format: "0x%02X", type) }

    var json: JSON {
        let ad = advertisement
        let serviceData: JSON = .object(ad.serviceData.keys.sorted().map { ($0.uuidString, .string(hex(ad.serviceData[$0]!))) })
        let txPower: JSON = ad.txPower.map { .integer(Int($0)) } ?? .null
        let appearance: JSON = ad.appearance.map { .integer(Int($0)) } ?? .null
        var flags: JSON = .null, flagNames: JSON = .null
        if let f = ad.flags {
            flags = .integer(Int(f.rawValue))
            flagNames = .array(Self.flagNames.filter { f.contains($0.0) }.map { .string($0.1) })
        }
        var raw: JSON = .null
        if let data = ad.advertisingData {
            raw = .object(data.keys.sorted().map { (typeKey($0), .string(hex(data[$0]!))) })
        }
        var pairs: [(String, JSON)] = [
            ("event", .string("discovered")),
            ("address", .string(address)),
            ("name", .optional(name)),
            ("rssi", rssi.map { .integer(Int($0)) } ?? .null),
            ("uuids", .array(uuids.map { .string($0.uuidString) })),
            ("manufacturerData", .object(manufacturerData.keys.sorted().map { (String($0), .string(hex(manufacturerData[$0]!))) })),
        ]
        pairs += [("serviceData", serviceData), ("txPower", txPower), ("appearance", appearance),
                  ("addressType", .optional(ad.addressType?.rawValue)), ("flags", flags), ("flagNames", flagNames),
                  ("advertisingData", raw), ("adStructures", adStructuresJSON)]
        return .object(pairs)
    }

    private static let flagNames: [(AdvertisingFlags, String)] = [
        (.leLimitedDiscoverable, "leLimitedDiscoverable"), (.leGeneralDiscoverable, "leGeneralDiscoverable"),
        (.brEdrNotSupported, "brEdrNotSupported"), (.simultaneousLEAndBrEdrController, "simultaneousLEAndBrEdrController"),
        (.simultaneousLEAndBrEdrHost, "simultaneousLEAndBrEdrHost"),
    ]

    var line: String {
        "discovered \(address) \(name.map { "\"\($0)\"" } ?? "(no name)") RSSI \(rssi.map(String.init) ?? "?")"
            + (uuids.isEmpty ? "" : " uuids " + uuids.map(\.description).joined(separator: ","))
            + (manufacturerData.isEmpty ? "" : " mfr " + manufacturerData.keys.sorted().map { String(format: "0x%04X", $0) }.joined(separator: ","))
    }
}

/// Keeps the rows and renders them. On a terminal the table is redrawn at most 4 times a second
/// (on `queue`); elsewhere each new or changed device is printed once.
///
/// `@unchecked Sendable`: `rows`, `order`, `reported`, `dirty` and `timer` are only used on `queue`.
final class ScanView: @unchecked Sendable {
    let console: Console
    let live: Bool
    private let queue = DispatchQueue(label: "central-scanner.view")
    private var rows: [String: ScanRow] = [:]
    private var order: [String] = []
    private var reported: [String: String] = [:]
    private var dirty = false
    private var timer: (any DispatchSourceTimer)?
    private let started = ContinuousClock.now

    init(console: Console) {
        self.console = console
        live = console.stdoutIsTTY && !console.json
    }

    /// Starts the redraw timer (terminal only).
    func start() {
        guard live else { return }
        console.raw("\u{1B}[?25l\u{1B}[H\u{1B}[2J")
        let t = DispatchSource.makeTimerSource(queue: queue)
        t.schedule(deadline: .now(), repeating: .milliseconds(250))
        t.setEventHandler { [weak self] in self?.redraw(force: false) }
        t.resume()
        queue.sync { timer = t }
    }

    /// A device was heard.
    func update(_ row: ScanRow) {
        queue.async { [self] in
            if rows[row.address] == nil { order.append(row.address) }
            rows[row.address] = row
            dirty = true
            guard !live, reported[row.address] != row.identity else { return }
            reported[row.address] = row.identity
            if console.json {
                console.raw(row.json.text + "\n")
            } else {
                console.raw(row.line + "\n")
            }
        }
    }

    /// After an interrupted scan: each device is reported again when the resumed scan hears it.
    func forgetReported() {
        queue.async { [self] in reported.removeAll() }
    }

    /// Draws a last time and shows the cursor again; returns the number of devices seen.
    func finish() -> Int {
        queue.sync {
            timer?.cancel()
            timer = nil
            if live {
                redraw(force: true)
                console.raw("\u{1B}[?25h")
            }
            return rows.count
        }
    }

    // MARK: Table

    private func redraw(force: Bool) {
        guard force || dirty || !rows.isEmpty else { return }
        dirty = false
        let now = ContinuousClock.now
        let elapsed = Double((now - started).components.seconds)
        var out = "\u{1B}[H"
        out += line("central-scanner — \(rows.count) device\(rows.count == 1 ? "" : "s") — \(Int(elapsed)) s — Ctrl-C to stop")
        out += line("")
        out += line(pad("ADDRESS", 17) + "  " + pad("NAME", 20) + "  " + pad("RSSI", 11) + "  " + pad("UUIDS", 30) + "  " + pad("MFR", 6) + "  LAST SEEN")
        for address in order {
            guard let r = rows[address] else { continue }
            let ago = Double((now - r.lastSeen).components.attoseconds) / 1e18 + Double((now - r.lastSeen).components.seconds)
            let rssi = r.rssi.map { pad(String($0), 4) + " " + bar($0) } ?? pad("?", 11)
            let uuids = r.uuids.map(\.description).joined(separator: ",")
            let mfr = r.manufacturerData.keys.sorted().map { String(format: "%04X", $0) }.joined(separator: ",")
            out += line(pad(r.address, 17) + "  " + pad(r.name ?? "—", 20) + "  " + pad(rssi, 11) + "  " + pad(uuids, 30)
                        + "  " + pad(mfr.isEmpty ? "—" : mfr, 6) + "  " + String(format: "%.1f s ago", ago))
        }
        out += "\u{1B}[J"
        console.raw(out)
    }

    private func line(_ s: String) -> String { s + "\u{1B}[K\n" }

    private func pad(_ s: String, _ width: Int) -> String {
        let c = s.count
        if c > width { return String(s.prefix(width - 1)) + "…" }
        return s + String(repeating: " ", count: width - c)
    }

    /// Five cells, full at −40 dBm and above, empty at −100 dBm and below.
    private func bar(_ rssi: Int16) -> String {
        let level = max(0, min(5, (Int(rssi) + 100 + 6) / 12))
        return String(repeating: "█", count: level) + String(repeating: "·", count: 5 - level)
    }
}
