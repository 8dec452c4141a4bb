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
 * has passed a signal on. It runs only async-signal-safe calls (the caller
 * may have threads), and starts with both signals blocked so that none is
 * lost or kills it before its signalfd.
 */
#include "sentinel.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../basic/macro.h"

static _Noreturn void sentinel_main(int pidfd, const sigset_t *stop) {
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
        if (pfd[1].revents & POLLIN)
                (void) syscall(SYS_pidfd_send_signal, pidfd, SIGTERM, NULL, 0);
        _exit(0);
}

int sentinel_start(void) {
        sigset_t stop, old;
        pid_t pid;
        int pidfd, status, reaper = 0, r = 0;

        pidfd = (int) syscall(SYS_pidfd_open, getpid(), 0);
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
                        sentinel_main(pidfd, &stop);
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
