/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The resident launcher's view of a caller, read from the kernel, not from
 * what the caller says (resident.c): a job started for a caller must be the
 * one the caller would have started itself, and a caller must not get
 * through the resident what it could not do by itself. So the caller is
 * served only with the resident's own credentials (uids, gids, groups, every
 * capability set), in its namespaces and security label, under no seccomp
 * filter, running the same leash binary, from a cgroup the resident accepts
 * (a login session's scope of this user: what the resident saves is the
 * manager's move out of it). What the caller may have changed for itself
 * and the job inherits (limits, nice value, CPUs, OOM score, umask, ignored
 * signals, no_new_privs) is read here and set again in the new leash.
 *
 * The pid is the connection's (SO_PEERCRED), pinned by a pidfd
 * (SO_PEERPIDFD where the kernel has it, Linux 6.5; else pidfd_open of that
 * pid); everything is read through /proc/PID, then the pidfd must show the
 * process still alive, so that the reads were of that process.
 */
#include "resident-caller.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../basic/fileio.h"
#include "../basic/macro.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

static int why(char *buf, size_t size, int err, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int why(char *buf, size_t size, int err, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(buf, size, fmt, ap);
        va_end(ap);
        return -err;
}

static int proc_read(pid_t pid, const char *name, char *buf, size_t size) {
        char path[64];

        snprintf(path, sizeof path, "/proc/%d/%s", (int) pid, name);
        return read_file_at(AT_FDCWD, path, buf, size, NULL);
}

/* The value of a /proc/PID/status line ("Uid:" ...), up to its newline. */
static int status_field(const char *status, const char *key, char *ret, size_t size) {
        const char *p = strstr(status, key);
        size_t n;

        if (!p || (p != status && p[-1] != '\n'))
                return -ENOENT;
        p += strlen(key);
        p += strspn(p, " \t");
        n = strcspn(p, "\n");
        if (n >= size)
                return -ENAMETOOLONG;
        memcpy(ret, p, n);
        ret[n] = '\0';
        return 0;
}

/* The fields that must be the resident's own. Groups: in the kernel's
 * order, which is sorted, for both. */
static int same_identity(const char *theirs, const char *ours, char *err, size_t size) {
        static const char *const keys[] = {"Uid:",    "Gid:",    "Groups:", "CapInh:",  "CapPrm:",
                                           "CapEff:", "CapBnd:", "CapAmb:", "Seccomp:", "Seccomp_filters:"};

        for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                char a[512] = "", b[512] = "";
                int ra = status_field(theirs, keys[i], a, sizeof a), rb = status_field(ours, keys[i], b, sizeof b);
                if (ra != rb || strcmp(a, b) != 0)
                        return why(err, size, EPERM, "the caller's %s differs from the launcher's", keys[i]);
        }
        return 0;
}

static const char *const ns_names[RESIDENT_N_NS] = {"cgroup", "ipc", "mnt", "net", "pid", "time", "user", "uts"};

static void ns_stat(const char *pid, size_t i, struct stat *st, int *err) {
        char path[64];

        snprintf(path, sizeof path, "/proc/%s/ns/%s", pid, ns_names[i]);
        *err = stat(path, st) < 0 ? -errno : 0;
}

int resident_self_read(struct resident_self *self) {
        int r;

        memset(self, 0, sizeof *self);
        r = read_file_at(AT_FDCWD, "/proc/self/status", self->status, sizeof self->status, NULL);
        if (r < 0)
                return r;
        for (size_t i = 0; i < RESIDENT_N_NS; i++)
                ns_stat("self", i, &self->ns[i], &self->ns_error[i]);
        self->label_error = read_file_at(AT_FDCWD, "/proc/self/attr/current", self->label, sizeof self->label, NULL);
        if (stat("/proc/self/exe", &self->exe) < 0)
                return -errno;
        return 0;
}

int resident_inherited_read(pid_t pid, struct resident_inherited *inh, const char **what) {
        char v[64];

        *what = "resource limits";
        for (int r = 0; r < RLIM_NLIMITS; r++)
                if (prlimit(pid, (enum __rlimit_resource) r, NULL, &inh->limits[r]) < 0)
                        return -errno;
        *what = "nice value";
        errno = 0;
        inh->nice = getpriority(PRIO_PROCESS, (id_t) pid);
        if (errno)
                return -errno;
        *what = "CPUs";
        if (sched_getaffinity(pid, sizeof inh->cpus, &inh->cpus) < 0)
                return -errno;
        *what = "OOM score";
        if (pid ? proc_read(pid, "oom_score_adj", v, sizeof v) < 0
                : read_file_at(AT_FDCWD, "/proc/self/oom_score_adj", v, sizeof v, NULL) < 0)
                return -ESRCH;
        inh->oom_score_adj = atoi(v);
        return 0;
}

static int same_namespaces(pid_t pid, const struct resident_self *self, char *err, size_t size) {
        char p[16];

        snprintf(p, sizeof p, "%d", (int) pid);
        for (size_t i = 0; i < RESIDENT_N_NS; i++) {
                struct stat st;
                int r;
                ns_stat(p, i, &st, &r);
                if (r != self->ns_error[i] ||
                    (r == 0 && (st.st_dev != self->ns[i].st_dev || st.st_ino != self->ns[i].st_ino)))
                        return why(err, size, EPERM, "the caller is in another %s namespace", ns_names[i]);
        }
        return 0;
}

static int same_label_and_binary(pid_t pid, const struct resident_self *self, char *err, size_t size) {
        char label[256] = "", path[64];
        struct stat st;
        int r = proc_read(pid, "attr/current", label, sizeof label);

        if (r != self->label_error || strcmp(label, self->label) != 0)
                return why(err, size, EPERM, "the caller's security label differs");
        snprintf(path, sizeof path, "/proc/%d/exe", (int) pid);
        if (stat(path, &st) < 0 || st.st_dev != self->exe.st_dev || st.st_ino != self->exe.st_ino)
                return why(err, size, ESTALE, "the caller runs another leash binary than the launcher");
        return 0;
}

/* The caller's cgroup (its cgroup2 line) against what the resident takes:
 * a pattern (fnmatch, no '/' crossed by '*'). */
static int cgroup_accepted(pid_t pid, const char *accept, char *err, size_t size) {
        char buf[4096], *line;

        if (proc_read(pid, "cgroup", buf, sizeof buf) < 0)
                return why(err, size, ESRCH, "the caller's cgroup cannot be read");
        line = strstr(buf, "0::");
        if (!line || (line != buf && line[-1] != '\n'))
                return why(err, size, EPERM, "the caller is in no cgroup2 cgroup");
        line += 3;
        line[strcspn(line, "\n")] = '\0';
        if (fnmatch(accept, line, FNM_PATHNAME) == 0)
                return 0;
        return why(err, size, EPERM, "the caller's cgroup %s is not one the launcher serves", line);
}

/* What the caller set for itself, which its job inherits. */
static int inherited(pid_t pid, const char *status, struct resident_caller *c, char *err, size_t size) {
        const char *what;
        char v[64];
        int r = resident_inherited_read(pid, &c->inh, &what);

        if (r < 0)
                return why(err, size, -r, "read the caller's %s", what);
        if (status_field(status, "Umask:", v, sizeof v) < 0)
                return why(err, size, ENOENT, "read the caller's umask");
        c->umask = (mode_t) strtoul(v, NULL, 8);
        if (status_field(status, "SigIgn:", v, sizeof v) < 0)
                return why(err, size, ENOENT, "read the caller's ignored signals");
        c->sig_ignored = strtoull(v, NULL, 16);
        c->no_new_privs = status_field(status, "NoNewPrivs:", v, sizeof v) == 0 && v[0] == '1';
        return 0;
}

static int caller_pidfd(int sock, pid_t pid) {
        int fd = -1;
        socklen_t len = sizeof fd;

        if (getsockopt(sock, SOL_SOCKET, SO_PEERPIDFD, &fd, &len) == 0 && fd >= 0)
                return fd;
        fd = (int) syscall(SYS_pidfd_open, pid, 0);
        return fd < 0 ? -errno : fd;
}

static int caller_checks(pid_t pid, const char *accept, const struct resident_self *self, struct resident_caller *c,
                         char *err, size_t size) {
        _cleanup_free_ char *theirs = malloc(8192);
        int r;

        if (!theirs)
                return why(err, size, ENOMEM, "out of memory");
        if (proc_read(pid, "status", theirs, 8192) < 0)
                return why(err, size, ESRCH, "the caller's status cannot be read");
        r = same_identity(theirs, self->status, err, size);
        if (r >= 0)
                r = same_namespaces(pid, self, err, size);
        if (r >= 0)
                r = same_label_and_binary(pid, self, err, size);
        if (r >= 0)
                r = cgroup_accepted(pid, accept, err, size);
        if (r >= 0)
                r = inherited(pid, theirs, c, err, size);
        return r;
}

int resident_caller_read(int sock, const char *accept, const struct resident_self *self, struct resident_caller *c,
                         char *err, size_t size) {
        struct ucred cred;
        socklen_t len = sizeof cred;
        _cleanup_close_ int pidfd = -1;
        struct pollfd p;
        int r;

        memset(c, 0, sizeof *c);
        if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
                return why(err, size, errno, "the caller's credentials cannot be read");
        c->pid = cred.pid;
        if (cred.uid != getuid() || cred.gid != getgid())
                return why(err, size, EPERM, "the caller is another user");
        pidfd = caller_pidfd(sock, cred.pid);
        if (pidfd < 0)
                return why(err, size, -pidfd, "the caller has gone");
        r = caller_checks(cred.pid, accept, self, c, err, size);
        if (r < 0)
                return r;
        /* still alive: every read above was of the process that connected */
        p = (struct pollfd){.fd = pidfd, .events = POLLIN};
        if (poll(&p, 1, 0) != 0)
                return why(err, size, ESRCH, "the caller has gone");
        return 0;
}
