// Registration, the one lifecycle of exported objects registered with bluetoothd, against the
// simulator: following the owner across a restart, unregistering (timed out, twice).
@testable import BlueZ
import BlueZSimulator
import DBus
import Foundation
import Testing
import TestSupport

@Suite("Registration", .serialized, .timeLimit(.minutes(1)))
struct RegistrationTests {
    /// A GATT application on hci0 through a Registration whose calls are counted: `registered`
    /// gets bluetoothd's unique name after each registration, `unregisterCalls` one item per
    /// `UnregisterApplication` sent, `unexported` one per unexport.
    final class Rig: Sendable {
        let h: TreeHarness
        let registration: Registration
        let root: ObjectPath = "/test/registration"
        let registered = Collector<String>()
        let unregisterCalls = Collector<Int>()
        let unexported = Collector<Int>()

        init() async throws {
            let harness = try await TreeHarness.start(adapters: 1)
            h = harness
            try await harness.waitUntil("loaded") { harness.tree.status.loaded }
            let app = GattApplication(root: root, services: [
                LocalGattService(uuid: "180f", characteristics: [LocalGattCharacteristic(uuid: "2a19", flags: ["read"], value: Data([42]))]),
            ])
            let adapter: ObjectPath = "/org/bluez/hci0", root = self.root
            let simulator = harness.simulator, registered = self.registered, unregisterCalls = self.unregisterCalls, unexported = self.unexported
            let register = RegistrationCalls.bluez(adapter, "org.bluez.GattManager1", "RegisterApplication", [.objectPath(root), .properties([:])])
            let unregister = RegistrationCalls.bluez(adapter, "org.bluez.GattManager1", "UnregisterApplication", [.objectPath(root)])
            let calls = RegistrationCalls(
                path: root,
                export: { registration, caller throws(BlueZError) in try app.export(on: registration.connection, allowedCaller: caller) },
                register: register,
                // Runs once the registration counts (isRegistered true): what the tests wait for.
                afterRegister: { _, _ throws(BlueZError) in registered.append(simulator.uniqueName) },
                unregister: { connection, timeout throws(BlueZError) in
                    unregisterCalls.append(1)
                    try await unregister(connection, timeout)
                },
                didUnexport: { unexported.append(1) })
            registration = Registration(connection: harness.client, calls: calls)
        }

        /// Whether the simulator holds an application of our connection.
        var simulatorHoldsIt: Bool {
            let client = h.client.uniqueName
            return h.simulator.sync { $0.hasRegistrations(owner: client) }
        }

        /// The error name a connection other than bluetoothd gets for `GetManagedObjects` on the root.
        func strangerCall() async throws -> String? {
            let stranger = try h.bus.connect()
            defer { stranger.close() }
            do {
                _ = try await stranger.call(destination: h.client.uniqueName, path: root, interface: "org.freedesktop.DBus.ObjectManager",
                                            member: "GetManagedObjects", timeout: .seconds(5))
                return nil
            } catch {
                return error.remoteName
            }
        }

        func stop() { h.stop() }
    }

    @Test("register, bluetoothd restarts: registered again with the new owner, only it may call; unregister: unexported")
    func followsTheOwnerAcrossARestart() async throws {
        let rig = try await Rig()
        defer { rig.stop() }
        let r = rig.registration
        let first = rig.h.simulator.uniqueName
        try await r.exportAndRegister(allowedCaller: first, timeout: .seconds(5))
        #expect(r.isRegistered && r.isExported && r.allowedCaller == first && rig.simulatorHoldsIt)
        let changes = Collector<String?>()
        r.followOwner(of: rig.h.tree, registeredWith: first, reregister: true, timeout: .seconds(5)) { changes.append($0) }
        #expect(changes.items.isEmpty, "following from the current owner is no change")

        try await rig.h.simulator.restart()
        let second = rig.h.simulator.uniqueName
        #expect(second != first)
        // The new owner read the objects (RegisterApplication does) and registered them.
        #expect(try await rig.registered.wait(for: 2, timeout: .seconds(5)) == [first, second])
        #expect(changes.items == [nil, second])
        #expect(r.isRegistered && r.allowedCaller == second && rig.simulatorHoldsIt)
        #expect(try await rig.strangerCall() == DBusRemoteError.accessDenied)

        #expect(await r.unregister(timeout: .seconds(5)) == nil)
        #expect(!r.isRegistered && !r.isExported && r.allowedCaller == nil)
        #expect(!rig.simulatorHoldsIt)
        #expect(rig.unregisterCalls.items.count == 1 && rig.unexported.items.count == 1)
        #expect(try await rig.strangerCall() == DBusRemoteError.unknownObject)
    }

