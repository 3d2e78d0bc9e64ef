// Describing interfaces to export: methods, properties, signals.

/// An interface implemented by an exported object.
public struct DBusInterface: Sendable {
    public var name: String
    public var methods: [DBusMethod]
    public var properties: [DBusProperty]
    /// Signals, listed in introspection data.
    public var signals: [DBusSignalInfo]

    public init(name: String, methods: [DBusMethod] = [], properties: [DBusProperty] = [], signals: [DBusSignalInfo] = []) {
        self.name = name
        self.methods = methods
        self.properties = properties
        self.signals = signals
    }
}

/// A method of an exported interface. The handler answers through its `Responder`, when it
/// decides; calls whose arguments do not match `input` are refused with `InvalidArgs`.
public struct DBusMethod: Sendable {
    public var name: String
    public var input: DBusSignature
    public var output: DBusSignature
    public var handler: @Sendable (MethodCall, Responder) -> Void

    public init(_ name: String, input: DBusSignature = .empty, output: DBusSignature = .empty,
                handler: @escaping @Sendable (MethodCall, Responder) -> Void) {
        self.name = name
        self.input = input
        self.output = output
        self.handler = handler
    }
}

/// A property of an exported interface, served by `org.freedesktop.DBus.Properties`.
public struct DBusProperty: Sendable {
    /// Who may read and write the property.
    public enum Access: Sendable { case read, write, readWrite }

    public var name: String
    public var type: DBusType
    public var access: Access
    /// The initial value (must have `type`).
    public var value: DBusValue
    /// Emit `PropertiesChanged` when the value changes.
    public var emitsChanged: Bool
    /// Called (on the owner thread) for `Properties.Set` before the value is stored; throw a
    /// `DBusRemoteError` to refuse. Nil means writes are stored as they come.
    public var setter: (@Sendable (DBusValue, MethodCall) throws(DBusRemoteError) -> Void)?

    public init(_ name: String, type: DBusType, access: Access = .read, value: DBusValue, emitsChanged: Bool = true,
                setter: (@Sendable (DBusValue, MethodCall) throws(DBusRemoteError) -> Void)? = nil) {
        self.name = name
        self.type = type
        self.access = access
        self.value = value
        self.emitsChanged = emitsChanged
        self.setter = setter
    }

    var readable: Bool { access != .write }
    var writable: Bool { access != .read }
}

/// A signal of an exported interface (for introspection).
public struct DBusSignalInfo: Sendable {
    public var name: String
    public var signature: DBusSignature
    public init(_ name: String, signature: DBusSignature = .empty) {
        self.name = name
        self.signature = signature
    }
}

/// Why an export was refused.
public struct DBusExportError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

// MARK: - Export table (internal)

struct InterfaceState: Sendable {
    let definition: DBusInterface
    let methods: [String: DBusMethod]
    let properties: [String: DBusProperty]
    var values: [String: DBusValue]

    init(_ d: DBusInterface) {
        definition = d
        methods = Dictionary(d.methods.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        properties = Dictionary(d.properties.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        values = Dictionary(d.properties.map { ($0.name, $0.value) }, uniquingKeysWith: { a, _ in a })
    }

    func readableValues() -> [String: DBusValue] {
        values.filter { properties[$0.key]?.readable ?? false }
    }
}

struct ExportedObjectState: Sendable {
    var interfaces: [String: InterfaceState] = [:]
    var order: [String] = []
    var allowedCaller: String?
    var isObjectManager = false
    let token: Int

    func managedInterfaces() -> DBusValue {
        .dict(key: .string, value: .dict(key: .string, value: .variant),
              order.compactMap { name in interfaces[name].map { .init(.string(name), .properties($0.readableValues())) } })
    }
}

struct ExportTable: Sendable {
    var objects: [String: ExportedObjectState] = [:]
    var nextToken = 1

    /// The nearest object manager at or above `path`'s parent.
    func manager(for path: String) -> String? {
        var p = path
        while p != "/" {
            if let slash = p.lastIndex(of: "/") {
                p = slash == p.startIndex ? "/" : String(p[..<slash])
            }
            if objects[p]?.isObjectManager == true { return p }
        }
        return nil
    }
}
