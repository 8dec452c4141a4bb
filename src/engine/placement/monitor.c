/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "monitor.h"
#include "placement.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../basic/fileio.h"
#include "../../basic/macro.h"
#include "../../basic/parse.h"
#include "../../basic/procstat.h"
#include "../../basic/time-util.h"
#include "host.h"
#include "sweep.h"

void monitor_job_done(struct monitor_job *j) {
        free(j->procs);
        j->procs = NULL;
        j->n_procs = 0;
}

void monitor_jobs_free(struct monitor_job *jobs, size_t n) {
        for (size_t i = 0; jobs && i < n; i++)
                monitor_job_done(&jobs[i]);
        free(jobs);
}

int monitor_open_parent(const char *requested, int *ret_fd, struct placement *p, struct leash_error *err) {
        int r, fd;

        r = placement_decide(requested, false, p, err);
        if (r < 0)
                return r;
        if (p->kind == PLACEMENT_NONE) {
                *ret_fd = -1; /* jobs without a cgroup are not listed: nothing names them */
                return 0;
        }
        fd = open(p->parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
                if (errno == ENOENT && !requested) {
                        *ret_fd = -1; /* the default parent is made by the first run */
                        return 0;
                }
                return leash_error_set(err, "open the cgroup parent", p->parent, negative_errno());
        }
        *ret_fd = fd;
        return 0;
}

/* the parent pid from /proc/PID/stat, 0 when unreadable */
static pid_t parent_of(int proc_fd, pid_t pid) {
        struct procstat ps;
        return procstat_read(proc_fd, pid, &ps) < 0 ? 0 : ps.ppid;
}

static void read_job(int jfd, int proc_fd, bool want_procs, struct monitor_job *j) {
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0;
        uint64_t now_real = now_ns(CLOCK_REALTIME), age_us;
        struct stat st;
        char buf[64];

        sample_init(&j->s);
        j->sampled_ns = now_ns(CLOCK_MONOTONIC);
        (void) sample_read(jfd, proc_fd, -1, &j->s, &pids, &n);
        j->mem_peak = LEASH_NULL;
        if (read_file_at(jfd, "memory.peak", buf, sizeof buf, NULL) == 0)
                (void) parse_u64(strtok(buf, "\n") ? buf : "", &j->mem_peak);
        j->started_ns = LEASH_NULL;
        if (j->has_state && j->st.record && j->st.started_ns)
                j->started_ns = j->st.started_ns;
        else if (fstat(jfd, &st) == 0)
                /* kernfs sets a directory's ctime when it is made */
                j->started_ns = (uint64_t) st.st_ctim.tv_sec * NSEC_PER_SEC + (uint64_t) st.st_ctim.tv_nsec;
        if (j->started_ns != LEASH_NULL && now_real > j->started_ns) {
                age_us = (now_real - j->started_ns) / NSEC_PER_USEC;
                j->s.v[LEASH_FIG_T] = age_us;
                j->s.basis[LEASH_FIG_T] = j->has_state ? "record" : "cgroup_ctime";
                if (j->s.v[LEASH_FIG_CPU_TOTAL] != LEASH_NULL && age_us > 0) {
                        j->s.v[LEASH_FIG_CORES_AVG] =
                                (uint64_t) ((double) j->s.v[LEASH_FIG_CPU_TOTAL] * 1e6 / (double) age_us);
                        j->s.basis[LEASH_FIG_CORES_AVG] = "cpu.stat";
                }
        }
        j->main_pid = 0;
        for (size_t i = 0; proc_fd >= 0 && j->leash_pid > 0 && i < n; i++)
                if (parent_of(proc_fd, pids[i]) == j->leash_pid) {
                        j->main_pid = pids[i];
                        break;
                }
        j->has_uid = false;
        if (proc_fd >= 0 && (j->main_pid > 0 || n > 0)) {
                struct sample_proc p;
                if (sample_read_proc(proc_fd, j->main_pid > 0 ? j->main_pid : pids[0], &p) == 0 &&
                    p.uid != (uid_t) -1) {
                        j->uid = p.uid;
                        j->has_uid = true;
                }
        }
        if (want_procs && proc_fd >= 0 && n > 0) {
                j->procs = calloc(n, sizeof *j->procs);
                for (size_t i = 0; j->procs && i < n; i++)
                        if (sample_read_proc(proc_fd, pids[i], &j->procs[j->n_procs]) == 0)
                                j->n_procs++;
        }
}