    @Test("an owner change before following started counts: following from a gone owner registers with the current one")
    func ownerChangedBeforeFollowing() async throws {
        let rig = try await Rig()
        defer { rig.stop() }
        let r = rig.registration
        let first = rig.h.simulator.uniqueName
        try await r.exportAndRegister(allowedCaller: first, timeout: .seconds(5))
        try await rig.h.simulator.restart()
        let second = rig.h.simulator.uniqueName
        try await rig.h.waitUntil("the tree sees the new owner") { rig.h.tree.status.owner == second }
        let changes = Collector<String?>()
        r.followOwner(of: rig.h.tree, registeredWith: first, reregister: true, timeout: .seconds(5)) { changes.append($0) }
        #expect(changes.items == [second])
        #expect(try await rig.registered.wait(for: 2, timeout: .seconds(5)) == [first, second])
        #expect(r.isRegistered && r.allowedCaller == second && rig.simulatorHoldsIt)
        await r.unregister()
    }

    @Test("following without registering again: the owner gone, nobody may call and nothing is registered until asked")
    func followWithoutReregistering() async throws {
        let rig = try await Rig()
        defer { rig.stop() }
        let r = rig.registration
        let first = rig.h.simulator.uniqueName
        try await r.exportAndRegister(allowedCaller: first, timeout: .seconds(5))
        let changes = Collector<String?>()
        r.followOwner(of: rig.h.tree, registeredWith: first, reregister: false) { changes.append($0) }
        try await rig.h.simulator.restart()
        let second = rig.h.simulator.uniqueName
        #expect(try await changes.wait(for: 2, timeout: .seconds(5)) == [nil, second])
        #expect(!r.isRegistered && r.allowedCaller == "" && r.isExported && !rig.simulatorHoldsIt)
        try await r.reregister(allowedCaller: second, timeout: .seconds(5))
        #expect(r.isRegistered && r.allowedCaller == second && rig.simulatorHoldsIt)
        await r.unregister()
    }

    @Test("an unregister that times out still unexports")
    func unregisterTimeoutUnexports() async throws {
        let rig = try await Rig()
        defer { rig.stop() }
        let r = rig.registration
        try await r.exportAndRegister(allowedCaller: rig.h.simulator.uniqueName, timeout: .seconds(5))
        rig.h.simulator.inject(MethodFault("org.bluez.GattManager1.UnregisterApplication", action: .noReply))
        let failure = await r.unregister(timeout: .milliseconds(200))
        #expect(failure?.kind == .timeout)
        #expect(failure?.operation == "org.bluez.GattManager1.UnregisterApplication")
        #expect(!r.isRegistered && !r.isExported)
        #expect(rig.unexported.items.count == 1)
        #expect(try await rig.strangerCall() == DBusRemoteError.unknownObject)
    }

    @Test("unregistering twice, one after the other or at once, sends UnregisterApplication once; nothing comes back")
    func doubleUnregisterIsIdempotent() async throws {
        let rig = try await Rig()
        defer { rig.stop() }
        let r = rig.registration
        let owner = rig.h.simulator.uniqueName
        try await r.exportAndRegister(allowedCaller: owner, timeout: .seconds(5))
        async let a = r.unregister()
        async let b = r.unregister()
        let (ea, eb) = await (a, b)
        #expect(ea == nil && eb == nil)
        #expect(await r.unregister() == nil)
        #expect(rig.unregisterCalls.items.count == 1 && rig.unexported.items.count == 1)
        #expect(!r.isRegistered && !r.isExported && !rig.simulatorHoldsIt)
        // Ended for good: no export, no registration, no following.
        #expect(throws: BlueZError.self) { try r.export(allowedCaller: owner) }
        await #expect(throws: BlueZError.self) { try await r.register(timeout: .seconds(1)) }
        let changes = Collector<String?>()
        r.followOwner(of: rig.h.tree, registeredWith: "gone") { changes.append($0) }
        #expect(changes.items.isEmpty)
    }
}
