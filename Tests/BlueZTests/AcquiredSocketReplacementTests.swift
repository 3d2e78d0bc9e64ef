// A local characteristic's acquired sockets when bluetoothd asks again: after it closed the socket
// it had (the last central left, the link dropped), a new AcquireNotify or AcquireWrite is served
// even when the old socket's end of file has not been handled yet (its handler runs on the
// sockets' queue, late on a busy host); while bluetoothd holds one, a second is refused.
@testable import BlueZ
import DBus
import Foundation
import Glibc
import Testing
import TestSupport

@Suite("Acquired sockets of local characteristics, asked for again", .serialized, .timeLimit(.minutes(1)))
struct AcquiredSocketReplacementTests {
    static let root: ObjectPath = "/test/acquire"
    static let path: ObjectPath = "/test/acquire/service0/char0"

    /// The D-Bus error an acquisition was answered with.
    struct Refused: Error, Equatable { let name: String }

    /// `member` ("AcquireNotify" or "AcquireWrite") called by `caller`, standing in for
    /// bluetoothd: the socket's end it is given, or the error's D-Bus name.
    static func acquire(_ member: String, by caller: Connection, on h: TreeHarness) async -> Result<FileDescriptor, Refused> {
        do {
            let reply = try await caller.call(destination: h.client.uniqueName, path: path, interface: "org.bluez.GattCharacteristic1",
                                              member: member, arguments: [.properties(["mtu": .uint16(100)])], timeout: .seconds(5))
            guard case .unixFD(let fd)? = reply.body.first else { return .failure(Refused(name: "no descriptor in \(reply.body)")) }
            return .success(fd)
        } catch {
            return .failure(Refused(name: error.remoteName ?? "\(error)"))
        }
    }

    @Test("bluetoothd acquires again after closing its socket, before its end of file is handled: served, and values go to the new socket",
          arguments: ["AcquireNotify", "AcquireWrite"])
    func acquiredAgainAfterClose(member: String) async throws {
        let h = try await TreeHarness.start(adapters: 1)
        defer { h.stop() }
        let caller = try h.bus.connect()
        defer { caller.close() }
        let written = Collector<Data>()
        let chrc = LocalGattCharacteristic(uuid: "2a37", flags: ["read", "notify", "write-without-response"], value: Data([0]))
        chrc.acquireWrite = true
        chrc.setWriteHandler { request in
            if case .write(let bytes) = request.operation { written.append(bytes) }
            _ = request.succeed()
        }
        let app = GattApplication(root: Self.root, services: [LocalGattService(uuid: "180d", characteristics: [chrc])])
        let handles = try app.export(on: h.client, allowedCaller: caller.uniqueName)
        defer { for handle in handles.reversed() { handle.unexport() } }
        let acquired = { member == "AcquireNotify" ? chrc.isNotifyAcquired : chrc.isWriteAcquired }

        var first: FileDescriptor? = try await Self.acquire(member, by: caller, on: h).get()
        #expect(acquired())
        // While bluetoothd holds its socket, a second acquisition is refused.
        #expect(await Self.acquire(member, by: caller, on: h) == .failure(Refused(name: "org.bluez.Error.NotPermitted")))

        // bluetoothd closes its end; the end of file waits on the held sockets' queue. (Shut down
        // rather than closed: a child another test forks holds a copy of every descriptor until
        // it execs, and a close would not end the socket while it does.)
        AcquiredServerSocket.queue.suspend()
        _ = first.map { shutdown($0.rawValue, Int32(SHUT_RDWR)) }
        first = nil
        #expect(acquired(), "the end of file is not handled yet")
        let again = await Self.acquire(member, by: caller, on: h)
        AcquiredServerSocket.queue.resume()
        let second = try again.get()
        #expect(acquired())

        if member == "AcquireNotify" {
            #expect(chrc.notify(Data([7])))
            var byte: UInt8 = 0
            #expect(recv(second.rawValue, &byte, 1, Int32(MSG_DONTWAIT)) == 1 && byte == 7, "the value reaches the new socket")
        } else {
            let sent = [UInt8(9)].withUnsafeBytes { send(second.rawValue, $0.baseAddress, 1, Int32(MSG_DONTWAIT)) }
            #expect(sent == 1)
            #expect(try await written.wait(for: 1, timeout: .seconds(5)) == [Data([9])], "the new socket's writes arrive")
        }
    }
}
