// CleanSpawn: start a child process with a clean signal state.
import Foundation
import Glibc

/// Starts child processes with an empty signal mask and default signal handlers.
///
/// A child inherits its parent's blocked-signal mask. Test runners (Swift Testing among them)
/// and Dispatch worker threads block signals, so a daemon started with Foundation's `Process`
/// from such a thread ignores `SIGTERM` and cannot be stopped. `posix_spawn` with
/// `POSIX_SPAWN_SETSIGMASK` (empty mask) and `POSIX_SPAWN_SETSIGDEF` (every signal to its
/// default action) avoids that. ``BusDaemon`` uses it; so can tests that start programs.
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

    /// A failed spawn: the program and `posix_spawn`'s error number.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// The program that did not start.
        public let path: String
        /// The error number `posix_spawn` returned.
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
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (target, source) in redirections.sorted(by: { $0.key < $1.key }) {
            switch source {
            case .descriptor(let fd): posix_spawn_file_actions_adddup2(&actions, fd, target)
            case .null(let write): posix_spawn_file_actions_addopen(&actions, target, "/dev/null", write ? O_WRONLY : O_RDONLY, 0)
            }
        }
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attr, &empty)
        posix_spawnattr_setsigdefault(&attr, &all)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var cargs: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for p in cargs { free(p) } }
        var child: pid_t = 0
        let rc: Int32
        if let environment {
            var cenv: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
            defer { for p in cenv { free(p) } }
            rc = posix_spawn(&child, path, &actions, &attr, &cargs, &cenv)
        } else {
            rc = posix_spawn(&child, path, &actions, &attr, &cargs, environ)
        }
        guard rc == 0 else { throw Failure(path: path, code: rc) }
        return child
    }
}
