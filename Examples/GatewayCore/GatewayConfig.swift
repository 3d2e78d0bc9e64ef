// GatewayConfig: the configuration file (`--config FILE`), read with Foundation's JSONDecoder.

import BlueCapKit
import ExampleSupport
import Foundation

/// The whole configuration. Every key is optional but `devices` or `advertisements` should say
/// something to do; flags given on the command line override the file.
///
/// ```json
/// {
///   "broker": "localhost:1883", "prefix": "bluecap", "gateway": "greenhouse-1", "adapter": "hci0",
///   "username": "gateway", "passwordFile": "/etc/ble-gateway/password",
///   "queueCapacity": 1000, "connectionSlots": 5, "homeAssistant": true,
///   "devices": [{"address": "C0:FF:EE:00:00:01", "name": "kitchen tag", "characteristics": [
///       {"uuid": "F000AA11-0451-4000-B000-000000000000", "name": "accelerometer", "notify": true},
///       {"uuid": "F000AA13-0451-4000-B000-000000000000", "name": "period", "type": "uint8", "writable": true}]}],
///   "advertisements": [{"serviceData": "FCD2", "format": "bthome"}, {"manufacturerId": 89}]
/// }
/// ```
package struct GatewayConfig: Sendable, Decodable {
    package var broker: BrokerAddress?
    /// The first topic level (default `bluecap`).
    package var prefix: String = "bluecap"
    /// This gateway's topic level (default: the host name), unique per broker.
    package var gateway: String = GatewayConfig.hostName
    package var adapter: String?
    package var username: String?
    package var passwordFile: String?
    /// Readings kept while the broker is away (default 1000); the oldest is dropped past it.
    package var queueCapacity: Int = 1000
    /// The adapter's budget of LE connections (``ConnectionSlots/setBudget(_:for:)``).
    package var connectionSlots: Int?
    /// Home Assistant MQTT discovery (`homeassistant/…/config`, retained).
    package var homeAssistant: Bool = true
    package var devices: [DeviceConfig] = []
    package var advertisements: [AdvertisementPattern] = []

    private enum Keys: String, CodingKey, CaseIterable {
        case broker, prefix, gateway, adapter, username, passwordFile, queueCapacity, connectionSlots, homeAssistant, devices, advertisements
    }

    package init() {}

    package init(from decoder: any Decoder) throws {
        try ConfigKeys.check(decoder, allowed: Set(Keys.allCases.map(\.rawValue)))
        let c = try decoder.container(keyedBy: Keys.self)
        broker = try c.decodeIfPresent(BrokerAddress.self, forKey: .broker)
        if let p = try c.decodeIfPresent(String.self, forKey: .prefix) {
            try ConfigKeys.checkTopicLevel(p, decoder, what: "prefix")
            prefix = p
        }
        if let g = try c.decodeIfPresent(String.self, forKey: .gateway) {
            try ConfigKeys.checkTopicLevel(g, decoder, what: "gateway")
            gateway = g
        }
        adapter = try c.decodeIfPresent(String.self, forKey: .adapter)
        username = try c.decodeIfPresent(String.self, forKey: .username)
        passwordFile = try c.decodeIfPresent(String.self, forKey: .passwordFile)
        if let q = try c.decodeIfPresent(Int.self, forKey: .queueCapacity) {
            guard (1...1_000_000).contains(q) else {
                throw DecodingError.dataCorruptedError(forKey: .queueCapacity, in: c, debugDescription: "needs a number from 1 to 1000000, not \(q)")
            }
            queueCapacity = q
        }
        if let s = try c.decodeIfPresent(Int.self, forKey: .connectionSlots) {
            guard (1...64).contains(s) else {
                throw DecodingError.dataCorruptedError(forKey: .connectionSlots, in: c, debugDescription: "needs a number from 1 to 64, not \(s)")
            }
            connectionSlots = s
        }
        homeAssistant = try c.decodeIfPresent(Bool.self, forKey: .homeAssistant) ?? true
        devices = try c.decodeIfPresent([DeviceConfig].self, forKey: .devices) ?? []
        var seen = Set<String>()
        for d in devices where !seen.insert(d.address).inserted {
            throw DecodingError.dataCorruptedError(forKey: .devices, in: c, debugDescription: "\(d.address) is listed twice")
        }
        advertisements = try c.decodeIfPresent([AdvertisementPattern].self, forKey: .advertisements) ?? []
    }

    /// Reads `path`; the error names the file, where in it, what is wrong and how to fix it.
    package static func load(_ path: String) throws(UsageError) -> GatewayConfig {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw UsageError("cannot read the configuration \(path): \((error as NSError).localizedDescription) (check the path and that this user may read it)")
        }
        guard data.count <= 1 << 20 else { throw UsageError("the configuration \(path) is larger than 1 MiB; is it the right file?") }
        do { return try JSONDecoder().decode(GatewayConfig.self, from: data) } catch let error as DecodingError {
            throw UsageError("bad configuration \(path): \(describe(error)) (see ble-gateway --help and the README's gateway section for the format)")
        } catch {
            throw UsageError("bad configuration \(path): \(error)")
        }
    }

    /// `at devices[0].address: "x" is not a Bluetooth address`.
    static func describe(_ error: DecodingError) -> String {
        func path(_ keys: [any CodingKey]) -> String {
            let text = keys.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return text.hasPrefix(".") ? String(text.dropFirst()) : text
        }
        func underlying(_ c: DecodingError.Context) -> String {
            c.underlyingError.map { " (\(($0 as NSError).userInfo[NSDebugDescriptionErrorKey] ?? $0))" } ?? ""
        }
        switch error {
        case .dataCorrupted(let c) where c.codingPath.isEmpty:
            return "not valid JSON: \(c.debugDescription)\(underlying(c))"
        case .dataCorrupted(let c):
            return "at \(path(c.codingPath)): \(c.debugDescription)"
        case .keyNotFound(let key, let c):
            return "at \(path(c.codingPath + [key])): missing (it is required)"
        case .typeMismatch(let type, let c):
            return "at \(path(c.codingPath)): expected \(type == String.self ? "a string" : type == Bool.self ? "true or false" : "\(type)")"
        case .valueNotFound(_, let c):
            return "at \(path(c.codingPath)): null where a value is needed"
        @unknown default:
            return "\(error)"
        }
    }

    /// This machine's host name, as a topic level.
    package static var hostName: String {
        let name = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "gateway"
        let cleaned = String(name.map { "/+# ".contains($0) ? "-" : $0 }.prefix(64))
        return cleaned.isEmpty ? "gateway" : cleaned
    }
}
