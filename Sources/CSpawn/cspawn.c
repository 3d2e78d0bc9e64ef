// cspawn: fork + exec with a parent-death signal (see include/cspawn.h).
#define _GNU_SOURCE
#include "cspawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

int cspawn_pdeathsig(const char *path, char *const argv[], char *const envp[],
                       const int *targets, const int *sources, int count, int *error) {
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) { *error = errno; return -1; }
    pid_t parent = getpid();
    pid_t child = fork();
    if (child < 0) {
        *error = errno;
        close(report[0]);
        close(report[1]);
        return -1;
    }
    if (child == 0) {
        int failure = 0;
        sigset_t empty;
        sigemptyset(&empty);
        struct sigaction dfl;
        dfl.sa_handler = SIG_DFL;
        dfl.sa_flags = 0;
        sigemptyset(&dfl.sa_mask);
        for (int sig = 1; sig < NSIG; sig++) {
            if (sig != SIGKILL && sig != SIGSTOP) (void)sigaction(sig, &dfl, NULL);
        }
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) failure = errno;
        // The parent may have died before prctl: then nobody would send the signal.
        if (failure == 0 && getppid() != parent) _exit(127);
        for (int i = 0; failure == 0 && i < count; i++) {
            int source = sources[i];
            int opened = -1;
            if (source == CSPAWN_NULL_READ || source == CSPAWN_NULL_WRITE) {
                opened = open("/dev/null", source == CSPAWN_NULL_READ ? O_RDONLY : O_WRONLY);
                if (opened < 0) { failure = errno; break; }
                source = opened;
            }
            if (source == targets[i]) {
                if (fcntl(source, F_SETFD, 0) != 0) failure = errno;
            } else if (dup2(source, targets[i]) < 0) {
                failure = errno;
            }
            if (opened >= 0 && opened != targets[i]) close(opened);
        }
        if (failure == 0) {
            sigprocmask(SIG_SETMASK, &empty, NULL);
            execve(path, argv, envp);
            failure = errno;
        }
        ssize_t ignored = write(report[1], &failure, sizeof failure);
        (void)ignored;
        _exit(127);
    }
    close(report[1]);
    int failure = 0;
    ssize_t n;
    do { n = read(report[0], &failure, sizeof failure); } while (n < 0 && errno == EINTR);
    close(report[0]);
    if (n == (ssize_t)sizeof failure) {
        int status;
        while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
        *error = failure;
        return -1;
    }
    return child;
}

int cspawn_pipe_cloexec(int fds[2]) {
    return pipe2(fds, O_CLOEXEC);
}

// pidfd_open's number is the same on every architecture (the unified table since Linux 5.3).
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

int cspawn_pidfd_open(int pid, unsigned int flags) {
    return (int)syscall(SYS_pidfd_open, pid, flags);
}
