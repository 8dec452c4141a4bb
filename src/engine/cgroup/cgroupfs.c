/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Theory of operation. Every job gets a fresh cgroup "<name>@<leash pid>"
 * under the parent; the pid makes names unique among live leash processes
 * (1,000 jobs at once cannot collide) and lets a later leash recognise a job
 * cgroup whose leash died (the sweep). On a stale name of the same pid, a
 * ".<n>" suffix is added.
 *
 * Killing: cgroup.kill (5.14+) sends SIGKILL to every process of the cgroup
 * atomically, forks in flight included. Older kernels: freeze the cgroup so
 * that nothing can fork, SIGKILL each pid of cgroup.procs, thaw.
 *
 * Emptiness: "populated 0" in cgroup.events; the kernel signals a change of
 * that file to inotify (IN_MODIFY), so waits are event-driven and bounded.
 */
#include "cgroupfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/sched.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../basic/dirread.h"
#include "../../basic/fileio.h"
#include "../../basic/macro.h"
#include "../../basic/time-util.h"

const char *const cgroupfs_controller_names[CTL_COUNT] = {"memory", "pids", "cpu", "io"};

unsigned cgroupfs_parse_controllers(const char *text) {
        unsigned mask = 0;
        const char *p = text;

        while (*p) {
                size_t len;
                while (*p == ' ' || *p == '\n')
                        p++;
                len = strcspn(p, " \n");
                for (unsigned i = 0; i < CTL_COUNT; i++)
                        if (len == strlen(cgroupfs_controller_names[i]) &&
                            strncmp(p, cgroupfs_controller_names[i], len) == 0)
                                mask |= 1u << i;
                p += len;
        }
        return mask;
}

int cgroupfs_parse_cpulist(const char *text) {
        const char *p = text;
        long n = 0;

        while (*p && *p != '\n') {
                char *end;
                long a = strtol(p, &end, 10), b;
                if (end == p || a < 0)
                        return -EINVAL;
                b = a;
                p = end;
                if (*p == '-') {
                        b = strtol(p + 1, &end, 10);
                        if (end == p + 1 || b < a)
                                return -EINVAL;
                        p = end;
                }
                n += b - a + 1;
                if (n > 1 << 20)
                        return -EINVAL;
                if (*p == ',')
                        p++;
                else if (*p && *p != '\n')
                        return -EINVAL;
        }
        return n > 0 ? (int) n : -EINVAL;
}

double cgroupfs_parse_cpu_max(const char *text) {
        char *end;
        double quota, period;

        if (strncmp(text, "max", 3) == 0)
                return 0;
        quota = strtod(text, &end);
        if (end == text || *end != ' ')
                return 0;
        period = strtod(end + 1, NULL);
        return period > 0 && quota > 0 ? quota / period : 0;
}

double cgroupfs_job_cores(int job_fd) {
        char buf[4096];
        double cores = 0, cap;
        int n;

        if (read_file_at(job_fd, "cpuset.cpus.effective", buf, sizeof buf, NULL) >= 0 &&
            (n = cgroupfs_parse_cpulist(buf)) > 0)
                cores = n;
        if (cores <= 0) {
                long online = sysconf(_SC_NPROCESSORS_ONLN);
                cores = online > 0 ? (double) online : 1;
        }
        if (read_file_at(job_fd, "cpu.max", buf, sizeof buf, NULL) >= 0 && (cap = cgroupfs_parse_cpu_max(buf)) > 0 &&
            cap < cores)
                cores = cap;
        return cores > 0 ? cores : 1;
}

int cgroupfs_events_populated(int events_fd) {
        char buf[256], *p;
        ssize_t n = pread(events_fd, buf, sizeof buf - 1, 0);

        if (n < 0)
                return negative_errno();
        buf[n] = '\0';
        p = strstr(buf, "populated ");
        if (!p)
                return -EINVAL;
        return p[10] == '1';
}

/* What the cgroup offers its children (cgroup.controllers) and what it has
 * enabled for them (cgroup.subtree_control). */
static int read_controllers(int fd, unsigned *ret_offered, unsigned *ret_enabled) {
        char buf[512];
        int r;

        r = read_file_at(fd, "cgroup.controllers", buf, sizeof buf, NULL);
        if (r < 0)
                return r;
        *ret_offered = cgroupfs_parse_controllers(buf);
        /* subtree_control enables only what cgroup.controllers offers (the
         * kernel's rule): offered none, none is enabled (a hybrid host) */
        *ret_enabled = 0;
        if (*ret_offered == 0)
                return 0;
        r = read_file_at(fd, "cgroup.subtree_control", buf, sizeof buf, NULL);
        if (r < 0)
                return r;
        *ret_enabled = cgroupfs_parse_controllers(buf);
        return 0;
}

