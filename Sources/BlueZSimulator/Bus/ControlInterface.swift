// ControlInterface: org.bluecap.Simulator1 at /org/bluecap/simulator, so tests in any language
// can add peripherals and inject every fault over D-Bus.

import DBus
import Foundation

// MARK: - org.bluecap.Simulator1

extension BlueZSimulator {
    func controlInterface() -> DBusInterface {
        func method(_ name: String, _ input: DBusSignature, _ output: DBusSignature = .empty,
                    _ body: @escaping @Sendable (BlueZSimulator, MethodCall) throws -> [DBusValue]) -> DBusMethod {
            DBusMethod(name, input: input, output: output) { [weak self] call, responder in
                guard let self else { return }
                self.queue.async {
                    do { responder.succeed(try body(self, call)) } catch let e as BlueZErrorReply {
                        responder.fail(name: e.name, message: e.message)
                    } catch {
                        responder.fail(name: "org.bluez.Error.InvalidArguments", message: "\(error)")
                    }
                }
            }
        }
        return DBusInterface(name: Self.controlInterface, methods: [
            // AddPeripheral(s json): one scenario peripheral entry (adapters in the entry).
            method("AddPeripheral", "s") { sim, c in
                let entry = try JSONDecoder().decode(Scenario.PeripheralEntry.self, from: Data(try arg(c, 0, String.self).utf8))
                sim.core.addPeripheral(try entry.peripheral, inRangeOf: entry.adapters.map(Set.init))
                return []
            },
            method("RemovePeripheral", "s") { sim, c in sim.core.removePeripheral(try arg(c, 0, String.self).uppercased()); return [] },
            method("SetRSSI", "sn") { sim, c in
                let rssi = try arg(c, 1, Int16.self)
                sim.core.updatePeripheral(try arg(c, 0, String.self).uppercased()) { $0.rssi = rssi }
                return []
            },
            method("SetInRange", "sai") { sim, c in
                sim.core.setRange(try arg(c, 0, String.self).uppercased(), adapters: Set(try arg(c, 1, [Int32].self).map(Int.init)))
                return []
            },
            method("Notify", "ssay", "u") { sim, c in
                [.uint32(UInt32(sim.core.notify(peripheral: try arg(c, 0, String.self).uppercased(),
                                                characteristic: try arg(c, 1, String.self), value: try arg(c, 2, Data.self))))]
            },
            method("Burst", "ssu", "ud") { sim, c in
                let r = sim.burst(peripheral: try arg(c, 0, String.self), characteristic: try arg(c, 1, String.self),
                                  count: Int(try arg(c, 2, UInt32.self)))
                return [.uint32(UInt32(r.delivered)), .double(Double(r.duration.nanoseconds) / 1e9)]
            },
            // InjectFault(s member, s path ("" any), s action "delay"|"error"|"noreply", s errorName,
            //             s errorMessage, u delayMs, i count (<0: every call)).
            method("InjectFault", "sssssui", "") { sim, c in
                let action: MethodFault.Action
                switch try arg(c, 2, String.self) {
                case "delay": action = .delay(.milliseconds(Int(try arg(c, 5, UInt32.self))))
                case "error": action = .error(BlueZErrorReply(name: try arg(c, 3, String.self), message: try arg(c, 4, String.self)))
                case "noreply": action = .noReply
                default: throw BlueZErrorReply.invalidArguments("action must be delay, error or noreply")
                }
                let path = try arg(c, 1, String.self)
                let count = try arg(c, 6, Int32.self)
                sim.faults.add(MethodFault(try arg(c, 0, String.self), path: path.isEmpty ? nil : path, action: action,
                                           count: count < 0 ? nil : Int(count)))
                return []
            },
            method("ClearFaults", "") { sim, _ in sim.faults.clear(); return [] },
            method("DropLink", "o") { sim, c in sim.core.dropLink(device: try arg(c, 0, ObjectPath.self).rawValue); return [] },
            method("SetPowered", "ub") { sim, c in sim.core.setPowered(Int(try arg(c, 0, UInt32.self)), try arg(c, 1, Bool.self)); return [] },
            method("RemoveAdapter", "u") { sim, c in sim.core.removeAdapter(Int(try arg(c, 0, UInt32.self))); return [] },
            method("AddAdapter", "", "u") { sim, _ in [.uint32(UInt32(sim.core.addAdapter()))] },
            method("SetServicesResolvedEarly", "u") { sim, c in
                let ms = try arg(c, 0, UInt32.self)
                sim.core.servicesResolvedEarly = ms == 0 ? nil : .milliseconds(Int(ms))
                return []
            },
            method("StartRSSIStorm", "ud") { sim, c in
                sim.core.startRSSIStorm(devices: Int(try arg(c, 0, UInt32.self)), hz: try arg(c, 1, Double.self))
                return []
            },
            method("StopRSSIStorm", "") { sim, _ in sim.core.stopRSSIStorm(); return [] },
            // StartNotifyPace(as addresses, s uuid, d hz, u count) -> u devices found: each device
            // notifies `count` values at `hz`, spread evenly; NotifyPaceStatus() -> (sent, delivered, running).
            method("StartNotifyPace", "assdu", "u") { sim, c in
                let addresses = try arg(c, 0, [String].self).map { $0.uppercased() }
                let found = sim.core.startNotifyPace(peripherals: addresses, characteristic: try arg(c, 1, String.self),
                                                     hz: try arg(c, 2, Double.self), count: Int(try arg(c, 3, UInt32.self)))
                return [.uint32(UInt32(found))]
            },
            method("StopNotifyPace", "") { sim, _ in sim.core.stopNotifyPace(); return [] },
            method("NotifyPaceStatus", "", "uub") { sim, _ in
                let s = sim.core.notifyPaceStatus
                return [.uint32(UInt32(s.sent)), .uint32(UInt32(s.delivered)), .bool(s.running)]
            },
            // Restart(): replies, then releases org.bluez and retakes it from a new connection.
            method("Restart", "") { sim, _ in
                Task { try? await sim.restart() }
                return []
            },
        ])
    }
}

/// Argument `i` of a control call as `T`.
private func arg<T: DBusDecodable>(_ c: MethodCall, _ i: Int, _ t: T.Type = T.self) throws -> T { try c.body.decode(T.self, at: i) }
