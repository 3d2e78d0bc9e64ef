// A peripheral that never answers: every call fails at its own deadline, naming its object and
// BlueZ's timeout; the queue goes on; late replies are ignored.
// The manager runs on the rig's manual clock: deadlines fall due when the test advances it, and
// each is checked exactly, in virtual time.
import BlueCapKit
import BlueZSimulator
import DBus
import Foundation
import Futures
import Testing
import TestSupport

@Suite("Reliability: timeouts", .serialized, .timeLimit(.minutes(1)))
struct TimeoutReliabilityTests {
    @Test("a device that answers nothing: connect, read, write, notify, descriptor read each fail at their deadline, in queue order")
    func everyCallTimesOutAtItsDeadline() async throws {
        let rig = try await CentralRig.start(manualClock: true)
        defer { rig.stop() }
        let clock = try #require(rig.clock)
        let (_, p, service, events) = try await rig.readyTag()
        let data = try need(service.characteristic(AccelerometerUUIDs.data), "data")
        let period = try need(service.characteristic(AccelerometerUUIDs.period), "period")
        let ccc = try need(data.descriptor("2902"), "CCC")
        for member in ["GattCharacteristic1.ReadValue", "GattCharacteristic1.WriteValue", "GattCharacteristic1.AcquireNotify",
                       "GattCharacteristic1.StartNotify", "GattDescriptor1.ReadValue", "Device1.Connect"] {
            rig.simulator.inject(MethodFault("org.bluez." + member, action: .noReply))
        }
        let start = clock.now
        let timeouts: [Duration] = [.milliseconds(150), .milliseconds(250), .milliseconds(100), .milliseconds(200)]
        let calls: [(String, Future<Void>)] = [
            ("read", period.read(timeout: timeouts[0]).map(context: .immediate) { _ in }),
            ("write", period.write(data: Data([5]), timeout: timeouts[1]).map(context: .immediate) { _ in }),
            ("notify", data.startNotifying(timeout: timeouts[2]).map(context: .immediate) { _ in }),
            ("descriptor", ccc.read(timeout: timeouts[3]).map(context: .immediate) { _ in }),
        ]
        // The object each call names: the characteristic, or for the descriptor one under data.
        let targets = [period.objectPath, period.objectPath, data.objectPath, data.objectPath + "/desc"]
        let ends = Collector<Duration>()
        for (_, future) in calls { future.onComplete(context: .immediate) { _ in ends.append(clock.now - start) } }
        // Queued one after another: call k starts when call k-1 ends, so it ends at the sum of
        // the deadlines up to k, exactly; nothing ends before its deadline.
        var expectedEnd: Duration = .zero
        for (k, (name, future)) in calls.enumerated() {
            #expect(!future.isCompleted, "\(name) ended before its deadline")
            await rig.advance(by: timeouts[k])
            let error = try #require(try await failure(of: future) as? PeripheralError, "\(name)")
            expectedEnd += timeouts[k]
            #expect(error.kind == .timeout, "\(name): \(error)")
            #expect(error.timeout == timeouts[k], "\(name): \(error)")
            #expect(error.bluez?.kind == .timeout, "\(name): \(error)")
            #expect(k < 3 ? error.path == targets[k] : error.path?.hasPrefix(targets[k]) == true, "\(name): \(error)")
            #expect(ends.items.count == k + 1 && ends.items[k] == expectedEnd, "\(name) ended at \(ends.items), deadline \(expectedEnd)")
        }
        // The queue goes on once bluetoothd answers: the timed-out write never took effect and
        // the timed-out notification start left the characteristic not notifying. The four calls
        // reach the simulator from the D-Bus thread, and on the manual clock the test gets here
        // in milliseconds: faults cleared before a call arrived would let it through (the write
        // taking effect), so wait until the four are held.
        try await withDeadline(.seconds(10), "the four calls held by the simulator") {
            await rig.simulator.waitForHeldCalls(atLeast: 4)
        }
        rig.simulator.clearFaults()
        #expect(try await period.read().value.value(as: UInt8.self) == 100)
        #expect(!data.isNotifying)
        rig.simulator.inject(MethodFault("org.bluez.Device1.Connect", action: .noReply))
        // Connect after a drop: .timeout at connectionTimeout, not a moment before.
        rig.simulator.dropLink(device: p.identifier)
        try await events.events.wait(for: 2)
        let again = rig.connect(p, timeoutRetries: 5, connectionTimeout: .milliseconds(300))
        await rig.advance(by: .milliseconds(299))
        #expect(again.events.items.isEmpty)
        clock.advance(by: .milliseconds(1))
        try await again.events.wait(for: 1)
        #expect(again.events.items == [.timeout])
    }

