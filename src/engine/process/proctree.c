/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * /proc/PID/stat and /proc/PID/task/TID/children. A process's parent is
 * fixed until it is orphaned (then it is the nearest child subreaper, or
 * init), so the children lists walked from a subreaper hold every process
 * below it. The lists come per thread: a child is listed under the thread
 * that forked it.
 */
#include "proctree.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../basic/dirread.h"
#include "../../basic/fileio.h"
#include "../../basic/macro.h"
#include "../../basic/time-util.h"
#include "libcfork.h"

/* One children file (dirfd, name), whole: fn for each pid in it, parent
 * the process it lists them for; *more false once fn says stop. -ENOMEM
 * when a long list could not be read whole. */
static int for_listed(int dirfd, const char *name, pid_t parent, proctree_child_fn fn, void *userdata, bool *more) {
        _cleanup_free_ char *big = NULL;
        char small[2048], *buf = small;
        size_t len;
        /* the usual list fits on the stack; a long one is read again, whole */
        int r = read_file_at(dirfd, name, small, sizeof small, &len);

        if (r >= 0 && len >= sizeof small - 1) {
                r = read_file_at_alloc(dirfd, name, &big, NULL);
                buf = big;
        }
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        for (char *p = buf; *p && *more;) {
                char *end;
                long c = strtol(p, &end, 10);
                if (end == p)
                        break;
                *more = fn((pid_t) c, parent, userdata);
                p = end;
        }
        return 0;
}

/* Calls fn for each child of every thread of pid (0: the caller), until fn
 * says stop. Each children file is read whole, however long (a job that
 * churns leaves thousands of zombies there, a line each): -ENOMEM when one
 * could not be, so the caller knows its walk may have missed some. */
int proctree_for_children(pid_t pid, proctree_child_fn fn, void *userdata) {
        char path[64];
        _cleanup_close_ int tfd = -1;
        struct dirread d;
        const char *tid;
        pid_t self = pid ? pid : getpid();
        int ret = 0;
        bool more = true;

        /* the caller, one thread (glibc's __libc_single_threaded: it never
         * started another): that thread's list is the process's, read with
         * no walk of /proc/self/task (open, two getdents64, close) */
        if (!pid && !libcfork_needed())
                return for_listed(AT_FDCWD, "/proc/thread-self/children", self, fn, userdata, &more);
        if (pid)
                snprintf(path, sizeof path, "/proc/%d/task", (int) pid);
        else
                snprintf(path, sizeof path, "/proc/self/task");
        tfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (tfd < 0)
                return 0;
        /* getdents64 into a buffer on the stack: no DIR (a 32 KiB
         * allocation per walk, copy-on-write faults in a forked caller) */
        dirread_init(&d, tfd);
        while (more && (tid = dirread_next(&d, NULL))) {
                char name[300];
                if (tid[0] < '0' || tid[0] > '9')
                        continue;
                snprintf(name, sizeof name, "%s/children", tid);
                if (for_listed(tfd, name, self, fn, userdata, &more) == -ENOMEM)
                        ret = -ENOMEM;
        }
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

/* PIDFD_GET_INFO's first version (Linux 6.13, include/uapi/linux/pidfd.h),
 * declared here: the build's headers may be older than the kernel */
struct pidfd_info_v0 {
        uint64_t mask, cgroupid;
        uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
        int32_t exit_code;
};
#define PIDFD_INFO_CGROUPID_BIT (UINT64_C(1) << 2)
#define PIDFD_GET_INFO_V0 _IOWR(0xFF, 11, struct pidfd_info_v0)

int proctree_pidfd_cgroup_id(int pidfd, uint64_t *ret) {
        struct pidfd_info_v0 info = {.mask = PIDFD_INFO_CGROUPID_BIT};

        if (ioctl(pidfd, PIDFD_GET_INFO_V0, &info) < 0)
                return negative_errno();
        if (!(info.mask & PIDFD_INFO_CGROUPID_BIT))
                return -EOPNOTSUPP;
        *ret = info.cgroupid;
        return 0;
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