/* Fills j from the job directory jfd (named dirname); false when it is not a
 * leash job as far as this reader can tell. */
static bool identify(int jfd, const char *dirname, struct monitor_job *j) {
        pid_t name_pid = 0;
        bool by_name = sweep_name_parse(dirname, &name_pid);
        const char *at;

        memset(j, 0, sizeof *j);
        snprintf(j->dirname, sizeof j->dirname, "%s", dirname);
        j->has_state = jobstate_read(jfd, &j->st) == 0;
        if (!j->has_state && !by_name)
                return false;
        if (j->has_state && j->st.record)
                snprintf(j->name, sizeof j->name, "%s", j->st.name);
        else {
                at = strrchr(dirname, '@');
                snprintf(j->name, sizeof j->name, "%.*s", (int) (at ? at - dirname : (ptrdiff_t) strlen(dirname)),
                         dirname);
        }
        j->leash_pid = j->has_state ? j->st.pid : name_pid;
        j->leash_alive = j->leash_pid > 0 && (kill(j->leash_pid, 0) == 0 || errno == EPERM);
        return true;
}

static int cmp_job(const void *a, const void *b) {
        return strcmp(((const struct monitor_job *) a)->dirname, ((const struct monitor_job *) b)->dirname);
}

int monitor_list(int parent_fd, const char *parent_path, int proc_fd, struct monitor_job **ret, size_t *ret_n) {
        _cleanup_close_ int dfd = -1;
        struct monitor_job *jobs = NULL;
        size_t n = 0, cap = 0;
        struct dirent *de;
        DIR *d;

        if (parent_fd < 0) {
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }
        dfd = openat(parent_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return negative_errno();
        d = fdopendir(dfd);
        if (!d)
                return negative_errno();
        TAKE_FD(dfd);
        while ((de = readdir(d))) {
                _cleanup_close_ int jfd = -1;
                struct monitor_job j;

                if (de->d_type != DT_DIR || de->d_name[0] == '.')
                        continue;
                jfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                if (jfd < 0 || !identify(jfd, de->d_name, &j))
                        continue;
                if (n == cap) {
                        struct monitor_job *m = reallocarray(jobs, cap ? cap * 2 : 8, sizeof *jobs);
                        if (!m) {
                                closedir(d);
                                monitor_jobs_free(jobs, n);
                                return -ENOMEM;
                        }
                        jobs = m;
                        cap = cap ? cap * 2 : 8;
                }
                snprintf(j.cgroup, sizeof j.cgroup, "%s/%s", parent_path, de->d_name);
                read_job(jfd, proc_fd, false, &j);
                jobs[n++] = j;
        }
        closedir(d);
        if (n > 1)
                qsort(jobs, n, sizeof *jobs, cmp_job);
        *ret = jobs;
        *ret_n = n;
        return 0;
}

int monitor_read(int parent_fd, const char *parent_path, const char *which, int proc_fd, bool want_procs,
                 struct monitor_job *ret) {
        _cleanup_close_ int jfd = -1;
        char mount[4096], path[8192];
        const char *base;
        struct monitor_job j;
        int r;

        if (strchr(which, '/')) {
                /* a cgroup path: under the cgroup2 mount, or relative to it */
                r = host_cgroup2_mount_fast(mount, sizeof mount);
                if (r < 0)
                        return r;
                if (path_has_dotdot(which))
                        return -EINVAL;
                if (strncmp(which, mount, strlen(mount)) == 0 && which[strlen(mount)] == '/')
                        snprintf(path, sizeof path, "%s", which);
                else if (which[0] == '/')
                        return -EINVAL;
                else
                        snprintf(path, sizeof path, "%s/%s", mount, which);
                jfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        } else {
                if (parent_fd < 0 || strcmp(which, ".") == 0 || strcmp(which, "..") == 0)
                        return -ENOENT;
                snprintf(path, sizeof path, "%s/%s", parent_path, which);
                jfd = openat(parent_fd, which, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        }
        if (jfd < 0)
                return negative_errno();
        if (faccessat(jfd, "cgroup.procs", F_OK, 0) < 0)
                return -ENOTDIR;
        base = strrchr(path, '/');
        base = base ? base + 1 : path;
        if (!identify(jfd, base, &j))
                return -EMEDIUMTYPE; /* a cgroup, but not a leash job */
        snprintf(j.cgroup, sizeof j.cgroup, "%s", path);
        read_job(jfd, proc_fd, want_procs, &j);
        *ret = j;
        return 0;
}

int monitor_cgroup_of_pid(pid_t pid, char *ret, size_t size) {
        char path[64], buf[4096], cg[4096], mount[4096];
        int r;

        snprintf(path, sizeof path, "/proc/%d/cgroup", (int) pid);
        r = read_file_at(AT_FDCWD, path, buf, sizeof buf, NULL);
        if (r < 0)
                return r == -ENOENT ? -ESRCH : r;
        r = host_parse_proc_cgroup(buf, cg, sizeof cg);
        if (r < 0)
                return r;
        r = host_cgroup2_mount_fast(mount, sizeof mount);
        if (r < 0)
                return r;
        if ((size_t) snprintf(ret, size, "%s%s", mount, cg) >= size)
                return -ENAMETOOLONG;
        return 0;
}

void monitor_cores(struct monitor_job *j, const struct monitor_job *prev) {
        uint64_t c = j->s.v[LEASH_FIG_CPU_TOTAL], p = prev->s.v[LEASH_FIG_CPU_TOTAL];
        uint64_t dt_us = (j->sampled_ns - prev->sampled_ns) / NSEC_PER_USEC;

        if (c == LEASH_NULL || p == LEASH_NULL || c < p || dt_us == 0)
                return;
        j->s.v[LEASH_FIG_CORES] = (uint64_t) ((double) (c - p) * 1e6 / (double) dt_us);
        j->s.basis[LEASH_FIG_CORES] = "cpu.stat";
}

static void append(char *buf, size_t size, size_t *n, const char *key, const char *value) {
        if (*n < size)
                *n += (size_t) snprintf(buf + *n, size - *n, "%s%s=%s", *n ? " " : "", key, value);
}

void monitor_limits_text(const struct monitor_job *j, char *buf, size_t size) {
        size_t n = 0;
        char v[48];

        buf[0] = '\0';
        if (!j->has_state || !j->st.record)
                return;
        for (int l = 0; l < _LEASH_LIMIT_MAX; l++) {
                uint64_t x = j->st.limit[l];
                if (!(j->st.limit_set & (1U << l)))
                        continue;
                if (x == LEASH_MAX)
                        snprintf(v, sizeof v, "max");
                else if (l == LEASH_LIMIT_CPUS)
                        snprintf(v, sizeof v, "%g", (double) x / 1e6);
                else if (l == LEASH_LIMIT_CPU_TIME || l == LEASH_LIMIT_WALL_TIME)
                        format_duration(x, v, sizeof v);
                else if (l == LEASH_LIMIT_PIDS || l == LEASH_LIMIT_NOFILE)
                        snprintf(v, sizeof v, "%llu", (unsigned long long) x);
                else
                        format_size(x, v, sizeof v);
                append(buf, size, &n, leash_limit_to_string((enum leash_limit) l), v);
        }
        for (int f = 0; f < _LEASH_FIG_MAX; f++)
                if (j->st.mlimit[f]) {
                        sample_fig_format((enum leash_fig) f, j->st.mlimit[f], v, sizeof v);
                        append(buf, size, &n, leash_fig_name((enum leash_fig) f), v);
                }
}
