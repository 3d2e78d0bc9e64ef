import DBus
import Foundation
import Testing
import TestSupport
import Locking

@Suite("Method calls: errors, timeouts, concurrency, closing")
struct CallTests {
    @Test("an error reply keeps its D-Bus name and message")
    func errorReplyKeepsNameAndMessage() async throws {
        try await withTestBus { bus in
            let server = try bus.connect()
            let client = try bus.connect()
            let h = try server.export([DBusInterface(name: "org.bluecap.T", methods: [
                DBusMethod("Fail") { _, r in r.fail(name: "org.bluez.Error.NotPermitted", message: "not now") },
            ])], at: "/t")
            defer { h.unexport() }
            await #expect(throws: DBusCallError.remote(DBusRemoteError(name: "org.bluez.Error.NotPermitted", message: "not now"))) {
                _ = try await client.call(destination: server.uniqueName, path: "/t", interface: "org.bluecap.T", member: "Fail")
            }
        }
    }

    @Test("unknown object, interface and method, and wrong arguments, get the standard errors")
    func standardErrors() async throws {
        try await withTestBus { bus in
            let server = try bus.connect()
            let client = try bus.connect()
            let h = try server.export([echoInterface(signature: "s")], at: "/t")
            defer { h.unexport() }
            func name(_ path: ObjectPath, _ iface: String?, _ member: String, _ args: [DBusValue]) async -> String? {
                do {
                    _ = try await client.call(destination: server.uniqueName, path: path, interface: iface, member: member, arguments: args)
                    return nil
                } catch { return error.remoteName }
            }
            #expect(await name("/nothing", "org.bluecap.Test", "Echo", [.string("x")]) == DBusRemoteError.unknownObject)
            #expect(await name("/t", "org.bluecap.Other", "Echo", [.string("x")]) == DBusRemoteError.unknownInterface)
            #expect(await name("/t", "org.bluecap.Test", "Nope", []) == DBusRemoteError.unknownMethod)
            #expect(await name("/t", "org.bluecap.Test", "Echo", [.int32(1)]) == DBusRemoteError.invalidArgs)
            #expect(await name("/t", nil, "Echo", [.string("x")]) == nil)
        }
    }

    @Test("a call nobody answers times out near its deadline and the late reply is ignored")
    func timeoutThenLateReply() async throws {
        try await withTestBus { bus in
            let server = try bus.connect()
            let client = try bus.connect()
            let parked = Locked<[Responder]>([])
            let h = try server.export([DBusInterface(name: "org.bluecap.T", methods: [
                DBusMethod("Park", output: "s") { _, r in parked.withLock { $0.append(r) } },
                DBusMethod("Quick", output: "s") { _, r in r.succeed([.string("quick")]) },
            ])], at: "/t")
            defer { h.unexport() }
            let start = ContinuousClock.now
            await #expect(throws: DBusCallError.timeout(after: .milliseconds(300))) {
                _ = try await client.call(destination: server.uniqueName, path: "/t", interface: "org.bluecap.T",
                                          member: "Park", timeout: .milliseconds(300))
            }
            let elapsed = ContinuousClock.now - start
            // Never early. The error above already names the 300 ms deadline; the upper bound
            // only rules out the 25 s default having been used, with room for a loaded machine.
            #expect(elapsed >= .milliseconds(290) && elapsed < .seconds(10), "timed out after \(elapsed)")
            // Answer late; the client must ignore it and keep working.
            for r in parked.withLock({ $0 }) { r.succeed([.string("late")]) }
            let reply = try await client.call(destination: server.uniqueName, path: "/t", interface: "org.bluecap.T", member: "Quick")
            #expect(try reply.body.decode(String.self, at: 0) == "quick")
        }
    }

    @Test("a responder dropped without answering replies Failed instead of leaving the caller hanging")
    func droppedResponderFails() async throws {
        try await withTestBus { bus in
            let server = try bus.connect()
            let client = try bus.connect()
            let h = try server.export([DBusInterface(name: "org.bluecap.T", methods: [DBusMethod("Drop") { _, _ in }])], at: "/t")
            defer { h.unexport() }
            await #expect(throws: DBusCallError.remote(DBusRemoteError(name: DBusRemoteError.failed, message: "no reply from handler"))) {
                _ = try await client.call(destination: server.uniqueName, path: "/t", interface: "org.bluecap.T", member: "Drop",
                                          timeout: .seconds(5))
            }
        }
    }

    @Test("a reply of the wrong type throws a decoding error, not a crash")
    func wrongTypeReplyThrows() async throws {
        try await withTestBus { bus in
            let server = try bus.connect()
            let client = try bus.connect()
            let h = try server.export([echoInterface(signature: "a{sv}")], at: "/t")
            defer { h.unexport() }
            let reply = try await client.call(destination: server.uniqueName, path: "/t", interface: "org.bluecap.Test", member: "Echo",
                                              arguments: [.properties(["A": .int32(1)])])
            #expect(throws: DBusDecodingError.self) { try reply.body.decode([String].self, at: 0) }
            #expect(throws: DBusDecodingError.self) { try reply.body.decode([String: DBusValue].self, at: 0)["A"].as(String.self) }
            #expect(throws: DBusDecodingError.self) { try reply.body.decode(String.self, at: 1) }
        }
    }

    @Test("1,000 calls from 8 threads are all answered")
    func thousandConcurrentCalls() async throws {
        try await withTestBus { bus in
            let server = try bus.connect()
            let client = try bus.connect()
            let h = try server.export([echoInterface(signature: "u")], at: "/t")
            defer { h.unexport() }
            let done = Collector<Bool>()
            for t in 0..<8 {
                Thread.detachNewThread {
                    for i in 0..<125 {
                        let n = UInt32(t * 1000 + i)
                        client.call(destination: server.uniqueName, path: "/t", interface: "org.bluecap.Test", member: "Echo",
                                    arguments: [.uint32(n)]) { result in
                            let ok = (try? result.get().body.decode(UInt32.self, at: 0)) == n
                            if !ok { print("call \(n) failed: \(result)") }
                            done.append(ok)
                        }
                    }
                }
            }
            let results = try await done.wait(for: 1000, timeout: .seconds(30))
            #expect(results.count == 1000)
            #expect(results.allSatisfy { $0 })
        }
    }

    @Test("closing a connection with calls pending fails them promptly with disconnected")
    func closeFailsPending() async throws {
        try await withTestBus { bus in
            let server = try bus.connect()
            let client = try bus.connect()
            let parked = Collector<Responder>()
            let h = try server.export([DBusInterface(name: "org.bluecap.T", methods: [
                DBusMethod("Park") { _, r in parked.append(r) },
            ])], at: "/t")
            defer { h.unexport() }
            let results = Collector<DBusCallError?>()
            for _ in 0..<5 {
                client.call(destination: server.uniqueName, path: "/t", interface: "org.bluecap.T", member: "Park", timeout: .seconds(20)) {
                    if case .failure(let e) = $0 { results.append(e) } else { results.append(nil) }
                }
            }
            try await parked.wait(for: 5)
            let start = ContinuousClock.now
            client.close()
            let got = try await results.wait(for: 5, timeout: .seconds(2))
            #expect(got.allSatisfy { $0 == .disconnected })
            #expect(ContinuousClock.now - start < .seconds(1))
            await #expect(throws: DBusCallError.disconnected) {
                _ = try await client.call(destination: server.uniqueName, path: "/t", interface: "org.bluecap.T", member: "Park")
            }
        }
    }

    @Test("a blocking call works off the owner thread and is refused on it")
    func blockingCalls() async throws {
        try await withTestBus { bus in
            let server = try bus.connect()
            let client = try bus.connect()
            let h = try server.export([echoInterface(signature: "s")], at: "/t")
            defer { h.unexport() }
            let reply = try client.callBlocking(destination: server.uniqueName, path: "/t", interface: "org.bluecap.Test",
                                                member: "Echo", arguments: [.string("b")])
            #expect(reply.body == [.string("b")])
            let refused = Collector<DBusCallError?>()
            client.execute {
                do {
                    _ = try client.callBlocking(destination: server.uniqueName, path: "/t", interface: "org.bluecap.Test",
                                                member: "Echo", arguments: [.string("b")])
                    refused.append(nil)
                } catch { refused.append(error as? DBusCallError) }
            }
            #expect(try await refused.wait(for: 1) == [.blockingOnOwnerThread])
        }
    }

    @Test("connecting to an absent bus throws an error naming the address")
    func absentBus() {
        #expect {
            _ = try Connection(address: "unix:path=/nonexistent/bluecap-bus")
        } throws: { error in
            "\(error)".contains("cannot connect to the bus at unix:path=/nonexistent/bluecap-bus")
        }
    }
}
