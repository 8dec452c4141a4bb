/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The holder (issue 23). Without a cgroup the job is its process tree, and a
 * tree is only whole below a child subreaper: an orphan goes to the nearest
 * one above it, else to init, out of sight. `leash run` is one itself. A
 * library caller (a Python interpreter, a scheduler daemon) is not, and
 * making it one would change its process-wide state and hand it every
 * orphan of every job and of its own children, with no way to tell whose.
 * So for such a caller the job gets a holder: a process of leash's between
 * the caller and the main process, which
 *   - is a child subreaper: every process of the job stays below it, double
 *     forks and setsid included, for tree.c to walk, stop and kill;
 *   - reaps: the main process first (its wait status and rusage go back to
 *     the caller over a socket, since the caller cannot wait for a
 *     grandchild), then every orphan, whose CPU time thus adds up in the
 *     holder's own cutime/cstime;
 *   - exits when it has no child left, and dies with the caller
 *     (PR_SET_PDEATHSIG), as the main process dies with it.
 * It runs only async-signal-safe calls (the caller may have threads) and
 * closes every descriptor it inherited but its socket, so that it holds no
 * pipe end of the caller's open. The main process's pid reaches the caller
 * before the holder may reap it: the holder waits for the caller's answer,
 * sent once the caller holds a pidfd of it, so the pid cannot be recycled
 * in between.
 */
#include "holder.h"
#include "../heldfd.h"
#include "libcfork.h"

#include <errno.h>
#include <linux/sched.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../basic/macro.h"

static void reap_pidfd(int pidfd, struct rusage *ret_ru) {
        siginfo_t si;
        (void) syscall(SYS_waitid, P_PIDFD, pidfd, &si, WEXITED | __WALL, ret_ru);
}

struct holder_record {
        int status;
        struct rusage ru;
};

static _Noreturn void holder_main(int sock, pid_t main_pid) {
        struct holder_record rec;
        char go;

        if (close_range(3, (unsigned) sock - 1, 0) < 0 || close_range((unsigned) sock + 1, ~0U, 0) < 0)
                _exit(1);
        if (write(sock, &main_pid, sizeof main_pid) != sizeof main_pid || read(sock, &go, 1) != 1)
                _exit(1);
        memset(&rec, 0, sizeof rec);
        while (wait4(main_pid, &rec.status, __WALL, &rec.ru) < 0)
                if (errno != EINTR)
                        _exit(1);
        if (write(sock, &rec, sizeof rec) != sizeof rec)
                _exit(1);
        for (;;) /* the orphans, until none is left */
                if (wait4(-1, NULL, __WALL, NULL) < 0 && errno != EINTR)
                        _exit(0);
}

/* In the holder, right after it was made, every signal blocked (holder_fork).
 * Returns 1 in the main process, with the caller's mask (mask) back. */
static int holder_child(int sock, pid_t caller, const sigset_t *mask, pid_t *ret_parent) {
        pid_t self = getpid(), pid;
        /* Made by glibc's fork, the holder ran undumpable.c's atfork handler,
         * which gave it the caller's state from before its jobs: the
         * function's, not the holder's. The holder stays undumpable, as the
         * caller is (its job must not rewrite what it reaps); the main
         * process gets that state back. */
        int dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);

        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != caller || prctl(PR_SET_CHILD_SUBREAPER, 1) < 0 ||
            prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
                _exit(1);
        /* a raw fork of a one-threaded holder: its malloc state is whole (a
         * caller with threads had the holder made by glibc's fork, whose
         * atfork handlers ran in it), and no handler runs twice */
        pid = (pid_t) syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0);
        if (pid < 0)
                _exit(1);
        if (pid == 0) {
                close(sock);
                (void) sigprocmask(SIG_SETMASK, mask, NULL);
                if (dumpable == 1)
                        (void) prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
                *ret_parent = self;
                return 1;
        }
        holder_main(sock, pid);
}

