// org.freedesktop.DBus.Introspectable data for exported objects.

enum Introspection {
    static let header = """
    <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
     "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">

    """

    static let standard = """
      <interface name="org.freedesktop.DBus.Introspectable">
        <method name="Introspect"><arg name="xml_data" type="s" direction="out"/></method>
      </interface>
      <interface name="org.freedesktop.DBus.Peer">
        <method name="Ping"/>
        <method name="GetMachineId"><arg name="machine_uuid" type="s" direction="out"/></method>
      </interface>
      <interface name="org.freedesktop.DBus.Properties">
        <method name="Get"><arg name="interface" type="s" direction="in"/><arg name="name" type="s" direction="in"/><arg name="value" type="v" direction="out"/></method>
        <method name="GetAll"><arg name="interface" type="s" direction="in"/><arg name="properties" type="a{sv}" direction="out"/></method>
        <method name="Set"><arg name="interface" type="s" direction="in"/><arg name="name" type="s" direction="in"/><arg name="value" type="v" direction="in"/></method>
        <signal name="PropertiesChanged"><arg name="interface" type="s"/><arg name="changed" type="a{sv}"/><arg name="invalidated" type="as"/></signal>
      </interface>

    """

    static let objectManager = """
      <interface name="org.freedesktop.DBus.ObjectManager">
        <method name="GetManagedObjects"><arg name="objects" type="a{oa{sa{sv}}}" direction="out"/></method>
        <signal name="InterfacesAdded"><arg name="object" type="o"/><arg name="interfaces" type="a{sa{sv}}"/></signal>
        <signal name="InterfacesRemoved"><arg name="object" type="o"/><arg name="interfaces" type="as"/></signal>
      </interface>

    """

    /// The XML for `path`, or nil when nothing is exported at or below it.
    static func xml(for path: String, in table: ExportTable) -> String? {
        let prefix = path == "/" ? "/" : path + "/"
        var children = Set<String>()
        for key in table.objects.keys where key.hasPrefix(prefix) && key != path {
            let rest = key.dropFirst(prefix.count)
            children.insert(String(rest.prefix { $0 != "/" }))
        }
        let object = table.objects[path]
        guard object != nil || !children.isEmpty || path == "/" else { return nil }
        var out = header + "<node>\n"
        if let object {
            out += standard
            if object.isObjectManager { out += objectManager }
            for name in object.order {
                guard let iface = object.interfaces[name]?.definition else { continue }
                out += "  <interface name=\"\(escape(name))\">\n"
                for m in iface.methods {
                    out += "    <method name=\"\(escape(m.name))\">"
                    for t in m.input.types { out += "<arg type=\"\(escape(t.signature))\" direction=\"in\"/>" }
                    for t in m.output.types { out += "<arg type=\"\(escape(t.signature))\" direction=\"out\"/>" }
                    out += "</method>\n"
                }
                for s in iface.signals {
                    out += "    <signal name=\"\(escape(s.name))\">"
                    for t in s.signature.types { out += "<arg type=\"\(escape(t.signature))\"/>" }
                    out += "</signal>\n"
                }
                for p in iface.properties {
                    let access = switch p.access { case .read: "read"; case .write: "write"; case .readWrite: "readwrite" }
                    out += "    <property name=\"\(escape(p.name))\" type=\"\(escape(p.type.signature))\" access=\"\(access)\"/>\n"
                }
                out += "  </interface>\n"
            }
        }
        for child in children.sorted() { out += "  <node name=\"\(escape(child))\"/>\n" }
        out += "</node>\n"
        return out
    }

    static func escape(_ s: String) -> String {
        var out = ""
        for c in s {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(c)
            }
        }
        return out
    }
}
