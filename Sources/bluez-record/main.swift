// bluez-record: records one process's org.bluez traffic into a BlueZScenario file.
import Dispatch
import Foundation

// MARK: - Entry

let options: RecordOptions
do {
    options = try RecordOptions.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("bluez-record: \(error)\n".utf8))
    exit(2)
}

// Ctrl-C / SIGTERM end the recording; the file is written and the command (if any) awaited.
let sources = StopSignals.install()

do {
    let status = try Recording(options).run()
    sources.forEach { $0.cancel() }
    exit(status)
} catch {
    FileHandle.standardError.write(Data("bluez-record: \(error)\n".utf8))
    exit(1)
}