int cgroupfs_enable_controllers(int parent_fd, unsigned want, unsigned *ret_available) {
        char cmd[128] = "";
        unsigned offered, enabled, missing;
        int r;

        r = read_controllers(parent_fd, &offered, &enabled);
        if (r < 0)
                return r;
        missing = want & offered & ~enabled;
        if (missing) {
                for (unsigned i = 0; i < CTL_COUNT; i++)
                        if (missing & (1u << i)) {
                                strcat(cmd, cmd[0] ? " +" : "+");
                                strcat(cmd, cgroupfs_controller_names[i]);
                        }
                /* One write: the kernel applies all or none. Failing (processes in the
                 * parent, no permission), fall back to one at a time to keep what we can. */
                if (write_string_at(parent_fd, "cgroup.subtree_control", cmd) == 0)
                        enabled |= missing;
                else
                        for (unsigned i = 0; i < CTL_COUNT; i++) {
                                char one[32];
                                if (!(missing & (1u << i)))
                                        continue;
                                snprintf(one, sizeof one, "+%s", cgroupfs_controller_names[i]);
                                if (write_string_at(parent_fd, "cgroup.subtree_control", one) == 0)
                                        enabled |= 1u << i;
                        }
        }
        *ret_available = enabled & want;
        return 0;
}

int cgroupfs_offered_controllers(int fd, bool can_enable, unsigned want, unsigned *ret) {
        unsigned offered, enabled;
        int r = read_controllers(fd, &offered, &enabled);

        if (r < 0)
                return r;
        *ret = (enabled | (can_enable ? offered : 0)) & want;
        return 0;
}

void cgroupfs_plan_enforcement(const struct leash_spec *c, unsigned available,
                               enum leash_enforcer plan[_LEASH_LIMIT_MAX], const char *note[_LEASH_LIMIT_MAX]) {
        static const char no_mem[] = "no memory controller in the job's cgroup2 parent";
        bool mem = available & CTL_MEMORY;

        for (int l = 0; l < _LEASH_LIMIT_MAX; l++) {
                plan[l] = LEASH_BY_NONE;
                note[l] = NULL;
                if (!leash_spec_has(c, (enum leash_limit) l))
                        continue;
                switch ((enum leash_limit) l) {
                case LEASH_LIMIT_MEMORY:
                        plan[l] = mem ? LEASH_BY_CGROUP : LEASH_BY_RLIMIT;
                        note[l] = mem ? NULL
                                      : "no memory controller in the job's cgroup2 parent: "
                                        "RLIMIT_AS per process instead (address space, not the tree's memory)";
                        break;
                case LEASH_LIMIT_MEMORY_HIGH:
                case LEASH_LIMIT_SWAP:
                        plan[l] = mem ? LEASH_BY_CGROUP : LEASH_BY_NONE;
                        note[l] = mem ? NULL : no_mem;
                        break;
                case LEASH_LIMIT_PIDS:
                        plan[l] = (available & CTL_PIDS) ? LEASH_BY_CGROUP : LEASH_BY_NONE;
                        note[l] = plan[l] ? NULL
                                          : "no pids controller in the job's cgroup2 parent "
                                            "(RLIMIT_NPROC counts the whole user, not the job: not used)";
                        break;
                case LEASH_LIMIT_CPUS:
                        plan[l] = (available & CTL_CPU) ? LEASH_BY_CGROUP : LEASH_BY_NONE;
                        note[l] = plan[l] ? NULL : "no cpu controller in the job's cgroup2 parent";
                        break;
                case LEASH_LIMIT_CPU_TIME:
                case LEASH_LIMIT_WALL_TIME:
                        plan[l] = LEASH_BY_LEASH;
                        break;
                case LEASH_LIMIT_NOFILE:
                case LEASH_LIMIT_FSIZE:
                case LEASH_LIMIT_CORE:
                        plan[l] = LEASH_BY_RLIMIT;
                        break;
                case _LEASH_LIMIT_MAX:
                        break;
                }
        }
}

