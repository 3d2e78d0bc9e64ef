// fork + exec with a parent-death signal: what posix_spawn cannot do; and pidfd_open.
//
// The child, between fork and exec, only makes async-signal-safe calls: it empties its signal
// mask, restores every signal's default action (test runners block signals on their threads,
// and a child inherits both), asks the kernel for SIGKILL when its parent dies
// (PR_SET_PDEATHSIG), applies the descriptor redirections in order, then execs. An exec failure
// travels back to the parent as the errno on a close-on-exec pipe.
#ifndef CSPAWN_H
#define CSPAWN_H

/// A redirection source meaning `/dev/null` opened for reading.
#define CSPAWN_NULL_READ (-1)
/// A redirection source meaning `/dev/null` opened for writing.
#define CSPAWN_NULL_WRITE (-2)

/// Starts `path` with `argv` and `envp`; the child gets SIGKILL when the calling *thread* exits
/// (the kernel's notion of "parent" for PR_SET_PDEATHSIG), so call it from a thread that lives as
/// long as the process. `targets[i]` becomes a copy of `sources[i]` (or /dev/null), in order.
/// Returns the child's pid, or -1 with `*error` set (fork, pipe, redirection or exec failure).
int cspawn_pdeathsig(const char *path, char *const argv[], char *const envp[],
                       const int *targets, const int *sources, int count, int *error);

/// `pipe2(fds, O_CLOEXEC)`: a pipe whose ends no child inherits, created atomically (a `pipe`
/// followed by `fcntl` lets a concurrent fork inherit the ends in between). 0 or -1 (errno).
int cspawn_pipe_cloexec(int fds[2]);

/// `pidfd_open(pid, flags)` through `syscall`, so a glibc without the wrapper (before 2.36)
/// builds too: a descriptor that becomes readable when process `pid` exits, or -1 (errno). It
/// names that process even if its pid is later reused. (Defined in cspawn.c, not inline here:
/// this header includes no system header, so that importing CSpawn `internal` never shadows
/// Glibc's types, such as `pid_t`, in a public signature.)
int cspawn_pidfd_open(int pid, unsigned int flags);

#endif
