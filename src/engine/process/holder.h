/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The holder: a child subreaper between a library caller and a job without
 * a cgroup. See holder.c.
 */
#pragma once

#include <stdbool.h>
#include <sys/resource.h>
#include <sys/types.h>

struct holder {
        pid_t pid; /* 0: none */
        int pidfd, sock;
};
#define HOLDER_INIT \
        { .pid = 0, .pidfd = -1, .sock = -1 }

/* Makes the holder and, from it, the job's main process. Returns 0 in the
 * caller (h filled, the main process's pid and a pidfd of it in ret_*), 1 in
 * the main process (its parent is the holder: ret_parent), -errno when
 * nothing was made. The holder itself never returns. The caller's two fds of
 * it are marked held (heldfd.c; lock_held: the caller holds the lock).
 * libc_fork: the holder is made by glibc's fork() (a main process that runs
 * the caller's code, libcfork.c), else by a raw clone with exit signal 0. */
int holder_fork(struct holder *h, bool lock_held, bool libc_fork, pid_t *ret_pid, int *ret_pidfd, pid_t *ret_parent);
/* The main process's wait status and rusage, as the holder reaped it: 1
 * got, 0 not (yet, within timeout_ms), -errno. */
int holder_main_status(struct holder *h, int timeout_ms, int *ret_status, struct rusage *ret_ru);
/* Once the job's processes are gone: the holder exits (it has no child
 * left), is reaped (bounded wait; killed past it) and closed. ret_ru (may
 * be NULL): its rusage, which holds every process of the job it reaped. */
void holder_release(struct holder *h, struct rusage *ret_ru);