int cgroupfs_create_job(int parent_fd, const char *name, char *ret_dirname, size_t size, int *ret_fd) {
        char dn[256];
        pid_t pid = getpid();

        for (unsigned n = 0; n < 1000; n++) {
                int fd;
                if (n == 0)
                        snprintf(dn, sizeof dn, "%s@%d", name, (int) pid);
                else
                        snprintf(dn, sizeof dn, "%s@%d.%u", name, (int) pid, n);
                if (mkdirat(parent_fd, dn, 0755) < 0) {
                        if (errno == EEXIST)
                                continue;
                        return negative_errno();
                }
                fd = openat(parent_fd, dn, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd < 0) {
                        int r = negative_errno();
                        (void) unlinkat(parent_fd, dn, AT_REMOVEDIR);
                        return r;
                }
                if (strlen(dn) >= size) {
                        close(fd);
                        (void) unlinkat(parent_fd, dn, AT_REMOVEDIR);
                        return -ENAMETOOLONG;
                }
                strcpy(ret_dirname, dn);
                *ret_fd = fd;
                return 0;
        }
        return -EEXIST;
}

static int write_limit(int fd, const char *file, const char *value, struct leash_error *err) {
        int r = write_string_at(fd, file, value);
        if (r < 0 && err) {
                err->step = "write a cgroup limit";
                snprintf(err->detail, sizeof err->detail, "%s = %s", file, value);
                err->error = -r;
        }
        return r;
}

static void u64_or_max(uint64_t v, char *buf, size_t size) {
        if (v == LEASH_MAX)
                snprintf(buf, size, "max");
        else
                snprintf(buf, size, "%" PRIu64, v);
}

int cgroupfs_apply_limits(int fd, const struct leash_spec *c, const enum leash_enforcer plan[_LEASH_LIMIT_MAX],
                          struct leash_error *err) {
        char v[64];
        int r;

        if (plan[LEASH_LIMIT_MEMORY] == LEASH_BY_CGROUP) {
                u64_or_max(c->limit[LEASH_LIMIT_MEMORY], v, sizeof v);
                if ((r = write_limit(fd, "memory.max", v, err)) < 0)
                        return r;
                /* An OOM kill takes the whole job, not one victim: a half-killed job lies. */
                if ((r = write_limit(fd, "memory.oom.group", "1", err)) < 0)
                        return r;
                /* With a memory limit, swap defaults to 0 unless asked: otherwise the
                 * limit only moves the job's pages to swap. Hosts without swap
                 * accounting have no memory.swap.max: then there is nothing to limit. */
                if (!leash_spec_has(c, LEASH_LIMIT_SWAP) && faccessat(fd, "memory.swap.max", F_OK, 0) == 0 &&
                    (r = write_limit(fd, "memory.swap.max", "0", err)) < 0)
                        return r;
        }
        if (plan[LEASH_LIMIT_MEMORY_HIGH] == LEASH_BY_CGROUP) {
                u64_or_max(c->limit[LEASH_LIMIT_MEMORY_HIGH], v, sizeof v);
                if ((r = write_limit(fd, "memory.high", v, err)) < 0)
                        return r;
        }
        if (plan[LEASH_LIMIT_SWAP] == LEASH_BY_CGROUP) {
                u64_or_max(c->limit[LEASH_LIMIT_SWAP], v, sizeof v);
                if ((r = write_limit(fd, "memory.swap.max", v, err)) < 0)
                        return r;
        }
        if (plan[LEASH_LIMIT_PIDS] == LEASH_BY_CGROUP) {
                u64_or_max(c->limit[LEASH_LIMIT_PIDS], v, sizeof v);
                if ((r = write_limit(fd, "pids.max", v, err)) < 0)
                        return r;
        }
        if (plan[LEASH_LIMIT_CPUS] == LEASH_BY_CGROUP) {
                uint64_t ucores = c->limit[LEASH_LIMIT_CPUS];
                if (ucores == LEASH_MAX)
                        snprintf(v, sizeof v, "max 100000");
                else /* period 100 ms: quota = cores x 100000 us */
                        snprintf(v, sizeof v, "%" PRIu64 " 100000", ucores / 10);
                if ((r = write_limit(fd, "cpu.max", v, err)) < 0)
                        return r;
        }
        return 0;
}

/* sig to each pid of cgroup.procs but those in skip. */
static int for_each_pid_here(int job_fd, int sig, const pid_t *skip, size_t n_skip) {
        char stackbuf[4096], *text = stackbuf;
        _cleanup_free_ char *big = NULL;
        size_t len;
        int r, n = 0;

        r = read_file_at(job_fd, "cgroup.procs", stackbuf, sizeof stackbuf, &len);
        if (r < 0)
                return r;
        if (len == sizeof stackbuf - 1) {
                r = read_file_at_alloc(job_fd, "cgroup.procs", &big, NULL);
                if (r < 0)
                        return r;
                text = big;
        }
        for (char *p = text; *p;) {
                char *end;
                long pid = strtol(p, &end, 10);
                if (end == p)
                        break;
                bool skipped = false;
                for (size_t i = 0; i < n_skip; i++)
                        skipped |= skip[i] == (pid_t) pid;
                if (pid > 0 && !skipped && kill((pid_t) pid, sig) == 0)
                        n++;
                p = end;
                while (*p == '\n')
                        p++;
        }
        return n;
}

