// CleanSpawn: start a child process with a clean signal state.
internal import CSpawn
import Foundation
import Glibc

/// Starts child processes with an empty signal mask and default signal handlers, which die
/// with this process.
///
/// A child inherits its parent's blocked-signal mask. Test runners (Swift Testing among them)
/// and Dispatch worker threads block signals, so a daemon started with Foundation's `Process`
/// from such a thread ignores `SIGTERM` and cannot be stopped. The child therefore empties its
/// mask and sets every signal to its default action before exec (what `posix_spawn`'s
/// `SETSIGMASK` and `SETSIGDEF` did).
///
/// It also asks for `SIGKILL` when this process dies (`PR_SET_PDEATHSIG`), even by `SIGKILL`,
/// so no daemon outlives a crashed or killed test run. `posix_spawn` cannot set that, so the
/// child is forked (only async-signal-safe calls before exec), and always on one thread that
/// lives as long as the process: the kernel sends the signal when the forking *thread* exits.
/// ``BusDaemon`` uses it; so can tests that start programs.
///
/// The caller owns the child: it must reap it with `waitpid`.
public enum CleanSpawn {
    /// What a child's file descriptor is connected to.
    public enum Redirection: Sendable {
        /// A copy of this descriptor of the parent.
        case descriptor(Int32)
        /// `/dev/null`, opened for reading (`false`) or writing (`true`).
        case null(write: Bool)
    }

    /// A failed spawn: the program and the error number.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// The program that did not start.
        public let path: String
        /// The error number of the failed fork, redirection or exec.
        public let code: Int32
        public var description: String { "cannot start \(path): \(String(cString: strerror(code)))" }
    }

    /// Starts `path` with `arguments` (not including the program name) and returns its pid.
    ///
    /// - Parameters:
    ///   - path: the executable's path.
    ///   - arguments: the arguments after the program name.
    ///   - environment: the child's environment; `nil` passes the parent's.
    ///   - redirections: child descriptor → what it is connected to; descriptors not named are
    ///     inherited unless they are close-on-exec.
    public static func spawn(_ path: String, arguments: [String], environment: [String: String]? = nil,
                             redirections: [Int32: Redirection] = [:]) throws(Failure) -> pid_t {
        let ordered = redirections.sorted(by: { $0.key < $1.key })
        let targets = ordered.map(\.key)
        let sources: [Int32] = ordered.map {
            switch $0.value {
            case .descriptor(let fd): fd
            case .null(let write): write ? CSPAWN_NULL_WRITE : CSPAWN_NULL_READ
            }
        }
        let argv = [path] + arguments
        let envp = environment.map { $0.map { "\($0.key)=\($0.value)" } }
        let (child, code) = SpawnerThread.shared.run { () -> (Int32, Int32) in
            var cargs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
            defer { for p in cargs { free(p) } }
            var error: Int32 = 0
            let pid: Int32
            if let envp {
                var cenv: [UnsafeMutablePointer<CChar>?] = envp.map { strdup($0) } + [nil]
                defer { for p in cenv { free(p) } }
                pid = cspawn_pdeathsig(path, &cargs, &cenv, targets, sources, Int32(targets.count), &error)
            } else {
                pid = cspawn_pdeathsig(path, &cargs, environ, targets, sources, Int32(targets.count), &error)
            }
            return (pid, error)
        }
        guard child > 0 else { throw Failure(path: path, code: code) }
        return pid_t(child)
    }
}