    @Test("on a manual clock the D-Bus call's own timeout never decides: 2.5 s of real time pass, the read still waits for the test's clock")
    func realTimeNeverDecides() async throws {
        let rig = try await CentralRig.start(manualClock: true)
        defer { rig.stop() }
        let (_, _, service, _) = try await rig.readyTag()
        let period = try need(service.characteristic(AccelerometerUUIDs.period), "period")
        rig.simulator.inject(MethodFault("org.bluez.GattCharacteristic1.ReadValue", action: .noReply))
        let read = period.read(timeout: .milliseconds(100))
        try await withDeadline(.seconds(10), "the read held by the simulator") {
            await rig.simulator.waitForHeldCalls(atLeast: 1)
        }
        // A busy machine can stall a test this long between two steps: the call's real-time
        // backstop (the deadline + the clock's margin) must not end it meanwhile.
        try await Task.sleep(for: .milliseconds(2_500))
        #expect(!read.isCompleted, "the read ended on real time: \(String(describing: read.result))")
        await rig.advance(by: .milliseconds(100))
        let error = try #require(try await failure(of: read) as? PeripheralError)
        #expect(error.kind == .timeout && error.timeout == .milliseconds(100), "\(error)")
    }

    @Test("replies that arrive after their deadline are ignored: the call stays failed, the next call gets its own answer")
    func lateRepliesIgnored() async throws {
        let rig = try await CentralRig.start(manualClock: true)
        defer { rig.stop() }
        let (_, _, service, _) = try await rig.readyTag()
        let period = try need(service.characteristic(AccelerometerUUIDs.period), "period")
        let enabled = try need(service.characteristic(AccelerometerUUIDs.enabled), "enabled")
        // ReadValue answered after 50 ms of real time, to a caller whose 100 ms deadline on the
        // manual clock passes at once.
        rig.simulator.inject(MethodFault("org.bluez.GattCharacteristic1.ReadValue", path: period.objectPath,
                                         action: .delay(.milliseconds(50)), count: 1))
        // The write, sent after the read gave up, is handled after 60 ms: its reply comes after
        // the late read reply.
        rig.simulator.inject(MethodFault("org.bluez.GattCharacteristic1.WriteValue", path: enabled.objectPath,
                                         action: .delay(.milliseconds(60)), count: 1))
        let completions = Collector<String>()
        let late = period.read(timeout: .milliseconds(100))
        late.onComplete(context: .immediate) { r in completions.append(r.failureValue == nil ? "success" : "failure") }
        let write = enabled.write(data: Data([1]), timeout: .seconds(3))
        await rig.advance(by: .milliseconds(100))
        let error = try #require(try await failure(of: late) as? PeripheralError)
        #expect(error.kind == .timeout)
        _ = try await write.value
        // By now the late ReadValue reply has arrived (same sender, earlier) and was dropped.
        #expect(completions.items == ["failure"])
        #expect(try await enabled.read().value.value == Data([1]))
        #expect(try await period.read().value.value(as: UInt8.self) == 100)
        #expect(completions.items == ["failure"])
    }

    @Test("fifty reads queued behind a call that never returns each fail at their own deadline; none hangs")
    func queuedReadsBehindAStuckCall() async throws {
        let rig = try await CentralRig.start(manualClock: true)
        defer { rig.stop() }
        let (_, _, service, _) = try await rig.readyTag()
        let period = try need(service.characteristic(AccelerometerUUIDs.period), "period")
        rig.simulator.inject(MethodFault("org.bluez.GattCharacteristic1.ReadValue", action: .noReply))
        let reads = (0..<50).map { _ in period.read(timeout: .milliseconds(20)) }
        // Each round of deadlines ends the reads running and starts the next ones.
        var rounds = 0
        while reads.contains(where: { !$0.isCompleted }) && rounds < reads.count {
            await rig.advance(by: .milliseconds(20))
            rounds += 1
        }
        var kinds: [PeripheralError.Kind] = []
        for r in reads {
            let e = try #require(try await failure(of: r, within: .seconds(10)) as? PeripheralError)
            kinds.append(e.kind)
        }
        // Each one timed out, or was refused as busy by the queue's bound: never a hang.
        #expect(kinds.allSatisfy { $0 == .timeout || $0 == .busy }, "\(Set(kinds.map { "\($0)" }))")
        rig.simulator.clearFaults()
        #expect(try await period.read().value.value(as: UInt8.self) == 100)
    }
}
