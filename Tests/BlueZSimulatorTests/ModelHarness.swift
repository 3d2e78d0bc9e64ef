// ModelHarness: a SimulatorCore on a manual clock, recording every event it emits.

import Dispatch
import Foundation
import Synchronization
@testable import BlueZSimulator

/// A bus-free simulator: the test thread is its executor, time moves only with `advance`.
final class ModelHarness {
    let clock = ManualClock()
    let core: SimulatorCore
    private(set) var events: [ObjectEvent] = []

    init(adapters: Int = 1) {
        core = SimulatorCore(clock: clock, queue: DispatchQueue(label: "model-harness"))
        core.setSink { [unowned self] in self.events.append($0) }
        core.start(adapters: adapters)
        events.removeAll()
    }

    func advance(_ ms: Int) { clock.advance(by: .milliseconds(ms)) }

    /// Returns the events so far and forgets them.
    func take() -> [ObjectEvent] {
        defer { events.removeAll() }
        return events
    }

    /// Runs an asynchronous core call and returns its result once the clock has run `ms`.
    func await<T>(_ ms: Int = 100, _ call: (@escaping (Result<T, BlueZErrorReply>) -> Void) -> Void) -> Result<T, BlueZErrorReply>? {
        var result: Result<T, BlueZErrorReply>?
        call { result = $0 }
        if result == nil { advance(ms) }
        return result
    }

    /// Connects and runs the clock until services are resolved.
    func connect(_ path: String) throws {
        let r = self.await { core.connect(device: path, $0) }
        try r?.get()
        advance(100)
    }
}

let hci0 = BlueZPath.adapter(0)
let hci1 = BlueZPath.adapter(1)

/// A small heart-rate-like peripheral used across tests.
func testPeripheral(_ address: String = "C0:FF:EE:00:00:01", rssi: Int16 = -50) -> SimulatedPeripheral {
    SimulatedPeripheral.spec(address: address)
        .name("Pulse").rssi(rssi).txPower(4)
        .advertising(uuids: ["180D"])
        .manufacturerData(id: 0x004C, data: Data([0x01, 0x02]))
        .serviceData(uuid: "180D", data: Data([0x09]))
        .service("180D") {
            $0.characteristic("2A37", flags: [.notify], value: Data([0, 60]))
            $0.characteristic("2A38", flags: [.read], value: Data([1])) {
                $0.descriptor("2901", value: Data("Location".utf8))
            }
            $0.characteristic("2A39", flags: [.write, .writeWithoutResponse], value: Data())
        }
}

func devicePath(_ adapter: Int, _ address: String) -> String { BlueZPath.device(adapter: adapter, address: address) }

extension Array where Element == ObjectEvent {
    /// The Device1 properties changed on `path`, in order.
    func changes(_ path: String, _ interface: String = "org.bluez.Device1") -> [[String: PropertyValue]] {
        compactMap {
            if case .propertiesChanged(path, interface, let c, _) = $0 { c } else { nil }
        }
    }
    /// Paths of InterfacesAdded, in order.
    var added: [String] { compactMap { if case .interfacesAdded(let p, _) = $0 { p } else { nil } } }
    /// Paths of InterfacesRemoved, in order.
    var removed: [String] { compactMap { if case .interfacesRemoved(let p, _) = $0 { p } else { nil } } }
}

/// The error of a failed result, nil for success or no result.
func failure<T>(_ r: Result<T, BlueZErrorReply>?) -> BlueZErrorReply? {
    if case .failure(let e)? = r { e } else { nil }
}
