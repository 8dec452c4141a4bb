/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A copy of the caller that runs the caller's code (leash_job_fork) made by
 * glibc's fork() where a raw clone would not be safe.
 *
 * A fork copies one thread. glibc's fork() takes its own locks first (every
 * malloc arena's, stdio's list, the NSS data's) and runs the pthread_atfork
 * handlers, so that the child's copy of each is in a consistent state and
 * unlocked; CPython's os.fork relies on it (it calls fork() between its own
 * PyOS_BeforeFork/AfterFork hooks). A raw clone or clone3 does none of it:
 * where another thread of the caller was inside malloc at that instant, the
 * child's copy of that arena's lock stays held by a thread the child does
 * not have, and the child's first malloc from that arena (or free of a
 * block of it) blocks forever. Measured through libleash before this file:
 * 2 threads allocating 1-60 KiB blocks while the main thread forked jobs
 * whose child allocates, with one arena (M_ARENA_MAX 1): 9 of 200 calls hung
 * until their wall limit; a Python caller with 20 threads compiling regular
 * expressions in C (ctypes, the GIL released): 35 of 100 leash.limit calls.
 *
 * glibc's fork() takes those locks only when the process has more than one
 * thread (SINGLE_THREAD_P, which __libc_single_threaded reports): with one,
 * no other thread can hold one, and none can appear during the call, since
 * only the calling thread could make it. So a single-threaded caller keeps
 * clone3 (CLONE_INTO_CGROUP: the child is in its cgroup from its first
 * instruction; exit signal 0; a pidfd from the clone), and a multi-threaded
 * one gets fork():
 *   - not the job itself: an intermediate, a copy made under the locks,
 *     which has one thread and a whole heap, and so may clone3 the job
 *     with CLONE_INTO_CGROUP | CLONE_PARENT (libcfork_into): the job is in
 *     its cgroup from its first instruction and the caller's child, and the
 *     intermediate exits. Two copies of the caller instead of one; a move
 *     into the cgroup afterwards (writing cgroup.procs) costs more, as the
 *     cgroup core's write lock waits for an RCU grace period: a C caller
 *     with a thread, 90 rotated blocks of 10 forked calls, medians: clone3
 *     1.34 ms a call, the intermediate 2.81 ms, fork and move 4.27 ms;
 *   - where the kernel lacks CLONE_INTO_CGROUP (before 5.7), the child of
 *     fork() itself, which moves itself into the job's cgroup (spawn.c's
 *     child_setup, the first step) before it returns to the caller's code,
 *     the parent waiting for that setup. Only the atfork child handlers
 *     (the caller's own) run before the move. Without a cgroup (placement
 *     none) the job's holder is the fork's child (holder.c);
 *   - the pidfd comes from pidfd_open on the unreaped child;
 *   - the exit signal is SIGCHLD, as for any fork(): a caller whose other
 *     thread reaps every child (waitpid(-1)), or that ignores SIGCHLD, takes
 *     the child's status, and the job's report then has it exited with its
 *     status unknown (supervise.c's reap), as for an exec'd command, whose
 *     exit signal exec sets back to SIGCHLD anyway.
 * glibc has no fork that takes clone3's arguments (a fork_np with a cgroup
 * and an exit signal was proposed in 2023); when one exists, it is the way.
 */
#include "libcfork.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../basic/macro.h"

#if defined(__has_include)
#if __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h>
#define LIBCFORK_KNOWS_THREADS 1
#endif
#endif

bool libcfork_needed(void) {
#ifdef LIBCFORK_KNOWS_THREADS
        return !__libc_single_threaded;
#else
        return true; /* no way to tell: fork() is safe either way */
#endif
}

/* In the intermediate: clone3 the job into the cgroup as a child of the
 * caller, tell the caller its pid (or -errno) and exit. Returns in the job. */
static void intermediate(int cgroup_fd, int wfd) {
        struct clone_args args = {
                /* exit signal 0, as CLONE_PARENT asks: the job gets the
                 * intermediate's (SIGCHLD) */
                .flags = CLONE_PARENT | CLONE_INTO_CGROUP,
                .cgroup = (uint64_t) cgroup_fd,
        };
        long r = syscall(SYS_clone3, &args, sizeof args);
        ssize_t n _unused_;

        if (r == 0)
                return;
        if (r < 0)
                r = -errno;
        n = write(wfd, &r, sizeof r);
        _exit(0);
}

pid_t libcfork_into(int cgroup_fd, int *ret_pidfd) {
        _cleanup_close_ int rfd = -1, wfd = -1;
        sigset_t all, old;
        long got = 0;
        pid_t mid;
        ssize_t n;
        int p[2], e;

        if (pipe2(p, O_CLOEXEC) < 0)
                return -1;
        rfd = p[0];
        wfd = p[1];
        /* The intermediate is a copy of the caller with the caller's signal
         * handlers, in its process group: a signal to the group (^C) would
         * run one of them there (Python's writes to the caller's wakeup fd,
         * a second delivery as the caller sees it). It runs with every
         * signal blocked; the job gets the caller's mask back. */
        sigfillset(&all);
        (void) pthread_sigmask(SIG_SETMASK, &all, &old);
        mid = fork();
        if (mid == 0) {
                intermediate(cgroup_fd, wfd);
                (void) pthread_sigmask(SIG_SETMASK, &old, NULL);
                return 0; /* the job; its copies of the pipe close with this frame */
        }
        e = errno;
        (void) pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (mid < 0) {
                errno = e;
                return -1;
        }
        close(TAKE_FD(wfd));
        do
                n = read(rfd, &got, sizeof got);
        while (n < 0 && errno == EINTR);
        /* reaped here (a waitpid(-1) of the caller's may have been first) */
        (void) waitid(P_PID, (id_t) mid, &(siginfo_t){0}, WEXITED | __WALL);
        if (n != (ssize_t) sizeof got || got == 0) {
                errno = EIO;
                return -1;
        }
        if (got < 0) {
                errno = (int) -got;
                return -1;
        }
        /* the caller's child since its clone, and a zombie at worst: unless a
         * waitpid(-1) of the caller's took it (its exit signal is SIGCHLD)
         * and the pid was used again meanwhile, the pid is still its */
        *ret_pidfd = (int) syscall(SYS_pidfd_open, (pid_t) got, 0);
        if (*ret_pidfd < 0) {
                e = errno;
                (void) kill((pid_t) got, SIGKILL);
                (void) waitid(P_PID, (id_t) got, &(siginfo_t){0}, WEXITED | __WALL);
                errno = e;
                return -1;
        }
        return (pid_t) got;
}

pid_t libcfork(int *ret_pidfd) {
        pid_t pid = fork();

        if (pid <= 0)
                return pid;
        /* a zombie at worst: unless a waitpid(-1) of the caller's took it
         * (its exit signal is SIGCHLD) and the pid was used again meanwhile,
         * the pid still names our child */
        *ret_pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        if (*ret_pidfd < 0) {
                int e = errno;
                (void) kill(pid, SIGKILL);
                (void) waitpid(pid, NULL, 0);
                errno = e;
                return -1;
        }
        return pid;
}
