// HomeAssistantDiscovery: Home Assistant's MQTT discovery messages for the readings the gateway
// knows the shape of.

import BlueCapKit
import ExampleSupport
import Foundation

/// One `homeassistant/sensor/<id>/config` message (retained) per field of a reading whose type
/// is a built-in profile or an integer, naming its state topic, a value template, the
/// gateway's availability topic and the device (via the gateway).
package enum HomeAssistantDiscovery {
    package static let prefix = "homeassistant"

    /// Units and device classes of well-known characteristics and fields.
    private static func unit(_ uuid: BLEUUID, _ field: String?) -> (unit: String?, deviceClass: String?) {
        switch (uuid.shortString?.uppercased(), field) {
        case ("2A19", _): return ("%", "battery")
        case ("2A6E", _), ("2A1C", _): return ("°C", "temperature")
        case ("2A6F", _): return ("%", "humidity")
        case ("2A37", _): return ("bpm", nil)
        default: break
        }
        switch field {
        case "x", "y", "z": return ("g", nil)
        case "temperature": return ("°C", "temperature")
        case "humidity": return ("%", "humidity")
        default: return (nil, nil)
        }
    }

    /// The messages for `characteristic` of `device`, given its value's fields (nil: a scalar).
    package static func messages(topics: Topics, device: DeviceConfig, characteristic: CharacteristicConfig,
                                 fields: [String]?) -> [MQTTMessage] {
        let integer = characteristic.format.range != nil
        guard fields != nil || integer else { return [] }
        let deviceID = "bluecap_" + device.address.replacingOccurrences(of: ":", with: "").lowercased()
        let deviceJSON = JSON.object([
            ("identifiers", .array([.string(deviceID)])),
            ("connections", .array([.array([.string("bluetooth"), .string(device.address.lowercased())])])),
            ("name", .string(device.name ?? device.address)),
            ("via_device", .string("bluecap_gateway_" + sanitized(topics.gateway))),
        ])
        // Raw register values (`xRaw`) stay out of Home Assistant: the scaled field is the reading.
        let shown = fields.map { $0.filter { !$0.hasSuffix("Raw") }.map(Optional.some) } ?? [nil]
        return shown.map { field in
            let id = sanitized("\(topics.gateway)_\(deviceID)_\(characteristic.name)" + (field.map { "_\($0)" } ?? ""))
            let (unit, deviceClass) = unit(characteristic.uuid, field)
            var pairs: [(String, JSON)] = [
                ("name", .string(characteristic.name + (field.map { " \($0)" } ?? ""))),
                ("unique_id", .string(id)),
                ("state_topic", .string(topics.reading(device.address, characteristic.name))),
                ("value_template", .string("{{ value_json.value" + (field.map { "['\($0)']" } ?? "") + " }}")),
                ("availability_topic", .string(topics.status)),
                ("payload_available", .string("online")), ("payload_not_available", .string("offline")),
                ("state_class", .string("measurement")),
                ("device", deviceJSON),
            ]
            if let unit { pairs.append(("unit_of_measurement", .string(unit))) }
            if let deviceClass { pairs.append(("device_class", .string(deviceClass))) }
            return MQTTMessage(topic: "\(prefix)/sensor/\(id)/config", text: JSON.object(pairs).text, qos: 1, retain: true)
        }
    }

    /// Letters, digits, `_` and `-` only (what discovery ids allow).
    static func sanitized(_ text: String) -> String {
        String(text.map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") ? $0 : "_" })
    }
}
