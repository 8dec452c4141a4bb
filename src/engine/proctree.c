/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * /proc/PID/stat and /proc/PID/task/TID/children. A process's parent is
 * fixed until it is orphaned (then it is the nearest child subreaper, or
 * init), so the children lists walked from a subreaper hold every process
 * below it. The lists come per thread: a child is listed under the thread
 * that forked it.
 */
#include "proctree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../basic/fileio.h"
#include "../basic/macro.h"
#include "../basic/time-util.h"

/* Calls fn for each child of every thread of pid (0: the caller), until fn
 * says stop. Each children file is read whole, however long (a job that
 * churns leaves thousands of zombies there, a line each): -ENOMEM when one
 * could not be, so the caller knows its walk may have missed some. */
int proctree_for_children(pid_t pid, proctree_child_fn fn, void *userdata) {
        char path[64];
        _cleanup_close_ int tfd = -1;
        DIR *d;
        struct dirent *de;
        pid_t self = getpid();
        int ret = 0;
        bool more = true;

        if (pid)
                snprintf(path, sizeof path, "/proc/%d/task", (int) pid);
        else
                snprintf(path, sizeof path, "/proc/self/task");
        tfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (tfd < 0)
                return 0;
        d = fdopendir(TAKE_FD(tfd));
        if (!d)
                return 0;
        while (more && (de = readdir(d))) {
                _cleanup_free_ char *buf = NULL;
                char name[300];
                if (de->d_name[0] < '0' || de->d_name[0] > '9')
                        continue;
                snprintf(name, sizeof name, "%s/children", de->d_name);
                if (read_file_at_alloc(dirfd(d), name, &buf, NULL) < 0) {
                        if (errno == ENOMEM)
                                ret = -ENOMEM;
                        continue;
                }
                for (char *p = buf; *p && more;) {
                        char *end;
                        long c = strtol(p, &end, 10);
                        if (end == p)
                                break;
                        more = fn((pid_t) c, pid ? pid : self, userdata);
                        p = end;
                }
        }
        closedir(d);
        return ret;
}

struct children_arrays {
        pid_t *list, *parent;
        size_t *n, max;
};

static bool push_child(pid_t child, pid_t parent, void *userdata) {
        struct children_arrays *a = userdata;
        if (*a->n >= a->max)
                return false;
        a->list[*a->n] = child;
        a->parent[*a->n] = parent;
        (*a->n)++;
        return true;
}

void proctree_children(pid_t pid, pid_t *list, pid_t *parent, size_t *n, size_t max) {
        struct children_arrays a = {list, parent, n, max};
        (void) proctree_for_children(pid, push_child, &a);
}

bool proctree_pidfd_ended(int pidfd) {
        struct pollfd p = {.fd = pidfd, .events = POLLIN};
        return poll(&p, 1, 0) == 1;
}

int proctree_pidfd_signal(int pidfd, int sig) {
        return syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0) < 0 ? negative_errno() : 0;
}

void proctree_wait_ended(const int *pidfds, size_t n, int timeout_ms) {
        uint64_t deadline = now_ns(CLOCK_MONOTONIC) + (uint64_t) timeout_ms * NSEC_PER_MSEC;

        for (size_t i = 0; i < n; i++)
                while (pidfds[i] >= 0 && !proctree_pidfd_ended(pidfds[i])) {
                        struct pollfd p = {.fd = pidfds[i], .events = POLLIN};
                        uint64_t now = now_ns(CLOCK_MONOTONIC);
                        if (now >= deadline)
                                return;
                        (void) poll(&p, 1, (int) ((deadline - now) / NSEC_PER_MSEC) + 1);
                }
}
