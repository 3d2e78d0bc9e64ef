// FuzzerDriver: the entry point every fuzz target shares. In a -sanitize=fuzzer build (-DFUZZING)
// it hands control to libFuzzer (`LLVMFuzzerRunDriver`): SwiftPM links an executable's `main` to
// its own entry point, so libFuzzer's `main` is not used and ours passes the command line on.
// Otherwise it replays the corpus files named on the command line.
import Foundation

#if FUZZING
@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt
#endif

/// Runs a fuzz target: libFuzzer's driver, or a corpus replay.
public enum FuzzerDriver {
    /// With libFuzzer (-DFUZZING): runs libFuzzer with this process's arguments and `target` as
    /// the fuzz function, and exits with its status. Without: runs `replay` on every file named in
    /// `arguments` (directories: each file inside), prints "`name`: replayed N input(s), no crash"
    /// and returns.
    public static func run(
        name: String, arguments: [String],
        target: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt, replay: (Data) -> Void
    ) {
        #if FUZZING
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, target))
        #else
        let replayed = CorpusReplay.run(arguments: arguments, replay)
        print("\(name): replayed \(replayed) input(s), no crash")
        #endif
    }
}