int holder_fork(struct holder *h, bool lock_held, bool libc_fork, pid_t *ret_pid, int *ret_pidfd, pid_t *ret_parent) {
        _cleanup_close_ int s0 = -1, s1 = -1, hfd = -1, mfd = -1;
        pid_t caller = getpid(), hpid, mpid;
        sigset_t all, old;
        int sv[2], fork_errno;

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return negative_errno();
        s0 = sv[0];
        s1 = sv[1];
        /* exit signal 0: the caller's waitpid(-1) never reaps it; but a main
         * process that runs the caller's code, copied from a caller with
         * threads, needs glibc's fork() for its first copy (libcfork.c).
         * The holder is a copy of the caller, with its signal handlers, in its
         * process group: it runs with every signal blocked, so that a signal
         * to the group (^C) runs none of the caller's handlers there, nor
         * ends it (a default action) while its job runs on below it. */
        sigfillset(&all);
        (void) pthread_sigmask(SIG_SETMASK, &all, &old);
        if (libc_fork)
                hpid = libcfork(&hfd);
        else
                hpid = (pid_t) syscall(SYS_clone, CLONE_PIDFD, 0, &hfd, 0, 0);
        if (hpid == 0) {
                close(TAKE_FD(s0));
                return holder_child(TAKE_FD(s1), caller, &old, ret_parent);
        }
        fork_errno = errno;
        (void) pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (hpid < 0)
                return -fork_errno;
        close(TAKE_FD(s1));
        if (read(s0, &mpid, sizeof mpid) != sizeof mpid || mpid <= 0) {
                (void) syscall(SYS_pidfd_send_signal, hfd, SIGKILL, NULL, 0);
                reap_pidfd(hfd, NULL);
                return -ECHILD;
        }
        mfd = (int) syscall(SYS_pidfd_open, mpid, 0);
        if (mfd < 0 || write(s0, "g", 1) != 1) {
                int e = mfd < 0 ? negative_errno() : -EPIPE;
                (void) syscall(SYS_pidfd_send_signal, hfd, SIGKILL, NULL, 0);
                reap_pidfd(hfd, NULL);
                return e;
        }
        h->pid = hpid;
        h->pidfd = TAKE_FD(hfd);
        h->sock = TAKE_FD(s0);
        /* the caller keeps both for the job's life: marked, so that a
         * leash_job_fork() in another thread does not hand them to its
         * function (heldfd.c); unmarked only where memory ran out */
        if (!lock_held)
                heldfd_lock();
        (void) heldfd_mark_locked(h->pidfd);
        (void) heldfd_mark_locked(h->sock);
        if (!lock_held)
                heldfd_unlock();
        *ret_pid = mpid;
        *ret_pidfd = TAKE_FD(mfd);
        return 0;
}

int holder_main_status(struct holder *h, int timeout_ms, int *ret_status, struct rusage *ret_ru) {
        struct pollfd p = {.fd = h->sock, .events = POLLIN};
        struct holder_record rec;
        ssize_t n;

        if (h->sock < 0)
                return -EBADF;
        if (poll(&p, 1, timeout_ms) <= 0)
                return 0;
        do
                n = read(h->sock, &rec, sizeof rec);
        while (n < 0 && errno == EINTR);
        if (n != (ssize_t) sizeof rec)
                return -EIO;
        *ret_status = rec.status;
        *ret_ru = rec.ru;
        return 1;
}

void holder_release(struct holder *h, struct rusage *ret_ru) {
        struct pollfd p = {.fd = h->pidfd, .events = POLLIN};

        if (ret_ru)
                memset(ret_ru, 0, sizeof *ret_ru);
        if (h->pid <= 0)
                return;
        if (poll(&p, 1, 2000) <= 0) /* a child of the job it could not see go: not ours to wait for */
                (void) syscall(SYS_pidfd_send_signal, h->pidfd, SIGKILL, NULL, 0);
        reap_pidfd(h->pidfd, ret_ru);
        heldfd_forget(h->pidfd);
        close(h->pidfd);
        if (h->sock >= 0) {
                heldfd_forget(h->sock);
                close(h->sock);
        }
        *h = (struct holder) HOLDER_INIT;
}
