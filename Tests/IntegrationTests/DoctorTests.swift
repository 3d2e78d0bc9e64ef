// DoctorTests: BluetoothSession.diagnose against the simulator — one test per finding.
import BlueCapKit
import BlueZSimulator
import DBus
import Foundation
import Testing
import TestSupport

@Suite("Doctor: BluetoothSession.diagnose", .serialized, .timeLimit(.minutes(1)))
struct DoctorTests {
    /// A private bus with a simulated bluetoothd imitating `profile`, and a session on it.
    struct World {
        let bus: TestBus
        let simulator: BlueZSimulator
        let session: BluetoothSession
        func stop() {
            session.close()
            simulator.stop()
            bus.stop()
        }
    }

    static func world(adapters: Int = 2, profile: BlueZProfile = .bluez5_66) async throws -> World {
        let bus = try TestBus()
        let simulator = try await BlueZSimulator.start(busAddress: bus.address, adapters: adapters, profile: profile)
        return World(bus: bus, simulator: simulator, session: simulator.session())
    }

    static func diagnose(_ session: BluetoothSession, _ options: DoctorOptions = .busOnly) async throws -> [DoctorFinding] {
        try await session.diagnose(timeout: .seconds(5), options: options).value
    }

    static func finding(_ findings: [DoctorFinding], _ check: String) throws -> DoctorFinding {
        try #require(findings.first { $0.check == check }, "no \(check) in \(findings.map(\.line))")
    }