/* rel: the path of fd below the walk's top, in a buffer of PATH_MAX that
 * each level extends and gives back */
static int walk_below(int fd, cgroupfs_walk_fn fn, void *userdata, unsigned depth, char *rel, bool *truncated) {
        struct dirread d;
        unsigned char type;
        const char *name;
        size_t len = strlen(rel);
        int r = fn(fd, depth, rel, userdata), n = 1, dup_fd;

        if (r < 0)
                return r;
        if (r == CGROUPFS_WALK_PRUNE)
                return n;
        dup_fd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dup_fd < 0)
                return n;
        dirread_init(&d, dup_fd);
        while ((name = dirread_next(&d, &type))) {
                int sub, k;
                if (type != DT_DIR || name[0] == '.')
                        continue;
                if (depth >= CGROUPFS_WALK_DEPTH) { /* a cgroup below the deepest level: not walked */
                        *truncated = true;
                        break;
                }
                if (len + 1 + strlen(name) >= PATH_MAX) /* deeper than a path: not walked either */
                        continue;
                sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sub < 0)
                        continue;
                snprintf(rel + len, PATH_MAX - len, "%s%s", len ? "/" : "", name);
                k = walk_below(sub, fn, userdata, depth + 1, rel, truncated);
                rel[len] = '\0';
                close(sub);
                if (k < 0) {
                        n = k;
                        break;
                }
                n += k;
        }
        close(dup_fd);
        return n;
}

int cgroupfs_walk(int fd, cgroupfs_walk_fn fn, void *userdata, bool *ret_truncated) {
        char rel[PATH_MAX] = "";
        bool truncated = false;
        int n = walk_below(fd, fn, userdata, 0, rel, &truncated);

        if (ret_truncated)
                *ret_truncated = truncated;
        return n;
}

struct signal_walk {
        int sig, n;
        const pid_t *skip;
        size_t n_skip;
};

static int signal_here(int fd, unsigned depth, const char *rel, void *userdata) {
        struct signal_walk *w = userdata;
        int n = for_each_pid_here(fd, w->sig, w->skip, w->n_skip);

        (void) rel;
        if (n < 0 && depth == 0)
                return n; /* the job cgroup's own list unread: an error; a cgroup below gone since is not */
        w->n += n > 0 ? n : 0;
        return 0;
}

/* The same through the cgroups below too: a job may hold cgroups of its own,
 * and a leash run inside a job (a nested job, placement.c) moves the outer
 * job's processes into its leash-leaf and makes its job cgroups beside it.
 * The freeze of the top cgroup holds the whole subtree. */
static int for_each_pid(int job_fd, int sig, const pid_t *skip, size_t n_skip) {
        struct signal_walk w = {.sig = sig, .skip = skip, .n_skip = n_skip};
        int r = cgroupfs_walk(job_fd, signal_here, &w, NULL);

        return r < 0 ? r : w.n;
}

/* Waits (bounded) for "frozen 1" in cgroup.events: a freeze is asynchronous. */
static void wait_frozen(int job_fd) {
        _cleanup_close_ int fd = openat(job_fd, "cgroup.events", O_RDONLY | O_CLOEXEC);
        char buf[256];

        for (int i = 0; fd >= 0 && i < 50; i++) {
                struct pollfd pfd = {.fd = fd, .events = POLLPRI};
                ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
                if (n <= 0)
                        return;
                buf[n] = '\0';
                if (strstr(buf, "frozen 1"))
                        return;
                (void) poll(&pfd, 1, 10);
        }
}

int cgroupfs_signal_all(int job_fd, int sig, pid_t skip) {
        bool frozen = write_string_at(job_fd, "cgroup.freeze", "1") == 0;
        int n;

        if (frozen)
                wait_frozen(job_fd);
        n = for_each_pid(job_fd, sig, &skip, 1);
        if (frozen)
                (void) write_string_at(job_fd, "cgroup.freeze", "0");
        return n;
}

int cgroupfs_signal_each(int job_fd, int sig, const pid_t *skip, size_t n_skip) {
        return for_each_pid(job_fd, sig, skip, n_skip);
}

