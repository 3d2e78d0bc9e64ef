import DBus
import Testing
import TestSupport

@Suite("Signals, match rules and name owners")
struct SignalTests {
    @Test("a subscriber receives matching signals and none after cancelling; two subscribers share one AddMatch")
    func subscribeShareAndCancel() async throws {
        try await withTestBus { bus in
            let emitter = try bus.connect()
            let listener = try bus.connect()
            let rule = MatchRule(sender: emitter.uniqueName, interface: "org.bluecap.Sig", member: "Tick")
            let first = Collector<UInt32>()
            let second = Collector<UInt32>()
            let other = Collector<String>()
            let s1 = listener.subscribe(rule: rule) { m in if let v = try? m.body.decode(UInt32.self, at: 0) { first.append(v) } }
            let s2 = listener.subscribe(rule: rule) { m in if let v = try? m.body.decode(UInt32.self, at: 0) { second.append(v) } }
            let s3 = listener.subscribe(rule: MatchRule(interface: "org.bluecap.Sig", member: "Tock", path: "/b")) { m in
                other.append(m.path?.rawValue ?? "")
            }
            try await s1.established()
            try await s3.established()
            #expect(listener.matchRuleCounters.addMatch == 2)

            try emitter.emitSignal(path: "/a", interface: "org.bluecap.Sig", member: "Tick", arguments: [.uint32(1)])
            try emitter.emitSignal(path: "/a", interface: "org.bluecap.Sig", member: "Tock", arguments: [.uint32(9)])
            try emitter.emitSignal(path: "/b", interface: "org.bluecap.Sig", member: "Tock", arguments: [.uint32(9)])
            #expect(try await first.wait(for: 1) == [1])
            #expect(try await second.wait(for: 1) == [1])
            #expect(try await other.wait(for: 1) == ["/b"])

            s1.cancel()
            s1.cancel()
            #expect(listener.matchRuleCounters.removeMatch == 0)
            try emitter.emitSignal(path: "/a", interface: "org.bluecap.Sig", member: "Tick", arguments: [.uint32(2)])
            #expect(try await second.wait(for: 2) == [1, 2])
            #expect(first.items == [1])

            s2.cancel()
            #expect(listener.matchRuleCounters.removeMatch == 1)
            try emitter.emitSignal(path: "/a", interface: "org.bluecap.Sig", member: "Tick", arguments: [.uint32(3)])
            try emitter.emitSignal(path: "/b", interface: "org.bluecap.Sig", member: "Tock", arguments: [.uint32(3)])
            try await other.wait(for: 2)
            #expect(first.items == [1])
            #expect(second.items == [1, 2])
            s3.cancel()
        }
    }

    @Test("subscribers added or removed while signals of one kind keep arriving see exactly the signals from then on")
    func subscribersChangingMidStream() async throws {
        try await withTestBus { bus in
            let emitter = try bus.connect()
            let listener = try bus.connect()
            func decoder(_ c: Collector<UInt32>) -> @Sendable (Message) -> Void {
                { m in if let v = try? m.body.decode(UInt32.self, at: 0) { c.append(v) } }
            }
            let broad = Collector<UInt32>(), onA = Collector<UInt32>(), anyMember = Collector<UInt32>()
            let s1 = listener.subscribe(rule: MatchRule(interface: "org.bluecap.Sig", member: "Tick"), decoder(broad))
            try await s1.established()
            for v: UInt32 in [1, 2] {
                try emitter.emitSignal(path: "/a", interface: "org.bluecap.Sig", member: "Tick", arguments: [.uint32(v)])
            }
            #expect(try await broad.wait(for: 2) == [1, 2])

            // A rule fixing the path and a broader one, both matching the signals seen so far.
            let s2 = listener.subscribe(rule: MatchRule(interface: "org.bluecap.Sig", member: "Tick", path: "/a"), decoder(onA))
            let s3 = listener.subscribe(rule: MatchRule(interface: "org.bluecap.Sig"), decoder(anyMember))
            try await s2.established()
            try await s3.established()
            try emitter.emitSignal(path: "/a", interface: "org.bluecap.Sig", member: "Tick", arguments: [.uint32(3)])
            try emitter.emitSignal(path: "/b", interface: "org.bluecap.Sig", member: "Tick", arguments: [.uint32(4)])
            #expect(try await anyMember.wait(for: 2) == [3, 4])

            s3.cancel()
            try emitter.emitSignal(path: "/a", interface: "org.bluecap.Sig", member: "Tick", arguments: [.uint32(5)])
            #expect(try await broad.wait(for: 5) == [1, 2, 3, 4, 5])
            #expect(try await onA.wait(for: 2) == [3, 5])
            #expect(anyMember.items == [3, 4])
            s1.cancel()
            s2.cancel()
        }
    }

    @Test("watching a name reports no owner, then the owner, then no owner again")
    func nameOwnerTracking() async throws {
        try await withTestBus { bus in
            let watcher = try bus.connect()
            let owner = try bus.connect()
            let seen = Collector<String?>()
            let watch = watcher.watchNameOwner("org.bluecap.Named") { seen.append($0) }
            defer { watch.cancel() }
            #expect(try await seen.wait(for: 1) == [nil])
            #expect(try await owner.requestName("org.bluecap.Named") == .primaryOwner)
            #expect(try await seen.wait(for: 2) == [nil, owner.uniqueName])
            #expect(try await owner.releaseName("org.bluecap.Named") == 1)
            #expect(try await seen.wait(for: 3) == [nil, owner.uniqueName, nil])
            #expect(try await owner.requestName("org.bluecap.Named") == .primaryOwner)
            #expect(try await seen.wait(for: 4) == [nil, owner.uniqueName, nil, owner.uniqueName])
        }
    }

    @Test("a rule with a well-known sender only delivers signals from that name's owner")
    func wellKnownSenderFilter() async throws {
        try await withTestBus { bus in
            let service = try bus.connect()
            let impostor = try bus.connect()
            let listener = try bus.connect()
            #expect(try await service.requestName("org.bluecap.Service") == .primaryOwner)
            let got = Collector<String>()
            let broad = listener.subscribe(rule: MatchRule(interface: "org.bluecap.Sig")) { _ in }
            let sub = listener.subscribe(rule: MatchRule(sender: "org.bluecap.Service", interface: "org.bluecap.Sig")) { m in
                got.append(m.sender ?? "")
            }
            try await sub.established()
            try await broad.established()
            // Let the owner cache fill before emitting.
            _ = try await listener.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                        interface: "org.freedesktop.DBus", member: "GetId")
            try impostor.emitSignal(path: "/x", interface: "org.bluecap.Sig", member: "S")
            try service.emitSignal(path: "/x", interface: "org.bluecap.Sig", member: "S")
            #expect(try await got.wait(for: 1) == [service.uniqueName])
            try service.emitSignal(path: "/x", interface: "org.bluecap.Sig", member: "S")
            #expect(try await got.wait(for: 2) == [service.uniqueName, service.uniqueName])
            broad.cancel()
            sub.cancel()
        }
    }
}
