// Incoming method calls for exported objects, and the built-in standard interfaces.

private let propertiesInterface = "org.freedesktop.DBus.Properties"
private let objectManagerInterface = "org.freedesktop.DBus.ObjectManager"
private let introspectableInterface = "org.freedesktop.DBus.Introspectable"

extension ConnectionCore {
    /// Answers one method call (owner thread). User handlers run without a lock held.
    func dispatchMethodCall(_ raw: RawMessage) {
        let origin = CallOrigin(serial: LibDBus.serial(raw), sender: LibDBus.sender(raw))
        let noReply = LibDBus.noReply(raw)
        let path = LibDBus.path(raw) ?? "/"
        let interface = LibDBus.interface(raw)
        let member = LibDBus.member(raw) ?? ""
        let signature = LibDBus.signature(raw)

        func fail(_ name: String, _ text: String) {
            guard !noReply, let m = MessageBuilder.error(to: origin, name: name, message: text) else { return }
            _ = ownerSend(m)
        }
        func succeed(_ values: [DBusValue]) {
            guard !noReply else { return }
            do { _ = ownerSend(try MessageBuilder.methodReturn(to: origin, values: values)) } catch {
                fail(DBusRemoteError.failed, "\(error)")
            }
        }

        if interface == introspectableInterface || (interface == nil && member == "Introspect") {
            guard member == "Introspect" else { return fail(DBusRemoteError.unknownMethod, "no method \(member) on \(introspectableInterface)") }
            let xml = exports.withLock { Introspection.xml(for: path, in: $0) }
            guard let xml else { return fail(DBusRemoteError.unknownObject, "no object at \(path)") }
            return succeed([.string(xml)])
        }

        guard let object = exports.withLock({ $0.objects[path] }) else {
            return fail(DBusRemoteError.unknownObject, "no object at \(path)")
        }
        if let allowed = object.allowedCaller, allowed != origin.sender {
            return fail(DBusRemoteError.accessDenied, "\(origin.sender ?? "caller") may not call \(path)")
        }
        switch interface {
        case propertiesInterface:
            return handleProperties(raw, path: path, member: member, signature: signature, origin: origin,
                                    fail: fail, succeed: succeed)
        case objectManagerInterface where object.isObjectManager:
            guard member == "GetManagedObjects" else { return fail(DBusRemoteError.unknownMethod, "no method \(member) on \(objectManagerInterface)") }
            let objects = exports.withLock { table in
                table.objects.filter { $0.key != path && ObjectPath(unchecked: $0.key).isDescendant(of: ObjectPath(unchecked: path)) && !$0.value.order.isEmpty }
                    .sorted { $0.key < $1.key }
                    .map { DBusValue.DictEntry(.objectPath(ObjectPath(unchecked: $0.key)), $0.value.managedInterfaces()) }
            }
            return succeed([.dict(key: .objectPath, value: .dict(key: .string, value: .dict(key: .string, value: .variant)), objects)])
        default:
            break
        }

        let method: DBusMethod
        if let interface {
            guard let iface = object.interfaces[interface] else {
                return fail(DBusRemoteError.unknownInterface, "\(path) has no interface \(interface)")
            }
            guard let m = iface.methods[member] else {
                return fail(DBusRemoteError.unknownMethod, "no method \(member) on \(interface)")
            }
            method = m
        } else {
            guard let m = object.order.lazy.compactMap({ object.interfaces[$0]?.methods[member] }).first else {
                return fail(DBusRemoteError.unknownMethod, "no method \(member) on \(path)")
            }
            method = m
        }
        guard signature == method.input.rawValue else {
            return fail(DBusRemoteError.invalidArgs, "\(member) takes (\(method.input)), got (\(signature))")
        }
        let call = Message(raw: raw)
        let responder = Responder(core: self, origin: origin, noReply: noReply, output: method.output,
                                  label: "\(interface ?? "").\(member) at \(path)")
        method.handler(call, responder)
    }

    private func handleProperties(
        _ raw: RawMessage, path: String, member: String, signature: String, origin: CallOrigin,
        fail: (String, String) -> Void, succeed: ([DBusValue]) -> Void
    ) {
        let call = Message(raw: raw)
        func interfaceState(_ name: String) -> InterfaceState? {
            exports.withLock { $0.objects[path]?.interfaces[name] }
        }
        switch (member, signature) {
        case ("Get", "ss"):
            guard case .string(let iname) = call.body[0], case .string(let pname) = call.body[1] else { return }
            guard let iface = interfaceState(iname) else { return fail(DBusRemoteError.unknownInterface, "\(path) has no interface \(iname)") }
            guard let p = iface.properties[pname], let value = iface.values[pname] else {
                return fail(DBusRemoteError.unknownProperty, "\(iname) has no property \(pname)")
            }
            guard p.readable else { return fail(DBusRemoteError.accessDenied, "\(iname).\(pname) is write-only") }
            succeed([.variant(value)])
        case ("GetAll", "s"):
            guard case .string(let iname) = call.body[0] else { return }
            guard let iface = interfaceState(iname) else { return fail(DBusRemoteError.unknownInterface, "\(path) has no interface \(iname)") }
            succeed([.properties(iface.readableValues())])
        case ("Set", "ssv"):
            guard case .string(let iname) = call.body[0], case .string(let pname) = call.body[1],
                  case .variant(let value) = call.body[2] else { return }
            guard let iface = interfaceState(iname) else { return fail(DBusRemoteError.unknownInterface, "\(path) has no interface \(iname)") }
            guard let p = iface.properties[pname] else { return fail(DBusRemoteError.unknownProperty, "\(iname) has no property \(pname)") }
            guard p.writable else { return fail(DBusRemoteError.propertyReadOnly, "\(iname).\(pname) is read-only") }
            guard value.matches(p.type) else {
                return fail(DBusRemoteError.invalidArgs, "\(iname).\(pname) has type \(p.type), got \(value.signature)")
            }
            if let setter = p.setter {
                do throws(DBusRemoteError) { try setter(value, call) } catch { return fail(error.name, error.message) }
            }
            let stored = exports.withLock { table -> Bool in
                guard table.objects[path]?.interfaces[iname] != nil else { return false }
                table.objects[path]!.interfaces[iname]!.values[pname] = value
                return true
            }
            succeed([])
            if stored, p.emitsChanged {
                try? Connection.emitPropertiesChanged(self, path: ObjectPath(unchecked: path), interface: iname, changed: [pname: value])
            }
        case ("Get", _), ("GetAll", _), ("Set", _):
            fail(DBusRemoteError.invalidArgs, "\(propertiesInterface).\(member) got arguments (\(signature))")
        default:
            fail(DBusRemoteError.unknownMethod, "no method \(member) on \(propertiesInterface)")
        }
    }
}
