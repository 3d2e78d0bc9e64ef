// Foreign connections through the public API: links another program made (or holds pending)
// are listed, streamed and closed; links of our managers never are.
import BlueCapKit
import BlueZSimulator
import Foundation
import Testing
import TestSupport

@Suite("Foreign connections", .serialized, .timeLimit(.minutes(1)))
struct ForeignConnectionTests {
    let tag = "C0:FF:EE:00:00:01"
    let other = "C0:FF:EE:00:00:02"
    func devicePath(_ address: String) -> String { "/org/bluez/hci0/dev_" + address.replacingOccurrences(of: ":", with: "_") }

    @Test("a link another program made before we looked is listed, streamed first, and closed on request")
    func linkFromBeforeIsListedAndClosed() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        // No connection delay: the other program's link is up when the call returns.
        h.simulator.add(simulatedSensorTag(tag).delays(connection: .zero, discovery: .milliseconds(10)))
        let p = try await h.discover(tag)
        #expect(h.simulator.connectAsOtherClient(device: devicePath(tag)) == nil)
        let listed = try await h.session.foreignConnections().value
        #expect(listed.map(\.identifier) == [p.identifier])
        #expect(listed.first?.address == tag && listed.first?.adapter == "hci0" && listed.first?.isPending == false)
        #expect(try await h.session.foreignConnections(adapter: "hci1").value.isEmpty)
        try #require(listed.count == 1)

        let lists = Collector<[ForeignConnection]>()
        h.session.whenForeignConnectionsChange().onSuccess(context: .immediate) { lists.append($0) }
        let first = try await lists.wait(for: 1)
        #expect(first[0].map(\.identifier) == [p.identifier])

        try await h.session.closeForeignConnection(listed[0]).value
        let after = try await lists.wait(for: 2)
        #expect(after[1].isEmpty)
        #expect(try await h.session.foreignConnections().value.isEmpty)
        #expect(!p.isConnected)
    }

    @Test("our own connection is never listed, at any step of connect and disconnect; another session's is")
    func ownLinkNeverForeign() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        h.simulator.add(simulatedSensorTag(tag))
        h.simulator.add(simulatedSensorTag(other))
        let lists = Collector<[ForeignConnection]>()
        h.session.whenForeignConnectionsChange().onSuccess(context: .immediate) { lists.append($0) }
        _ = try await lists.wait(for: 1)
        _ = try await h.discover([tag, other])
        let (p, _, events) = try await h.ready(tag)
        p.disconnect()
        try await events.events.wait(for: 2)
        #expect(events.events.items == [.connect, .forceDisconnect])

        // Another program on the same bus: its own session and manager.
        let otherSession = h.bus.session()
        defer { otherSession.close() }
        let otherManager = CentralManager(session: otherSession)
        try await otherManager.whenPoweredOn(timeout: .seconds(5)).value
        let theirs = try #require(otherManager.retrievePeripherals(withAddresses: [other]).first)
        let theirEvents = Collector<ConnectionEvent>()
        theirs.connect().onSuccess(context: .immediate) { theirEvents.append($0.connectionEvent) }
        try await theirEvents.wait(for: 1)
        let seen = try await waitForList(lists) { $0.map(\.address) == [other] }
        #expect(seen.map(\.address) == [other])
        #expect(try await otherSession.foreignConnections().value.isEmpty)
        #expect(!lists.items.contains { $0.contains { $0.address == tag } })

        let refused = await #expect(throws: BlueCapError.self) {
            try await otherSession.closeForeignConnection(seen[0]).value
        }
        #expect(refused?.kind == .invalidArguments)
        theirs.terminate()
    }

    @Test("Connect meeting InProgress while another client's attempt is pending reports it; closing it lets ours connect")
    func inProgressNamesThePendingAttempt() async throws {
        let h = try await CentralRig.start()
        defer { h.stop() }
        h.simulator.add(simulatedSensorTag(tag).delays(connection: .seconds(3), discovery: .milliseconds(10)))
        let p = try await h.discover(tag)
        #expect(h.simulator.connectAsOtherClient(device: devicePath(tag)) == nil)
        let events = h.connect(p, connectionTimeout: .seconds(8))
        try await events.failures.wait(for: 1, timeout: .seconds(5))
        #expect(events.failures.items[0].contains("InProgress") && events.failures.items[0].contains("closeForeignConnection"))
        let listed = try await h.session.foreignConnections().value
        #expect(listed.map(\.identifier) == [p.identifier])
        #expect(listed.first?.isPending == true)
        try #require(listed.count == 1)

        try await h.session.closeForeignConnection(listed[0]).value
        #expect(try await h.session.foreignConnections().value.isEmpty)
        p.reconnect()
        try await events.events.wait(for: 1, timeout: .seconds(6))
        #expect(events.events.items == [.connect])
        #expect(try await h.session.foreignConnections().value.isEmpty)
    }

    /// Waits for lists until one satisfies `accept`; returns it.
    private func waitForList(_ lists: Collector<[ForeignConnection]>, timeout: Duration = .seconds(5),
                             _ accept: @Sendable ([ForeignConnection]) -> Bool) async throws -> [ForeignConnection] {
        var n = 1
        while true {
            let items = try await lists.wait(for: n, timeout: timeout)
            if let hit = items.last(where: accept) { return hit }
            n = items.count + 1
        }
    }
}