    /// A directory under /tmp removed by the caller.
    static func temporaryDirectory() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("doctor-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    // MARK: bluetoothd and the policy

    @Test("bluetoothd reachable: every bus check is ok and the probes leave nothing registered")
    func reachable() async throws {
        let w = try await Self.world()
        defer { w.stop() }
        let findings = try await Self.diagnose(w.session)
        #expect(findings.map(\.check) == ["bluetoothd", "policy.call", "policy.agent", "adapters", "adapter hci0", "advertising hci0",
                                          "adapter hci1", "advertising hci1", "policy.advertisement", "policy.application",
                                          "experimental", "rfkill", "main.conf", "version"])
        #expect(findings.allSatisfy { $0.status == .ok || $0.status == .info }, "\(findings.map(\.line))")
        #expect(try Self.finding(findings, "bluetoothd").cause.contains(w.simulator.uniqueName))
        // Nothing left behind: the connection can register its own agent, and has no application.
        let owner = try #require(w.session.uniqueName)
        #expect(w.simulator.sync { !$0.hasRegistrations(owner: owner) })
        let registered = w.simulator.sync { core in (try? core.registerAgent(owner: owner, path: "/after", capability: "NoInputNoOutput")) != nil }
        #expect(registered)
    }

    @Test("bluetoothd not reachable: a problem naming the fix, and no bus check")
    func notReachable() async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        let session = BluetoothSession(bus: .address(bus.address))
        defer { session.close() }
        let findings = try await Self.diagnose(session)
        let b = try Self.finding(findings, "bluetoothd")
        #expect(b.status == .problem)
        #expect(b.cause.contains("no org.bluez"))
        #expect(b.fix.contains("systemctl start bluetooth"))
        #expect(findings.map(\.check) == ["bluetoothd", "rfkill", "main.conf", "version"])
    }

    @Test("the policy refuses GetManagedObjects: policy.call is a problem naming bluetooth.conf's group")
    func callDenied() async throws {
        let w = try await Self.world()
        defer { w.stop() }
        w.simulator.inject(MethodFault("org.freedesktop.DBus.ObjectManager.GetManagedObjects",
                                       action: .error(BlueZErrorReply(name: DBusRemoteError.accessDenied, message: "Rejected send message"))))
        let f = try Self.finding(try await Self.diagnose(w.session), "policy.call")
        #expect(f.status == .problem)
        #expect(f.cause.contains("AccessDenied"))
        #expect(f.fix.contains("bluetooth.conf"))
    }

    @Test("the policy refuses RegisterAgent: policy.agent is a problem")
    func agentDenied() async throws {
        let w = try await Self.world()
        defer { w.stop() }
        w.simulator.inject(MethodFault("org.bluez.AgentManager1.RegisterAgent",
                                       action: .error(BlueZErrorReply(name: DBusRemoteError.accessDenied, message: "Rejected send message"))))
        let findings = try await Self.diagnose(w.session)
        let f = try Self.finding(findings, "policy.agent")
        #expect(f.status == .problem)
        #expect(f.fix.contains("bluetooth"))
        #expect(try Self.finding(findings, "policy.call").status == .ok)
    }

    @Test("the policy refuses RegisterApplication: policy.application is a problem")
    func applicationDenied() async throws {
        let w = try await Self.world()
        defer { w.stop() }
        w.simulator.inject(MethodFault("org.bluez.GattManager1.RegisterApplication",
                                       action: .error(BlueZErrorReply(name: DBusRemoteError.accessDenied, message: "Rejected send message"))))
        #expect(try Self.finding(try await Self.diagnose(w.session), "policy.application").status == .problem)
    }

    // MARK: Adapters

    @Test("an unpowered adapter is a warning naming bluetoothctl power on")
    func unpowered() async throws {
        let w = try await Self.world()
        defer { w.stop() }
        w.simulator.setPowered(adapter: 1, false)
        let findings = try await Self.diagnose(w.session)
        let f = try Self.finding(findings, "adapter hci1")
        #expect(f.status == .warning)
        #expect(f.fix.contains("power on"))
        #expect(try Self.finding(findings, "adapter hci0").status == .ok)
        #expect(try Self.finding(findings, "adapter hci0").cause.contains("roles central, peripheral"))
    }

    @Test("no adapter at all is a problem")
    func noAdapter() async throws {
        let w = try await Self.world(adapters: 0)
        defer { w.stop() }
        #expect(try Self.finding(try await Self.diagnose(w.session), "adapters").status == .problem)
    }

    @Test("no advertising instance left is a warning")
    func noInstances() async throws {
        let w = try await Self.world()
        defer { w.stop() }
        // Fewer instances take effect when the adapter republishes LEAdvertisingManager1 (power off).
        w.simulator.sync { $0.supportedAdvertisingInstances = 0 }
        w.simulator.setPowered(adapter: 0, false)
        w.simulator.setPowered(adapter: 0, true)
        let findings = try await Self.diagnose(w.session)
        let f = try Self.finding(findings, "advertising hci0")
        #expect(f.status == .warning)
        #expect(f.cause.contains("no advertising instance left"))
    }

    // MARK: Experimental interfaces, per profile

    @Test("experimental interfaces: absent without --experimental, found by what is exported with it",
          arguments: [(BlueZProfile.bluez5_55, false), (.bluez5_55, true), (.bluez5_66, false), (.bluez5_82, false), (.bluez5_82, true)])
    func experimental(_ profile: BlueZProfile, _ on: Bool) async throws {
        let w = try await Self.world(profile: profile.experimental(on))
        defer { w.stop() }
        let f = try Self.finding(try await Self.diagnose(w.session), "experimental")
        if on {
            #expect(f.cause.contains("ConnectDevice"))
            // 5.55 has no advertisement monitors even with --experimental: said, with what it costs.
            #expect(f.status == (profile.advertisementMonitors ? .ok : .info))
            #expect(f.cause.contains("passive scanning is unavailable") == !profile.advertisementMonitors)
        } else {
            #expect(f.status == .info)
            #expect(f.fix.contains("Experimental = true"))
        }
    }

    // MARK: Version

    @Test("version: the releases the adapters' interfaces fit, against the installed package",
          arguments: [(BlueZProfile.bluez5_55, "5.55–5.70", false), (.bluez5_55.experimental(true), "5.55–5.65", true),
                      (.bluez5_66, "5.55–5.70", false), (.bluez5_66.experimental(true), "5.66–5.70", false),
                      (.bluez5_82, "5.79 or later", true)])
    func version(_ profile: BlueZProfile, _ era: String, _ mismatch: Bool) async throws {
        let w = try await Self.world(profile: profile)
        defer { w.stop() }
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let status = dir.appendingPathComponent("status")
        try "Package: bluez\nStatus: install ok installed\nVersion: 5.66-1+deb12u1\n\n".write(to: status, atomically: true, encoding: .utf8)
        let options = DoctorOptions(rfkillRoot: nil, mainConf: nil, packageDatabase: status.path)
        let f = try Self.finding(try await Self.diagnose(w.session, options), "version")
        #expect(f.cause.contains("Adapter1 is that of BlueZ \(era)"), "\(f.line)")
        #expect(f.cause.contains("5.66-1+deb12u1"))
        // The package is 5.66: an era without it is a bluetoothd that is not the package's
        // (5.55 shows only with --experimental, which reveals 5.66's PowerState).
        #expect(f.status == (mismatch ? .warning : .info), "\(f.line)")
        #expect(f.fix.contains("systemctl restart bluetooth") == mismatch)
        // Without a package database the era alone is said.
        let bare = try Self.finding(try await Self.diagnose(w.session), "version")
        #expect(bare.status == .info && bare.cause.contains(era))
    }
}
