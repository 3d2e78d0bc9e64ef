// D-Bus match rules (org.freedesktop.DBus.AddMatch).

/// A match rule: which messages the bus routes to this connection and which local handlers get them.
public struct MatchRule: Hashable, Sendable, CustomStringConvertible {
    /// The `type=` key.
    public enum MessageType: String, Sendable {
        case signal, methodCall = "method_call", methodReturn = "method_return", error
    }

    public var type: MessageType?
    /// A unique or well-known sender name.
    public var sender: String?
    public var interface: String?
    public var member: String?
    /// Exact object path.
    public var path: ObjectPath?
    /// The path or any path below it.
    public var pathNamespace: ObjectPath?
    /// The first argument, when it is a string.
    public var arg0: String?

    public init(
        type: MessageType? = .signal, sender: String? = nil, interface: String? = nil, member: String? = nil,
        path: ObjectPath? = nil, pathNamespace: ObjectPath? = nil, arg0: String? = nil
    ) {
        self.type = type
        self.sender = sender
        self.interface = interface
        self.member = member
        self.path = path
        self.pathNamespace = pathNamespace
        self.arg0 = arg0
    }

    /// The rule text passed to `AddMatch`, e.g. `type='signal',interface='org.bluez.Device1'`.
    public var text: String {
        var parts: [String] = []
        func add(_ key: String, _ value: String?) {
            guard let value else { return }
            parts.append("\(key)='\(value.replacingAll("'", with: "'\\''"))'")
        }
        add("type", type?.rawValue)
        add("sender", sender)
        add("interface", interface)
        add("member", member)
        add("path", path?.rawValue)
        add("path_namespace", pathNamespace?.rawValue)
        add("arg0", arg0)
        return parts.joined(separator: ",")
    }

    public var description: String { text }
}

extension String {
    fileprivate func replacingAll(_ target: Character, with replacement: String) -> String {
        var out = ""
        for c in self { if c == target { out += replacement } else { out.append(c) } }
        return out
    }
}
