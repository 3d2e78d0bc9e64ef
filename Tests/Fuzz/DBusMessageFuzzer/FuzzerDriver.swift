// FuzzerDriver: hands control to libFuzzer (`LLVMFuzzerRunDriver`) in a -sanitize=fuzzer build.
// SwiftPM links an executable's `main` to its own entry point, so libFuzzer's `main` is not
// used; ours passes the command line to libFuzzer's driver instead.
#if FUZZING
import Foundation

@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

enum FuzzerDriver {
    /// Runs libFuzzer with this process's arguments and `callback` as the target; returns its status.
    static func run(_ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt) -> CInt {
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        return LLVMFuzzerRunDriver(&argc, &argv, callback)
    }
}
#endif
