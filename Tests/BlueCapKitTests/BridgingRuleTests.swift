// The bridging rule between futures and async/await: every BlueCapKit operation returns a
// Future or a FutureStream, none is `async` (async code awaits `.value`, `.values`, `.results`).
import Foundation
import Testing

@Suite("Bridging rule: no async twins in BlueCapKit")
struct BridgingRuleTests {
    /// Each public function or property declaration of the BlueCapKit sources, up to its body.
    static func publicDeclarations() throws -> [(file: String, text: String)] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/BlueCapKit")
        let files = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        var result: [(String, String)] = []
        for file in files {
            let source = try String(contentsOf: file, encoding: .utf8)
            if source.contains("get async") { result.append((file.lastPathComponent, "a property with `get async`")) }
            var rest = source[...]
            while let start = rest.range(of: "public func ") ?? rest.range(of: "public var ") {
                let tail = rest[start.lowerBound...]
                let end = tail.firstIndex(of: "{") ?? tail.endIndex
                result.append((file.lastPathComponent, String(tail[..<end])))
                rest = tail[end...].dropFirst()
            }
        }
        return result
    }

    /// Whether `async` appears outside parentheses (an async function, not an async closure parameter).
    static func isAsync(_ declaration: String) -> Bool {
        if declaration.contains("get async") { return true }
        var depth = 0
        var word = ""
        for c in declaration {
            if c == "(" { depth += 1 } else if c == ")" { depth -= 1 }
            if c.isLetter { word.append(c) } else {
                if word == "async" && depth == 0 { return true }
                word = ""
            }
        }
        return word == "async" && depth == 0
    }

    @Test("no public BlueCapKit function or property is async: each returns a Future or a FutureStream")
    func noAsyncOperations() throws {
        let declarations = try Self.publicDeclarations()
        #expect(declarations.count > 100, "the scan found the sources")
        let async = declarations.filter { Self.isAsync($0.text) }.map { "\($0.file): \($0.text)" }
        #expect(async.isEmpty, "async operations: \(async)")
        // The checker itself: an async function is caught, an async closure parameter is not.
        #expect(Self.isAsync("public func shutdown() async "))
        #expect(!Self.isAsync("public func onShutdown(_ cleanup: @escaping @Sendable () async -> Void) -> Int "))
    }
}
