/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sentinel (issue 40). A user in a login session has the user manager
 * move leash out of the session's scope into its shared unit's leaf, so the
 * end of the session (loginctl terminate-session, a logout under
 * KillUserProcesses=yes) signals nothing of leash's while the user manager
 * lives on (another session, lingering), and the job ran to its end. So
 * before the move leash leaves a process of its own in the scope: the stop
 * of the scope signals it (SIGTERM, then SIGHUP), and it passes a SIGTERM on
 * to leash, which ends its jobs through the ladder as on its own SIGTERM.
 * It is a grandchild (its parent exits at once), so nobody but init reaps
 * it and the caller's own waits never see it. A caller that is a child
 * subreaper (`leash run`) is none while that parent exits: it would adopt
 * the sentinel, and its job's escape walk (escape.c) would signal it as a
 * process that left the job cgroup (a SIGTERM it passes back on: a second
 * interrupt, no more grace) and SIGKILL it at the job's end. It runs in a
 * session of its own, so that a signal to leash's process group (Ctrl-C, a
 * shell's kill -TERM -PGID) reaches leash once, not again passed on by the
 * sentinel. It closes every descriptor it inherited but a pidfd of the
 * caller, and exits when that polls readable (the caller is gone) or once it
 * has had a signal. It passes none on to a caller still in its cgroup (the
 * move refused, and no scope of leash's own either): the stop signals that
 * caller itself, and a second SIGTERM would take its jobs' grace away. It runs only async-signal-safe calls (the caller
 * may have threads), and starts with both signals blocked so that none is
 * lost or kills it before its signalfd.
 */
#include "sentinel.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../basic/macro.h"

/* The cgroup2 path in a /proc/PID/cgroup (its "0::" line), into buf; NULL
 * if it cannot be read. Async-signal-safe calls only. */
static const char *cgroup_of(const char *file, char *buf, size_t size) {
        ssize_t n = 0, k;
        char *p, *end;
        int fd;

        fd = open(file, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return NULL;
        while ((size_t) n < size - 1 && (k = read(fd, buf + n, size - 1 - (size_t) n)) > 0)
                n += k;
        close(fd);
        buf[n] = '\0';
        for (p = buf; *p; p = end + 1) {
                end = strchr(p, '\n');
                if (!end)
                        return NULL; /* a line cut short */
                if (strncmp(p, "0::", 3) == 0) {
                        *end = '\0';
                        return p + 3;
                }
        }
        return NULL;
}

/* Whether the caller is in this process's cgroup or below it: then the stop
 * that signalled this process signalled the caller too (its move was refused
 * and it got no scope of its own either), and a SIGTERM passed on would be a
 * second interrupt to it, which ends its jobs without their grace. */
static bool caller_within(pid_t caller) {
        char file[32] = "/proc/", digits[16], mine[4096], its[4096];
        const char *m, *c;
        size_t n = 0, len = strlen(file), ml;

        do
                digits[n++] = (char) ('0' + caller % 10);
        while ((caller /= 10) > 0);
        while (n > 0)
                file[len++] = digits[--n];
        memcpy(file + len, "/cgroup", sizeof "/cgroup");
        m = cgroup_of("/proc/self/cgroup", mine, sizeof mine);
        c = cgroup_of(file, its, sizeof its);
        if (!m || !c)
                return false;
        ml = strlen(m);
        if (strcmp(m, "/") == 0)
                return true;
        return strncmp(c, m, ml) == 0 && (c[ml] == '\0' || c[ml] == '/');
}

static _Noreturn void sentinel_main(int pidfd, pid_t caller, const sigset_t *stop) {
        struct pollfd pfd[2] = {{.fd = pidfd, .events = POLLIN}, {.fd = -1, .events = POLLIN}};

        if (close_range(0, (unsigned) pidfd - 1, 0) < 0 || close_range((unsigned) pidfd + 1, ~0U, 0) < 0)
                _exit(1);
        /* never a group leader (a new pid): setsid cannot fail */
        (void) setsid();
        pfd[1].fd = signalfd(-1, stop, SFD_CLOEXEC);
        if (pfd[1].fd < 0)
                _exit(1);
        while (poll(pfd, 2, -1) < 0)
                if (errno != EINTR)
                        _exit(1);
        if ((pfd[1].revents & POLLIN) && !caller_within(caller))
                (void) syscall(SYS_pidfd_send_signal, pidfd, SIGTERM, NULL, 0);
        _exit(0);
}

int sentinel_start(void) {
        sigset_t stop, old;
        pid_t pid, self = getpid();
        int pidfd, status, reaper = 0, r = 0;

        pidfd = (int) syscall(SYS_pidfd_open, self, 0);
        if (pidfd < 0)
                return -errno;
        sigemptyset(&stop);
        sigaddset(&stop, SIGTERM);
        sigaddset(&stop, SIGHUP);
        pthread_sigmask(SIG_BLOCK, &stop, &old);
        if (prctl(PR_GET_CHILD_SUBREAPER, &reaper) == 0 && reaper)
                (void) prctl(PR_SET_CHILD_SUBREAPER, 0);
        /* raw clones: the child only clones and exits, the grandchild runs
         * async-signal-safe calls only; no exit signal for the child */
        pid = (pid_t) syscall(SYS_clone, 0, 0, NULL, NULL, 0);
        if (pid == 0) {
                if ((pid_t) syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0) == 0)
                        sentinel_main(pidfd, self, &stop);
                _exit(0);
        }
        if (pid < 0)
                r = -errno;
        else
                while (waitpid(pid, &status, __WALL) < 0 && errno == EINTR)
                        ;
        if (reaper)
                (void) prctl(PR_SET_CHILD_SUBREAPER, 1);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        close(pidfd);
        return r;
}