int cgroupfs_kill(int job_fd) {
        int r = write_string_at(job_fd, "cgroup.kill", "1");
        if (r != -ENOENT)
                return r;
        /* No cgroup.kill (before 5.14): freeze so nothing forks, kill each, thaw. */
        (void) write_string_at(job_fd, "cgroup.freeze", "1");
        for (int round = 0; round < 100; round++)
                if (for_each_pid(job_fd, SIGKILL, NULL, 0) <= 0)
                        break;
        (void) write_string_at(job_fd, "cgroup.freeze", "0");
        return 0;
}

int cgroupfs_populated(int job_fd) {
        char buf[256], *p;
        int r = read_file_at(job_fd, "cgroup.events", buf, sizeof buf, NULL);
        if (r < 0)
                return r;
        p = strstr(buf, "populated ");
        if (!p)
                return -EINVAL;
        return p[10] == '1';
}

bool cgroupfs_oom_killed(int job_fd) {
        char buf[512], *p;
        if (read_file_at(job_fd, "memory.events", buf, sizeof buf, NULL) < 0)
                return false;
        p = strstr(buf, "\noom_kill ");
        return p && p[10] != '0';
}

int cgroupfs_wait_empty(int job_fd, int timeout_ms) {
        _cleanup_close_ int ifd = -1;
        char path[64];
        uint64_t deadline = now_ns(CLOCK_MONOTONIC) + (uint64_t) timeout_ms * NSEC_PER_MSEC;
        int r;

        r = cgroupfs_populated(job_fd);
        if (r <= 0)
                return r;
        ifd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
        if (ifd < 0)
                return negative_errno();
        snprintf(path, sizeof path, "/proc/self/fd/%d/cgroup.events", job_fd);
        if (inotify_add_watch(ifd, path, IN_MODIFY) < 0)
                return negative_errno();
        for (;;) {
                struct pollfd pfd = {.fd = ifd, .events = POLLIN};
                char evbuf[4096];
                uint64_t now;

                /* checked after arming the watch: a change before it is not lost */
                r = cgroupfs_populated(job_fd);
                if (r <= 0)
                        return r;
                now = now_ns(CLOCK_MONOTONIC);
                if (now >= deadline)
                        return -ETIMEDOUT;
                r = poll(&pfd, 1, (int) ((deadline - now) / NSEC_PER_MSEC) + 1);
                if (r < 0 && errno != EINTR)
                        return negative_errno();
                while (read(ifd, evbuf, sizeof evbuf) > 0)
                        ;
        }
}

/* Cgroups the job made inside its own: deepest first (rmdir refuses a cgroup
 * with children). Bounded depth: the kernel's own limit is far lower in any
 * sane setup, and a job cannot make us recurse without end. */
static void remove_children(int fd, int depth) {
        _cleanup_close_ int dfd = -1;
        DIR *d;
        struct dirent *de;

        if (depth > 64)
                return;
        dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return;
        d = fdopendir(TAKE_FD(dfd));
        if (!d)
                return;
        while ((de = readdir(d))) {
                _cleanup_close_ int cfd = -1;
                if (de->d_type != DT_DIR || strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                cfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (cfd < 0)
                        continue;
                remove_children(cfd, depth + 1);
                (void) unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR);
        }
        closedir(d);
}

int cgroupfs_remove(int parent_fd, const char *dirname, int job_fd) {
        /* the common case first, one system call: the job made no cgroup of
         * its own and nothing is left in it */
        if (unlinkat(parent_fd, dirname, AT_REMOVEDIR) == 0 || errno == ENOENT)
                return 0;
        if (errno != EBUSY || job_fd < 0)
                return negative_errno();
        for (int attempt = 0; attempt < 3; attempt++) {
                remove_children(job_fd, 0);
                if (unlinkat(parent_fd, dirname, AT_REMOVEDIR) == 0 || errno == ENOENT)
                        return 0;
                if (errno != EBUSY)
                        return negative_errno();
                (void) cgroupfs_kill(job_fd);
                (void) cgroupfs_wait_empty(job_fd, 2000);
        }
        return -EBUSY;
}

bool cgroupfs_probe_clone_into_cgroup(void) {
        struct clone_args args = {
                .flags = CLONE_INTO_CGROUP,
                .exit_signal = SIGCHLD,
                .cgroup = 0x7fffffff, /* surely not an open fd; above INT_MAX is EINVAL */
        };
        /* A kernel that knows the field fails the bad fd with EBADF before
         * creating anything; older ones say ENOSYS, E2BIG or EINVAL. */
        long r = syscall(SYS_clone3, &args, sizeof args);
        if (r == 0)
                _exit(0); /* cannot happen with an invalid cgroup fd */
        return r < 0 && errno == EBADF;
}
