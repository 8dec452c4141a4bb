/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The stale-cgroup sweep, and the mark that makes it safe.
 *
 * A job cgroup outlives its leash when leash and its watchdog die together;
 * the next leash under the same parent removes it. The parent is shared with
 * things that are not leash's (systemd's user@1000.service under a user
 * slice, leash instances in another pid namespace, whatever an admin or a
 * job made), so a name alone proves nothing: a cgroup is swept only when
 *
 *   1. its name is exactly leash's grammar, NAME@PID or NAME@PID.N, with NAME
 *      a valid job name, PID and N decimal without leading zeros;
 *   2. it carries the mark leash writes right after mkdir, an extended
 *      attribute "pid=PID pidns=INODE": the creator's pid and the inode of its
 *      pid namespace (/proc/self/ns/pid), and the PID matches the name's;
 *   3. that namespace is the sweeper's own (a pid of another namespace says
 *      nothing about liveness here), and kill(PID, 0) says ESRCH.
 *
 * The mark is the first two fields of the job's record (jobstate.c),
 * which also decides which attribute is written (trusted.leash with
 * CAP_SYS_ADMIN, else user.leash) and which one a reader may believe: a
 * root sweeper only trusted.leash, which a job without CAP_SYS_ADMIN cannot
 * forge; a non-root one user.leash too, on directories of its own uid. Where
 * the kernel keeps no cgroupfs xattrs, no mark is written and nothing is ever
 * swept (the watchdog remains).
 */
#include "sweep.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "../../basic/dirread.h"
#include "../../basic/macro.h"
#include "../../basic/parse.h"
#include "../cgroup/cgroupfs.h"
#include "jobstate.h"

/* "123" -> 123; no sign, no leading zero, no overflow */
static bool parse_decimal(const char *s, size_t len, long *ret) {
        long v = 0;
        if (len == 0 || len > 9 || (s[0] == '0' && len > 1))
                return false;
        for (size_t i = 0; i < len; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return false;
                v = v * 10 + (s[i] - '0');
        }
        *ret = v;
        return true;
}

bool sweep_name_parse(const char *dirname, pid_t *ret_pid) {
        const char *at = strrchr(dirname, '@'), *dot;
        char name[80];
        long pid, n;

        if (!at || (size_t) (at - dirname) >= sizeof name)
                return false;
        memcpy(name, dirname, (size_t) (at - dirname));
        name[at - dirname] = '\0';
        if (!job_name_is_valid(name))
                return false;
        dot = strchr(at + 1, '.');
        if (!parse_decimal(at + 1, dot ? (size_t) (dot - at - 1) : strlen(at + 1), &pid) || pid <= 0)
                return false;
        if (dot && (!parse_decimal(dot + 1, strlen(dot + 1), &n) || n < 1 || n > 999))
                return false;
        *ret_pid = (pid_t) pid;
        return true;
}

/* The mark of a job cgroup as this sweeper may trust it: 0 and the pid and
 * namespace it names, -ENODATA when there is none it may trust. */
static int read_mark(int fd, pid_t *ret_pid, unsigned long long *ret_ns) {
        struct jobstate st;
        int r = jobstate_read(fd, &st);

        if (r < 0)
                return r;
        *ret_pid = st.pid;
        *ret_ns = st.pidns;
        return 0;
}

/* Whether dirname is a job cgroup of a dead leash that this sweeper may
 * remove (the three conditions above); jfd gets the open cgroup. The cheap
 * test first: most entries are the cgroups of leashes that live (this one's
 * own job among them), and a kill() tells without opening them. */
static bool is_stale(int dfd, const char *dirname, unsigned long long ns, int *jfd) {
        unsigned long long mark_ns;
        pid_t pid, mark_pid;

        if (!sweep_name_parse(dirname, &pid))
                return false;
        if (kill(pid, 0) == 0 || errno != ESRCH)
                return false; /* its leash (or a process with its pid) lives */
        *jfd = openat(dfd, dirname, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (*jfd < 0 || read_mark(*jfd, &mark_pid, &mark_ns) < 0)
                return false;                    /* not made by leash, as far as we can trust */
        return mark_pid == pid && mark_ns == ns; /* else renamed, or a leash of another pid namespace */
}

int sweep_stale(int parent_fd, unsigned long long ns) {
        _cleanup_close_ int dfd = openat(parent_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct dirread d;
        const char *name;
        unsigned char type;
        int removed = 0;

        if (dfd < 0)
                return negative_errno();
        dirread_init(&d, dfd);
        while ((name = dirread_next(&d, &type))) {
                _cleanup_close_ int jfd = -1;

                if (type == DT_DIR && is_stale(dfd, name, ns, &jfd) && cgroupfs_remove(dfd, name, jfd) == 0)
                        removed++;
        }
        return removed;
}
