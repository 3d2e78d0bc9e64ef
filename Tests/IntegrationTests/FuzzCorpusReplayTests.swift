// FuzzCorpusReplayTests: the hostile-caller fuzz target's committed corpus, replayed by its
// normal (non-libFuzzer) build in every test run: a crash or a broken invariant fails here.

import Foundation
import Glibc
import Testing
import TestSupport

@Suite("Fuzz corpus replay")
struct FuzzCorpusReplayTests {
    static let corpusRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz/corpus").path

    @Test("every ExportedObjectFuzzer corpus input gets its reply and leaves refused calls without effect")
    func exportedObjectCorpus() throws {
        let corpus = Self.corpusRoot + "/ExportedObjectFuzzer"
        let inputs = try FileManager.default.contentsOfDirectory(atPath: corpus).count
        #expect(inputs > 0)
        let (status, output) = try Self.run(ExampleProcess.binDirectory + "/ExportedObjectFuzzer", [corpus])
        #expect(status == 0, "ExportedObjectFuzzer exited with status \(status): \(output)")
        #expect(output.contains("ExportedObjectFuzzer: replayed \(inputs) input(s), no crash"), "\(output)")
    }

    /// Runs `path` to its end; returns its wait status and its stdout and stderr together.
    static func run(_ path: String, _ arguments: [String]) throws -> (Int32, String) {
        guard access(path, X_OK) == 0 else { throw ProcessTestError("\(path) is not built (swift build --build-tests builds it)") }
        var out: [Int32] = [-1, -1]
        // A close-on-exec pair made atomically: a daemon another test spawns meanwhile must not
        // inherit the write end (pipe + fcntl leaves a window).
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &out) == 0 else {
            throw ProcessTestError("socketpair: errno \(errno)")
        }
        let child: pid_t
        do {
            child = try CleanSpawn.spawn(path, arguments: arguments,
                                         redirections: [0: .null(write: false), 1: .descriptor(out[1]), 2: .descriptor(out[1])])
        } catch {
            close(out[0]); close(out[1])
            throw ProcessTestError("\(error)")
        }
        close(out[1])
        var text = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(out[0], &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            text.append(contentsOf: buffer[0..<n])
        }
        close(out[0])
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0 && errno == EINTR {}
        return (status, String(decoding: text, as: UTF8.self))
    }
}
