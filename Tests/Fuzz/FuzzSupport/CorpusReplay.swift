// CorpusReplay: runs a fuzz function over files and directories (the non-libFuzzer build).
import Foundation

/// Replays corpus inputs through a fuzz function.
public enum CorpusReplay {
    /// Runs `body` on each file named in `arguments` (directories: each file inside, sorted).
    /// Returns the number of inputs run.
    public static func run(arguments: [String], _ body: (Data) -> Void) -> Int {
        var count = 0
        let fm = FileManager.default
        for argument in arguments {
            var isDirectory: ObjCBool = false
            guard fm.fileExists(atPath: argument, isDirectory: &isDirectory) else {
                FileHandle.standardError.write(Data("no such file: \(argument)\n".utf8))
                continue
            }
            let files = isDirectory.boolValue
                ? ((try? fm.contentsOfDirectory(atPath: argument)) ?? []).sorted().map { argument + "/" + $0 }
                : [argument]
            for file in files {
                guard let data = fm.contents(atPath: file) else { continue }
                body(data)
                count += 1
            }
        }
        return count
    }
}
