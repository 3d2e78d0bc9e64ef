// StringDeserializable: a value shown and entered as named strings.

import Foundation

/// A value that can be shown as, and parsed from, a map of named strings, for UIs and
/// command lines (for example `["x": "0.5", "y": "-0.25", "z": "1.0"]`).
///
/// Enum-like types list their case names in ``stringValues``; record-like types leave it empty
/// and use one key per field.
public protocol StringDeserializable: Sendable {
    /// The accepted string values for enum-like types, empty otherwise.
    static var stringValues: [String] { get }
    /// The value as named strings.
    var stringValue: [String: String] { get }
    /// Parses the value from named strings; nil when a key is missing or a string does not parse.
    init?(stringValue: [String: String])
}

extension StringDeserializable {
    /// No enumerated values by default.
    public static var stringValues: [String] { [] }
}
