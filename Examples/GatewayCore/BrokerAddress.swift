// BrokerAddress: `--broker HOST:PORT`.

import ExampleSupport
import Foundation

/// Where the broker listens: a host name or address and a TCP port (1883 when not given).
package struct BrokerAddress: Sendable, Equatable, CustomStringConvertible, Decodable {
    package var host: String
    package var port: Int

    package static let standardPort = 1883
    package static let localhost = BrokerAddress(host: "localhost", port: standardPort)

    package init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST`, `HOST:PORT` or `[IPv6]:PORT`.
    package init(parsing text: String) throws(UsageError) {
        var host = text
        var port = Self.standardPort
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            if rest.hasPrefix(":") { port = try Self.port(String(rest.dropFirst()), text) }
        } else if let colon = text.lastIndex(of: ":"), text.firstIndex(of: ":") == colon {
            host = String(text[..<colon])
            port = try Self.port(String(text[text.index(after: colon)...]), text)
        }
        guard !host.isEmpty, host.allSatisfy({ !$0.isWhitespace && $0 != "/" }) else {
            throw UsageError("--broker needs HOST:PORT (like localhost:1883), not \(text)")
        }
        self.init(host: host, port: port)
    }

    private static func port(_ text: String, _ whole: String) throws(UsageError) -> Int {
        guard let p = Int(text), (1...65535).contains(p) else {
            throw UsageError("--broker \(whole): the port must be a number from 1 to 65535")
        }
        return p
    }

    package init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        do { try self.init(parsing: text) } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }

    package var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
