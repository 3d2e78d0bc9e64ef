// BlueZSimulator+Monitors: RegisterMonitor reads the app's monitors over D-Bus; calls to the
// monitors (Activate, Release, DeviceFound, DeviceLost) go out from bluetoothd's connection.

import DBus

// MARK: - MonitorBridge

extension SimulatorBridge: MonitorBridge {
    func callMonitor(owner: String, path: String, member: String, device: String?) {
        guard let c = connection, let p = try? ObjectPath(path) else { return }
        let arguments: [DBusValue] = device.flatMap { try? ObjectPath($0) }.map { [.objectPath($0)] } ?? []
        c.call(destination: owner, path: p, interface: "org.bluez.AdvertisementMonitor1", member: member,
               arguments: arguments, timeout: Self.timeout) { _ in }
    }
}

// MARK: - Registration

extension BlueZSimulator {
    /// Reads the app's tree (GetManagedObjects on `root`), registers its monitors, replies, then
    /// activates them (bluetoothd answers once the app's objects are read, and activates each
    /// monitor once the kernel accepted it).
    func registerMonitor(adapter: Int, owner: String, root: ObjectPath, _ responder: Responder) {
        guard core.experimental else {
            let e = BlueZErrorReply.unknownMethod("org.bluez.AdvertisementMonitorManager1", "RegisterMonitor")
            return responder.fail(name: e.name, message: e.message)
        }
        connection.call(destination: owner, path: root, interface: "org.freedesktop.DBus.ObjectManager",
                        member: "GetManagedObjects", timeout: SimulatorBridge.timeout) { [weak self] result in
            guard let self else { return }
            self.queue.async {
                guard case .success(let m) = result else {
                    return responder.fail(name: "org.bluez.Error.Failed", message: "Adv Monitor app destroyed")
                }
                let (monitors, paths) = Self.parseMonitors(m.body.first, root: root)
                responder.succeed()
                do throws(BlueZErrorReply) {
                    try self.core.registerMonitor(adapter: adapter, owner: owner, root: root.rawValue, monitors: monitors, paths: paths)
                } catch {}
            }
        }
    }

    /// Every `org.bluez.AdvertisementMonitor1` object under `root`, validated (nil: released).
    static func parseMonitors(_ body: DBusValue?, root: ObjectPath) -> ([MonitorSpec?], [String]) {
        guard case .dict(_, _, let entries)? = body else { return ([], []) }
        var specs: [MonitorSpec?] = [], paths: [String] = []
        for e in entries.sorted(by: { "\($0.key)" < "\($1.key)" }) {
            guard case .objectPath(let p) = e.key, p.isDescendant(of: root, orSelf: true),
                  case .dict(_, _, let ifaces) = e.value.unwrapped,
                  let entry = ifaces.first(where: { $0.key == .string("org.bluez.AdvertisementMonitor1") }),
                  let props = optionsDictionary(entry.value) else { continue }
            func int16(_ k: String) -> Int16? { if case .int16(let v)? = props[k]?.unwrapped { v } else { nil } }
            func uint16(_ k: String) -> UInt16? { if case .uint16(let v)? = props[k]?.unwrapped { v } else { nil } }
            var patterns: [MonitorSpec.Pattern]?
            if case .array(_, let items)? = props["Patterns"]?.unwrapped {
                patterns = items.compactMap { item in
                    guard case .struct(let f) = item, f.count == 3, case .byte(let start) = f[0], case .byte(let type) = f[1],
                          let content = bytes(f[2]) else { return nil }
                    return MonitorSpec.Pattern(start: start, adType: type, content: content)
                }
            }
            let type: String? = if case .string(let t)? = props["Type"]?.unwrapped { t } else { nil }
            specs.append(MonitorSpec.parse(path: p.rawValue, type: type, patterns: patterns, lowThreshold: int16("RSSILowThreshold"),
                                           highThreshold: int16("RSSIHighThreshold"), lowTimeout: uint16("RSSILowTimeout"),
                                           highTimeout: uint16("RSSIHighTimeout")))
            paths.append(p.rawValue)
        }
        return (specs, paths)
    }
}
