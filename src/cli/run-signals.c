/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `leash run`'s signals, for run.c and for its route through the resident
 * launcher (remote.c).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "../basic/macro.h"
#include "cli.h"

/* Every signal that would end leash and that someone else sends it (Ctrl-C,
 * a hangup, a scheduler's SIGTERM, an outer leash's soft signal: SIGXCPU by
 * default, any catchable one by -s) is blocked before the job cgroup exists
 * (a signal in between would otherwise kill leash and leak it) and read from
 * a signalfd: the job gets what leash got, then SIGKILL after the grace, and
 * leash writes its report. Not SIGPIPE and SIGXFSZ, which leash's own writes
 * raise (blocked, the write fails instead), nor the ones a fault raises. */
int cli_guard_signals(int *ret_fd, sigset_t *ret_old) {
        static const int sigs[] = {SIGINT,  SIGTERM, SIGHUP, SIGQUIT, SIGXCPU,   SIGUSR1,  SIGUSR2,
                                   SIGALRM, SIGPROF, SIGPWR, SIGIO,   SIGSTKFLT, SIGVTALRM};
        sigset_t block;
        int fd;

        sigemptyset(&block);
        for (size_t i = 0; i < ELEMENTSOF(sigs); i++)
                sigaddset(&block, sigs[i]);
        for (int s = SIGRTMIN; s <= SIGRTMAX; s++)
                sigaddset(&block, s);
        if (sigprocmask(SIG_BLOCK, &block, ret_old) < 0)
                return negative_errno();
        fd = signalfd(-1, &block, SFD_CLOEXEC | SFD_NONBLOCK);
        if (fd < 0) {
                int r = negative_errno();
                (void) sigprocmask(SIG_SETMASK, ret_old, NULL);
                return r;
        }
        *ret_fd = fd;
        return 0;
}

/* Dies of the signal that interrupted leash: the caller must see leash was
 * interrupted. */
void cli_reraise(int sig) {
        sigset_t set;

        fflush(NULL);
        signal(sig, SIG_DFL);
        sigemptyset(&set);
        sigaddset(&set, sig);
        sigprocmask(SIG_UNBLOCK, &set, NULL);
        raise(sig);
}
