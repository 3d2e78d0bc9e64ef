// SetRequest: a `…/set` payload, validated before anything reaches a device.

import BlueCapKit
import ExampleSupport
import Foundation

/// A write asked for on `<prefix>/<gateway>/<address>/<characteristic>/set`.
///
/// The payload comes from whoever may publish on the broker, so it is checked before anything
/// is written: at most ``maximumPayload`` bytes, a JSON object with exactly one of
/// `"hex"` (bytes, at most 512), `"value"` (an integer within the characteristic's type, or a
/// string for `utf8`) or `"fields"` (string fields of a built-in profile), and optionally
/// `"id"` (at most 64 characters, echoed in the result). Anything else is refused with a result
/// saying why, and nothing is written.
package struct SetRequest: Sendable {
    package static let maximumPayload = 2048
    package let bytes: Data
    package let id: String?

    /// Parses and checks `payload` for `characteristic`; the error is the text of the refusal.
    package static func parse(_ payload: Data, for characteristic: CharacteristicConfig) -> Result<SetRequest, SetRefusal> {
        guard payload.count <= maximumPayload else { return .failure(SetRefusal("payload larger than \(maximumPayload) bytes", id: nil)) }
        let parsed = (try? JSONSerialization.jsonObject(with: payload)) as? [String: Any]
        var id: String?
        if let raw = parsed?["id"] {
            guard let s = raw as? String, s.count <= 64 else { return .failure(SetRefusal("\"id\" must be a string of at most 64 characters", id: nil)) }
            id = s
        }
        guard characteristic.writable else {
            return .failure(SetRefusal("\(characteristic.name) is not writable (set \"writable\": true in the gateway's configuration)", id: id))
        }
        guard let object = parsed else {
            return .failure(SetRefusal("payload is not a JSON object (send {\"value\": 1} or {\"hex\": \"01\"})", id: nil))
        }
        let unknown = Set(object.keys).subtracting(["id", "hex", "value", "fields"])
        guard unknown.isEmpty else { return .failure(SetRefusal("unknown key \(unknown.sorted().joined(separator: ", ")) (known: hex, value, fields, id)", id: id)) }
        let given = ["hex", "value", "fields"].filter { object[$0] != nil }
        guard given.count == 1 else { return .failure(SetRefusal("give exactly one of \"hex\", \"value\", \"fields\"", id: id)) }
        let format = characteristic.format
        switch given[0] {
        case "hex":
            guard let text = object["hex"] as? String, text.count <= 1024, let data = SerDe.data(hexString: text) else {
                return .failure(SetRefusal("\"hex\" must be hex digits for at most 512 bytes", id: id))
            }
            return .success(SetRequest(bytes: data, id: id))
        case "value":
            if format == .utf8 {
                guard let s = object["value"] as? String, s.utf8.count <= 512 else { return .failure(SetRefusal("\"value\" must be a string of at most 512 bytes", id: id)) }
                return .success(SetRequest(bytes: Data(s.utf8), id: id))
            }
            guard let range = format.range else { return .failure(SetRefusal("\"value\" needs an integer or utf8 type; use \"hex\" or \"fields\" for \(format.rawValue)", id: id)) }
            guard let number = object["value"] as? NSNumber, !(object["value"] is Bool),
                  let int = Int(exactly: number.doubleValue), let data = format.bytes(integer: int) else {
                return .failure(SetRefusal("\"value\" must be a whole number from \(range.lowerBound) to \(range.upperBound) (\(format.rawValue))", id: id))
            }
            return .success(SetRequest(bytes: data, id: id))
        default:
            guard let fields = object["fields"] as? [String: Any], fields.count <= 16 else {
                return .failure(SetRefusal("\"fields\" must be an object of at most 16 fields", id: id))
            }
            var strings: [String: String] = [:]
            for (k, v) in fields {
                if let s = v as? String, s.count <= 64 { strings[k] = s } else if let n = v as? NSNumber, !(v is Bool) { strings[k] = n.stringValue } else {
                    return .failure(SetRefusal("field \"\(k)\" must be a string or a number", id: id))
                }
            }
            guard let data = format.bytes(fields: strings, uuid: characteristic.uuid, service: characteristic.service) else {
                return .failure(SetRefusal("the fields do not make a value of \(characteristic.name)'s profile", id: id))
            }
            return .success(SetRequest(bytes: data, id: id))
        }
    }
}
