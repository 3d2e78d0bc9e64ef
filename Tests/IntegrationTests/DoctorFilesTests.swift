// DoctorFilesTests: what BluetoothSession.diagnose reads from this machine's files — rfkill,
// main.conf, the bluez package — with the files in a temporary directory; and its output forms.
import BlueCapKit
import Foundation
import Testing
import TestSupport

@Suite("Doctor: this machine's files, and the output", .serialized, .timeLimit(.minutes(1)))
struct DoctorFilesTests {
    /// Writes `files` (relative path → contents) under a new temporary directory.
    static func directory(_ files: [String: String]) throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("doctor-\(UUID().uuidString)")
        for (path, text) in files {
            let url = dir.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// The findings of a session whose bus has no bluetoothd (the bus checks are skipped).
    static func diagnose(_ options: DoctorOptions) async throws -> [DoctorFinding] {
        let bus = try TestBus()
        defer { bus.stop() }
        let session = BluetoothSession(bus: .address(bus.address))
        defer { session.close() }
        return try await session.diagnose(timeout: .seconds(5), options: options).value
    }

    @Test("rfkill: soft and hard blocks of bluetooth switches are problems; other types are ignored")
    func rfkill() async throws {
        let dir = try Self.directory([
            "rfkill0/type": "bluetooth\n", "rfkill0/name": "hci0\n", "rfkill0/soft": "1\n", "rfkill0/hard": "0\n",
            "rfkill1/type": "wlan\n", "rfkill1/name": "phy0\n", "rfkill1/soft": "1\n", "rfkill1/hard": "1\n",
            "rfkill2/type": "bluetooth\n", "rfkill2/name": "hci1\n", "rfkill2/soft": "0\n", "rfkill2/hard": "1\n",
            "rfkill3/type": "bluetooth\n", "rfkill3/name": "hci2\n", "rfkill3/soft": "0\n", "rfkill3/hard": "0\n",
        ])
        defer { try? FileManager.default.removeItem(at: dir) }
        let findings = try await Self.diagnose(DoctorOptions(rfkillRoot: dir.path, mainConf: nil, packageDatabase: nil))
            .filter { $0.check.hasPrefix("rfkill") }
        #expect(findings.map(\.check) == ["rfkill hci0", "rfkill hci1", "rfkill hci2"])
        #expect(findings.map(\.status) == [.problem, .problem, .ok])
        #expect(findings[0].fix == "rfkill unblock bluetooth")
        #expect(findings[1].cause.contains("hard-blocked"))
    }

    @Test("rfkill: no /sys/class/rfkill is unknown, not a problem")
    func rfkillMissing() async throws {
        let f = try #require(try await Self.diagnose(DoctorOptions(rfkillRoot: "/nonexistent/rfkill", mainConf: nil, packageDatabase: nil))
            .first { $0.check == "rfkill" })
        #expect(f.status == .info)
        #expect(f.cause.hasPrefix("unknown"))
    }

    @Test("main.conf: the settings that matter are reported; bredr-only is a problem, always-repair a warning")
    func mainConf() async throws {
        let dir = try Self.directory(["main.conf": """
            # bluetoothd configuration
            [General]
            #Experimental = false
            Experimental = true
            ControllerMode = bredr
            JustWorksRepairing = always
            Name = test ; not one that matters

            [GATT]
            Cache = no
            Channels = 3
            """])
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("main.conf").path
        let findings = try await Self.diagnose(DoctorOptions(rfkillRoot: nil, mainConf: path, packageDatabase: nil))
            .filter { $0.check.hasPrefix("main.conf") }
        #expect(findings.first?.cause == "\(path): Experimental = true, Cache = no, JustWorksRepairing = always, ControllerMode = bredr, Channels = 3")
        let byCheck = Dictionary(uniqueKeysWithValues: findings.map { ($0.check, $0.status) })
        #expect(byCheck["main.conf ControllerMode"] == .problem)
        #expect(byCheck["main.conf JustWorksRepairing"] == .warning)
        #expect(byCheck["main.conf Cache"] == .info)
        #expect(byCheck["main.conf Channels"] == .info)
        // bluetoothd was not reached: nothing says whether Experimental took effect.
        #expect(byCheck["main.conf Experimental"] == nil)
    }

    @Test("main.conf absent: defaults, info")
    func mainConfMissing() async throws {
        let f = try #require(try await Self.diagnose(DoctorOptions(rfkillRoot: nil, mainConf: "/nonexistent/main.conf", packageDatabase: nil))
            .first { $0.check == "main.conf" })
        #expect(f.status == .info)
        #expect(f.cause.contains("defaults"))
    }

    @Test("version: the installed bluez package in dpkg's database, else unknown")
    func version() async throws {
        let dir = try Self.directory(["status": """
            Package: bluez-obexd
            Status: install ok installed
            Version: 5.66-1

            Package: bluez
            Status: install ok installed
            Priority: optional
            Version: 5.66-1+deb12u1

            """])
        defer { try? FileManager.default.removeItem(at: dir) }
        let found = try #require(try await Self.diagnose(DoctorOptions(rfkillRoot: nil, mainConf: nil, packageDatabase: dir.appendingPathComponent("status").path))
            .first { $0.check == "version" })
        #expect(found.cause.hasPrefix("bluez package 5.66-1+deb12u1"))
        let unknown = try #require(try await Self.diagnose(DoctorOptions(rfkillRoot: nil, mainConf: nil, packageDatabase: "/nonexistent/status"))
            .first { $0.check == "version" })
        #expect(unknown.cause.contains("no installed bluez package in /nonexistent/status"))
    }

    @Test("a finding encodes as JSON with check, status, cause and fix, and the table has one row per finding")
    func output() throws {
        let findings = [DoctorFinding(check: "rfkill hci0", status: .problem, cause: "rfkill0 is soft-blocked", fix: "rfkill unblock bluetooth"),
                        DoctorFinding(check: "version", status: .info, cause: "unknown")]
        let data = try JSONEncoder().encode(findings[0])
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: String])
        #expect(object == ["check": "rfkill hci0", "status": "problem", "cause": "rfkill0 is soft-blocked", "fix": "rfkill unblock bluetooth"])
        #expect(try JSONDecoder().decode(DoctorFinding.self, from: data) == findings[0])
        let table = DoctorFinding.table(findings).split(separator: "\n")
        #expect(table.count == 3)
        #expect(table[1] == "rfkill hci0  problem  rfkill0 is soft-blocked → rfkill unblock bluetooth")
        #expect(table[2] == "version      info     unknown")
        #expect(DoctorFinding.Status.problem > .warning && DoctorFinding.Status.warning > .info && DoctorFinding.Status.info > .ok)
    }
}
