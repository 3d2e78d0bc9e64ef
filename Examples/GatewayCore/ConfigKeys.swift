// ConfigKeys: the configuration file rejects keys it does not know (a typo would otherwise be
// ignored in silence).

import Foundation

/// A coding key for any name, to list the keys an object of the configuration has.
struct ConfigKeys: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }

    /// Throws when the object being decoded has a key outside `allowed`.
    static func check(_ decoder: any Decoder, allowed: Set<String>) throws {
        let container = try decoder.container(keyedBy: ConfigKeys.self)
        for key in container.allKeys where !allowed.contains(key.stringValue) {
            throw DecodingError.dataCorrupted(.init(
                codingPath: decoder.codingPath + [key],
                debugDescription: "unknown key \"\(key.stringValue)\" (known here: \(allowed.sorted().joined(separator: ", ")))"))
        }
    }

    /// Throws when `name` cannot be one level of an MQTT topic.
    static func checkTopicLevel(_ name: String, _ decoder: any Decoder, what: String) throws {
        guard !name.isEmpty, name.count <= 64, !name.contains(where: { "/+#".contains($0) || $0.isNewline || $0 == "\0" }) else {
            throw DecodingError.dataCorrupted(.init(
                codingPath: decoder.codingPath,
                debugDescription: "\(what) \"\(name)\" cannot be an MQTT topic level (1 to 64 characters, no '/', '+', '#')"))
        }
    }
}
