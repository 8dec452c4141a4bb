/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Sampling. A sample is one read of each figure file of the job cgroup
 * through its held dirfd: cpu.stat (on every cgroup2 directory, controller
 * or not), memory.current/stat/swap.current, pids.current, cgroup.procs and
 * cgroup.threads, io.stat, the pressure files. Every file this host lacks
 * leaves its figures LEASH_NULL; nothing is invented. The cost of the cgroup
 * figures does not depend on the number of processes, except the two pid
 * lists, which are a few bytes a process.
 *
 * Where there is no memory controller (a hybrid host), the memory of the
 * whole tree comes from the processes themselves, as psutil-based monitors
 * do: /proc/PID/smaps_rollup of each process in cgroup.procs (Rss, Pss, and
 * USS = Private_Clean + Private_Dirty); where a process refuses it (made
 * itself undumpable: a ptrace check) its statm's resident set, counted in
 * Pss and USS too, and the basis says so. Where there is no io.stat, the io
 * bytes are the sum of /proc/PID/io of the live processes (which includes
 * the children they reaped). Both are named by their basis. A pid may exit
 * between the list and its files: it is skipped.
 *
 * The disk figure walks the --sample-disk directory from a dirfd opened
 * before the job started, openat() with O_NOFOLLOW at each step, never
 * leaving its filesystem, bounded in depth and entries, so a hostile job can
 * neither redirect nor stall it for long.
 */
#include "sample.h"
#include "../process/tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../basic/dirread.h"
#include "../../basic/fileio.h"
#include "../../basic/macro.h"
#include "../../basic/parse.h"
#include "../../basic/procstat.h"
#include "../../basic/time-util.h"
#include "../cgroup/account.h"
#include "../cgroup/cgroupfs.h"
#include "../heldfd.h"

enum fig_unit { U_US, U_UCORES, U_BYTES, U_COUNT };

static const struct {
        const char *name, *column;
        enum fig_unit unit;
        bool column_in_s; /* us figure shown in seconds */
} figs[_LEASH_FIG_MAX] = {
        [LEASH_FIG_T] = {"t", "t_s", U_US, true},
        [LEASH_FIG_CPU_USER] = {"cpu_user", "cpu_user_s", U_US, true},
        [LEASH_FIG_CPU_SYSTEM] = {"cpu_system", "cpu_system_s", U_US, true},
        [LEASH_FIG_CPU_TOTAL] = {"cpu_total", "cpu_total_s", U_US, true},
        [LEASH_FIG_CORES] = {"cores", "cores", U_UCORES, false},
        [LEASH_FIG_MEM_CURRENT] = {"mem_current", "mem_current_bytes", U_BYTES, false},
        [LEASH_FIG_MEM_ANON] = {"mem_anon", "mem_anon_bytes", U_BYTES, false},
        [LEASH_FIG_MEM_FILE] = {"mem_file", "mem_file_bytes", U_BYTES, false},
        [LEASH_FIG_MEM_KERNEL] = {"mem_kernel", "mem_kernel_bytes", U_BYTES, false},
        [LEASH_FIG_MEM_SHMEM] = {"mem_shmem", "mem_shmem_bytes", U_BYTES, false},
        [LEASH_FIG_MEM_SOCK] = {"mem_sock", "mem_sock_bytes", U_BYTES, false},
        [LEASH_FIG_SWAP_CURRENT] = {"swap_current", "swap_current_bytes", U_BYTES, false},
        [LEASH_FIG_PIDS_CURRENT] = {"pids_current", "pids_current", U_COUNT, false},
        [LEASH_FIG_PROCS] = {"procs", "procs", U_COUNT, false},
        [LEASH_FIG_IO_READ_BYTES] = {"io_read_bytes", "io_read_bytes", U_BYTES, false},
        [LEASH_FIG_IO_WRITE_BYTES] = {"io_write_bytes", "io_write_bytes", U_BYTES, false},
        [LEASH_FIG_IO_READ_OPS] = {"io_read_ops", "io_read_ops", U_COUNT, false},
        [LEASH_FIG_IO_WRITE_OPS] = {"io_write_ops", "io_write_ops", U_COUNT, false},
        [LEASH_FIG_THROTTLED] = {"throttled", "throttled_s", U_US, true},
        [LEASH_FIG_PSI_CPU_SOME] = {"psi_cpu_some", "psi_cpu_some_us", U_US, false},
        [LEASH_FIG_PSI_CPU_FULL] = {"psi_cpu_full", "psi_cpu_full_us", U_US, false},
        [LEASH_FIG_PSI_MEM_SOME] = {"psi_mem_some", "psi_mem_some_us", U_US, false},
        [LEASH_FIG_PSI_MEM_FULL] = {"psi_mem_full", "psi_mem_full_us", U_US, false},
        [LEASH_FIG_PSI_IO_SOME] = {"psi_io_some", "psi_io_some_us", U_US, false},
        [LEASH_FIG_PSI_IO_FULL] = {"psi_io_full", "psi_io_full_us", U_US, false},
        [LEASH_FIG_DISK_BYTES] = {"disk", "disk_bytes", U_BYTES, false},
        [LEASH_FIG_DISK_FILES] = {"files", "disk_files", U_COUNT, false},
        [LEASH_FIG_THREADS] = {"threads", "threads", U_COUNT, false},
        [LEASH_FIG_MEM_RSS] = {"mem_rss", "mem_rss_bytes", U_BYTES, false},
        [LEASH_FIG_MEM_PSS] = {"mem_pss", "mem_pss_bytes", U_BYTES, false},
        [LEASH_FIG_MEM_USS] = {"mem_uss", "mem_uss_bytes", U_BYTES, false},
        [LEASH_FIG_CORES_AVG] = {"cores_avg", "cores_avg", U_UCORES, false},
        [LEASH_FIG_TOTAL_PROCESSES] = {"total_processes", "total_processes", U_COUNT, false},
        [LEASH_FIG_MEMORY] = {"memory", "memory_bytes", U_BYTES, false},
        [LEASH_FIG_GPU_MEMORY] = {"gpu_memory", "gpu_memory_bytes", U_BYTES, false},
        [LEASH_FIG_GPU_MEMORY_MAX] = {"gpu_memory_max", "gpu_memory_max_bytes", U_BYTES, false},
        [LEASH_FIG_GPU_UTIL] = {"gpu_util", "gpu_util_pct", U_COUNT, false},
        [LEASH_FIG_GPUS] = {"gpus", "gpus", U_COUNT, false},
};

const char *leash_fig_name(enum leash_fig f) {
        return (unsigned) f < _LEASH_FIG_MAX ? figs[f].name : NULL;
}

const char *leash_fig_column(enum leash_fig f) {
        return (unsigned) f < _LEASH_FIG_MAX ? figs[f].column : NULL;
}

const char *leash_fig_unit(enum leash_fig f) {
        static const char *const units[] = {"us", "ucores", "bytes", "count"};
        return (unsigned) f < _LEASH_FIG_MAX ? units[figs[f].unit] : NULL;
}

int leash_fig_from_name(const char *name) {
        for (int f = 0; f < _LEASH_FIG_MAX; f++)
                if (strcmp(name, figs[f].name) == 0 || strcmp(name, figs[f].column) == 0)
                        return f;
        return -EINVAL;
}

uint64_t leash_sample_get(const struct leash_sample *s, enum leash_fig f) {
        return (unsigned) f < _LEASH_FIG_MAX ? s->v[f] : LEASH_NULL;
}

double leash_sample_value(const struct leash_sample *s, enum leash_fig f) {
        uint64_t v = leash_sample_get(s, f);
        if (v == LEASH_NULL)
                return NAN;
        if (figs[f].unit == U_UCORES || figs[f].column_in_s)
                return (double) v / 1e6;
        return (double) v;
}

uint64_t leash_sample_step(const struct leash_sample *s) {
        return s->step;
}

bool leash_sample_last(const struct leash_sample *s) {
        return s->last;
}

const char *leash_sample_basis(const struct leash_sample *s, enum leash_fig f) {
        return (unsigned) f < _LEASH_FIG_MAX && s->v[f] != LEASH_NULL ? s->basis[f] : NULL;
}

void sample_init(struct leash_sample *s) {
        memset(s, 0, sizeof *s);
        for (int f = 0; f < _LEASH_FIG_MAX; f++)
                s->v[f] = LEASH_NULL;
}

static void set(struct leash_sample *s, enum leash_fig f, uint64_t v, const char *basis) {
        s->v[f] = v;
        s->basis[f] = v == LEASH_NULL ? NULL : basis;
}

/* --- pure parsers ------------------------------------------------------------ */

/* "Key:   1234 kB" at the start of a line -> bytes */
static int kb_field(const char *text, const char *key, uint64_t *ret) {
        size_t kl = strlen(key);
        for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
                uint64_t v = 0;
                const char *q;
                if (strncmp(p, key, kl) != 0 || p[kl] != ':')
                        continue;
                q = p + kl + 1;
                while (*q == ' ' || *q == '\t')
                        q++;
                if (*q < '0' || *q > '9')
                        return -EINVAL;
                for (; *q >= '0' && *q <= '9'; q++)
                        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, (uint64_t) (*q - '0'), &v))
                                return -ERANGE;
                if (strncmp(q, " kB", 3) != 0)
                        return -EINVAL;
                if (__builtin_mul_overflow(v, 1024, &v))
                        return -ERANGE;
                *ret = v;
                return 0;
        }
        return -ENOENT;
}

int sample_parse_smaps_rollup(const char *text, uint64_t *ret_rss, uint64_t *ret_pss, uint64_t *ret_uss) {
        uint64_t rss, pss, pc, pd;
        int r;

        if ((r = kb_field(text, "Rss", &rss)) < 0 || (r = kb_field(text, "Pss", &pss)) < 0 ||
            (r = kb_field(text, "Private_Clean", &pc)) < 0 || (r = kb_field(text, "Private_Dirty", &pd)) < 0)
                return r;
        if (__builtin_add_overflow(pc, pd, ret_uss))
                return -ERANGE;
        *ret_rss = rss;
        *ret_pss = pss;
        return 0;
}

/* /proc/PID/io is "key: value" lines */
static int colon_field(const char *text, const char *key, uint64_t *ret) {
        size_t kl = strlen(key);
        for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
                if (strncmp(p, key, kl) == 0 && p[kl] == ':' && p[kl + 1] == ' ') {
                        char line[32];
                        const char *eol = strchr(p + kl + 2, '\n');
                        size_t n = eol ? (size_t) (eol - (p + kl + 2)) : strlen(p + kl + 2);
                        if (n == 0 || n >= sizeof line)
                                return -EINVAL;
                        memcpy(line, p + kl + 2, n);
                        line[n] = '\0';
                        return parse_u64(line, ret);
                }
        }
        return -ENOENT;
}

int sample_parse_proc_io(const char *text, uint64_t *ret_read, uint64_t *ret_write) {
        uint64_t r, w;
        int e;
        if ((e = colon_field(text, "read_bytes", &r)) < 0 || (e = colon_field(text, "write_bytes", &w)) < 0)
                return e;
        *ret_read = r;
        *ret_write = w;
        return 0;
}

/* /proc/PID/stat through the one parser (basic/procstat.c), ticks -> us */
static void from_procstat(const struct procstat *ps, long ticks_per_s, struct sample_proc *p) {
        snprintf(p->comm, sizeof p->comm, "%s", ps->comm);
        p->state = ps->state;
        p->utime_us = (uint64_t) ps->utime * USEC_PER_SEC / (uint64_t) ticks_per_s;
        p->stime_us = (uint64_t) ps->stime * USEC_PER_SEC / (uint64_t) ticks_per_s;
}

int sample_parse_proc_stat(const char *text, long ticks_per_s, struct sample_proc *p) {
        struct procstat ps;

        if (ticks_per_s <= 0 || procstat_parse(text, &ps) < 0)
                return -EINVAL;
        from_procstat(&ps, ticks_per_s, p);
        return 0;
}

int sample_parse_pid_list(const char *text, pid_t **ret_pids) {
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0, cap = 0;

        for (const char *p = text; *p;) {
                const char *eol = strchr(p, '\n');
                size_t len = eol ? (size_t) (eol - p) : strlen(p);
                char buf[16];
                uint64_t v;

                if (len == 0 || len >= sizeof buf)
                        return -EINVAL;
                memcpy(buf, p, len);
                buf[len] = '\0';
                if (parse_u64(buf, &v) < 0 || v == 0 || v > INT32_MAX)
                        return -EINVAL;
                if (ret_pids) {
                        if (n == cap) {
                                pid_t *np = realloc(pids, (cap ? cap * 2 : 64) * sizeof *pids);
                                if (!np)
                                        return -ENOMEM;
                                pids = np;
                                cap = cap ? cap * 2 : 64;
                        }
                        pids[n] = (pid_t) v;
                }
                n++;
                if (n > INT32_MAX)
                        return -ERANGE;
                p = eol ? eol + 1 : p + len;
        }
        if (ret_pids)
                *ret_pids = TAKE_PTR(pids);
        return (int) n;
}

void sample_parse_memory_stat(const char *text, struct leash_sample *s) {
        struct leash_usage u;
        uint64_t v;

        account_usage_init(&u);
        (void) account_parse_memory_stat(text, &u);
        set(s, LEASH_FIG_MEM_ANON, u.mem_anon, "memory.stat");
        set(s, LEASH_FIG_MEM_FILE, u.mem_file, "memory.stat");
        set(s, LEASH_FIG_MEM_SHMEM, u.mem_shmem, "memory.stat");
        if (account_flat_get(text, "kernel", &v) == 0)
                set(s, LEASH_FIG_MEM_KERNEL, v, "memory.stat");
        if (account_flat_get(text, "sock", &v) == 0)
                set(s, LEASH_FIG_MEM_SOCK, v, "memory.stat");
}

/* --- readers ----------------------------------------------------------------- */

static uint64_t read_u64_at(int fd, const char *name) {
        char buf[64];
        uint64_t v;
        size_t len;

        if (read_file_at(fd, name, buf, sizeof buf, &len) < 0 || len == 0)
                return LEASH_NULL;
        if (buf[len - 1] == '\n')
                buf[len - 1] = '\0';
        if (strcmp(buf, "max") == 0 || parse_u64(buf, &v) < 0)
                return LEASH_NULL;
        return v;
}

/* the basis of a memory sum in which an undumpable process counted its
 * resident set (proc_memory) */
#define STATM_BASIS "smaps_rollup, statm's resident set where refused"

/* The memory figure's basis from the Pss sum's: "sampled_pss", or
 * "sampled_pss_rss" where a process counted its resident set. */
static const char *pss_basis(const struct leash_sample *s) {
        const char *b = s->basis[LEASH_FIG_MEM_PSS];
        return b && strcmp(b, STATM_BASIS) == 0 ? "sampled_pss_rss" : "sampled_pss";
}

/* PID/name into buf, else TID/name of one of pid's other threads where
 * PID/name fails with ESRCH or empty(buf) says it is empty. A process whose
 * main thread has ended (pthread_exit) while others run on has no memory
 * of its own in /proc/PID (smaps_rollup: ESRCH, statm: zeros): it is read
 * through a live thread, which shares it, or a job would hide whatever it
 * allocates from a sampled memory limit. */
static int read_task_file(int proc_fd, pid_t pid, const char *name, char *buf, size_t size,
                          bool (*empty)(const char *buf)) {
        _cleanup_close_ int tfd = -1;
        struct dirread d;
        const char *tid;
        char path[96];
        int r;

        snprintf(path, sizeof path, "%d/%s", (int) pid, name);
        r = read_file_at(proc_fd, path, buf, size, NULL);
        if (r != -ESRCH && !(r == 0 && empty && empty(buf)))
                return r;
        snprintf(path, sizeof path, "%d/task", (int) pid);
        tfd = openat(proc_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (tfd < 0)
                return r;
        dirread_init(&d, tfd);
        while ((tid = dirread_next(&d, NULL)))
                if (tid[0] >= '1' && tid[0] <= '9' && atoi(tid) != (int) pid) {
                        snprintf(path, sizeof path, "%.20s/%s", tid, name);
                        if (read_file_at(tfd, path, buf, size, NULL) == 0 && !(empty && empty(buf)))
                                return 0;
                }
        return r;
}

/* statm's second field, resident pages, in bytes */
static int parse_statm_rss(const char *text, uint64_t *ret) {
        unsigned long long size, resident;
        long page = sysconf(_SC_PAGESIZE);

        if (sscanf(text, "%llu %llu", &size, &resident) != 2 || page <= 0)
                return -EINVAL;
        *ret = (uint64_t) resident * (uint64_t) page;
        return 0;
}

static bool statm_empty(const char *text) {
        uint64_t rss;
        return parse_statm_rss(text, &rss) == 0 && rss == 0;
}

/* One process's memory: 0 from smaps_rollup (Rss, Pss, USS), 1 from statm
 * (resident only: Pss and USS are at most that), -errno. A process that
 * made itself undumpable (PR_SET_DUMPABLE 0, or a set-uid program) refuses
 * smaps_rollup to its own uid (EACCES: a ptrace check), and a leash of that
 * uid would see none of its memory; statm has no such check. */
static int proc_memory(int proc_fd, pid_t pid, char *buf, size_t size, uint64_t *ret_rss, uint64_t *ret_pss,
                       uint64_t *ret_uss) {
        int r = read_task_file(proc_fd, pid, "smaps_rollup", buf, size, NULL);

        if (r == 0)
                return sample_parse_smaps_rollup(buf, ret_rss, ret_pss, ret_uss) < 0 ? -EINVAL : 0;
        if (r != -EACCES && r != -EPERM)
                return r;
        r = read_task_file(proc_fd, pid, "statm", buf, size, statm_empty);
        if (r < 0 || parse_statm_rss(buf, ret_rss) < 0)
                return r < 0 ? r : -EINVAL;
        *ret_pss = *ret_uss = *ret_rss;
        return 1;
}

int sample_read_proc(int proc_fd, pid_t pid, struct sample_proc *p) {
        struct procstat ps;
        char path[64], buf[4096];
        long ticks = sysconf(_SC_CLK_TCK);
        int r;

        memset(p, 0, sizeof *p);
        p->pid = pid;
        p->uid = (uid_t) -1;
        p->utime_us = p->stime_us = p->rss = p->pss = p->uss = p->read_bytes = p->write_bytes = LEASH_NULL;
        r = procstat_read(proc_fd, pid, &ps);
        if (r < 0)
                return r;
        if (ticks <= 0)
                return -EINVAL;
        from_procstat(&ps, ticks, p);
        snprintf(path, sizeof path, "%d/status", (int) pid);
        if (read_file_at(proc_fd, path, buf, sizeof buf, NULL) == 0) {
                const char *u = strstr(buf, "\nUid:");
                unsigned ruid;
                if (u && sscanf(u + 5, "%u", &ruid) == 1)
                        p->uid = (uid_t) ruid;
        }
        r = proc_memory(proc_fd, pid, buf, sizeof buf, &p->rss, &p->pss, &p->uss);
        if (r < 0)
                p->rss = p->pss = p->uss = LEASH_NULL;
        else if (r == 1) /* statm: no Pss or USS of its own */
                p->pss = p->uss = LEASH_NULL;
        snprintf(path, sizeof path, "%d/io", (int) pid);
        if (read_file_at(proc_fd, path, buf, sizeof buf, NULL) == 0 &&
            sample_parse_proc_io(buf, &p->read_bytes, &p->write_bytes) < 0)
                p->read_bytes = p->write_bytes = LEASH_NULL;
        return 0;
}

/* Memory and io of the processes themselves, summed. Only the files the
 * caller needs are read: this is the part whose cost grows with N. */
static void sample_fallback(int proc_fd, const pid_t *pids, size_t n, bool want_mem, bool want_io,
                            struct leash_sample *s) {
        uint64_t rss = 0, pss = 0, uss = 0, rb = 0, wb = 0;
        bool got_mem = false, got_io = false, by_statm = false, refused = false;
        char path[64], buf[4096];

        for (size_t i = 0; i < n; i++) {
                uint64_t a, b, c;
                if (want_mem) {
                        int r = proc_memory(proc_fd, pids[i], buf, sizeof buf, &a, &b, &c);
                        if (r >= 0) {
                                rss += a;
                                pss += b;
                                uss += c;
                                got_mem = true;
                                by_statm |= r == 1;
                        }
                }
                if (want_io) {
                        int r;
                        snprintf(path, sizeof path, "%d/io", (int) pids[i]);
                        r = read_file_at(proc_fd, path, buf, sizeof buf, NULL);
                        if (r == 0 && sample_parse_proc_io(buf, &a, &b) == 0) {
                                rb += a;
                                wb += b;
                                got_io = true;
                        }
                        /* an undumpable process's, to a leash that is not root: no other source */
                        refused |= r == -EACCES || r == -EPERM;
                }
        }
        /* an empty job uses no memory: zero is a figure, not a null */
        if (want_mem && (got_mem || n == 0)) {
                /* an undumpable process counts its whole resident set in Pss and USS: more, never less */
                const char *basis = by_statm ? STATM_BASIS : "smaps_rollup";
                set(s, LEASH_FIG_MEM_RSS, rss, basis);
                set(s, LEASH_FIG_MEM_PSS, pss, basis);
                set(s, LEASH_FIG_MEM_USS, uss, basis);
        }
        if (want_io && (got_io || n == 0 || refused)) {
                const char *basis =
                        refused ? "proc_io, in part: a process's /proc/PID/io refused (undumpable)" : "proc_io";
                set(s, LEASH_FIG_IO_READ_BYTES, rb, basis);
                set(s, LEASH_FIG_IO_WRITE_BYTES, wb, basis);
        }
        s->io_refused = want_io && refused;
}

struct walk {
        dev_t dev;
        uint64_t bytes, files;
        bool bounded;
};

static void walk_dir(int dfd, unsigned depth, struct walk *w) {
        DIR *d = fdopendir(dfd);
        struct dirent *e;

        if (!d) {
                close(dfd);
                return;
        }
        while ((e = readdir(d))) {
                struct stat st;
                if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                        continue;
                if (w->files >= SAMPLE_DISK_MAX_ENTRIES) {
                        w->bounded = true;
                        break;
                }
                if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue; /* gone meanwhile */
                w->files++;
                w->bytes += (uint64_t) st.st_blocks * 512;
                if (S_ISDIR(st.st_mode) && st.st_dev == w->dev) {
                        int sub;
                        if (depth + 1 >= SAMPLE_DISK_MAX_DEPTH) {
                                w->bounded = true;
                                continue;
                        }
                        sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
                        if (sub >= 0)
                                walk_dir(sub, depth + 1, w);
                }
        }
        closedir(d);
}

int sample_disk_usage(int dir_fd, uint64_t *ret_bytes, uint64_t *ret_files) {
        struct walk w = {0};
        struct stat st;
        int fd;

        if (fstat(dir_fd, &st) < 0)
                return negative_errno();
        w.dev = st.st_dev;
        /* a fresh open description for each walk: readdir moves its offset */
        fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        walk_dir(fd, 0, &w);
        *ret_bytes = w.bytes;
        *ret_files = w.files;
        return w.bounded ? 1 : 0;
}

static void sample_disk(int disk_fd, struct leash_sample *s) {
        uint64_t bytes, files;
        int r;

        if (disk_fd < 0)
                return;
        r = sample_disk_usage(disk_fd, &bytes, &files);
        if (r >= 0) {
                set(s, LEASH_FIG_DISK_BYTES, bytes, r ? "walk_bounded" : "walk");
                set(s, LEASH_FIG_DISK_FILES, files, r ? "walk_bounded" : "walk");
        }
}

/* A --limit procs= passed: the sample that sees it skips the per-process
 * reads (smaps_rollup and io of each process: 34 ms at 1,000 processes on an
 * idle machine, 0.1 s at 400 on a loaded one) and leaves those figures null,
 * so the soft signal is not held back by them. */
static bool procs_over(const struct leash_sample *s, uint64_t procs_limit) {
        return procs_limit && s->v[LEASH_FIG_PROCS] != LEASH_NULL && s->v[LEASH_FIG_PROCS] > procs_limit;
}

/* Without a cgroup: the figures of the processes themselves (PSS, io),
 * summed over the job's tree; the disk as with a cgroup. */
static void sample_read_tree(int proc_fd, int disk_fd, const pid_t *pids, size_t n, uint64_t procs_limit,
                             struct leash_sample *s) {
        bool over;

        set(s, LEASH_FIG_PROCS, (uint64_t) n, "process_tree");
        over = procs_over(s, procs_limit);
        if (proc_fd >= 0 && !over)
                sample_fallback(proc_fd, pids, n, true, true, s);
        if (s->v[LEASH_FIG_MEM_PSS] != LEASH_NULL)
                set(s, LEASH_FIG_MEMORY, s->v[LEASH_FIG_MEM_PSS], pss_basis(s));
        sample_disk(disk_fd, s);
        if (proc_fd >= 0 && !over) {
                (void) gpu_read(proc_fd, pids, n, &s->gpu);
                sample_gpu_figures(s);
        }
}

/* The GPU figures of the reading in s->gpu: null where no source answered;
 * a figure of the driver's "not available" makes the total null too. */
void sample_gpu_figures(struct leash_sample *s) {
        const struct gpu_reading *r = &s->gpu;
        const char *basis = r->nvml && r->drm ? "nvml+drm_fdinfo" : r->nvml ? "nvml" : "drm_fdinfo";
        uint64_t mem = 0, max = 0, util = 0;
        bool mem_known = true, util_known = false;

        if (!r->nvml && !r->drm)
                return;
        for (unsigned i = 0; i < r->n; i++) {
                const struct gpu_now *g = &r->g[i];
                if (g->mem_bytes == UINT64_MAX)
                        mem_known = false;
                else {
                        mem += g->mem_bytes;
                        max = g->mem_bytes > max ? g->mem_bytes : max;
                }
                if (g->util_pct != UINT64_MAX) {
                        util += g->util_pct;
                        util_known = true;
                }
        }
        set(s, LEASH_FIG_GPU_MEMORY, mem_known ? mem : LEASH_NULL, basis);
        set(s, LEASH_FIG_GPU_MEMORY_MAX, mem_known ? max : LEASH_NULL, basis);
        set(s, LEASH_FIG_GPU_UTIL, util_known || r->n == 0 ? util : LEASH_NULL, basis);
        set(s, LEASH_FIG_GPUS, r->n, basis);
}

static int sample_read_limited(int job_fd, int proc_fd, int disk_fd, uint64_t procs_limit, const char *not_the_jobs,
                               struct leash_sample *s, pid_t **ret_pids, size_t *ret_n);

/* The processes and threads of the job's cgroup and of every cgroup below it:
 * a job may hold cgroups of its own (a nested leash's, Slurm's steps, any a
 * job of uid 0 makes and moves itself into), and a figure of the top
 * cgroup's lists alone let such a job pass a measured limit on processes,
 * threads or (without a memory controller) memory unseen. */
struct pid_walk {
        pid_t *pids;
        size_t n_procs, n_threads, cap;
        const char *not_the_jobs; /* leash_sampling's: NULL, or the pattern */
        unsigned n_out;           /* cgroups left out by it */
        /* their figures, to take out of the job cgroup's; LEASH_NULL where
         * one of them had no such file (nothing can be taken out) */
        uint64_t out[_LEASH_FIG_MAX];
};

/* The figures a cgroup's own files give for its whole subtree: read for the
 * job cgroup, and for each cgroup not the job's, to take out of the job
 * cgroup's (less: the basis then; NULL: not taken out). */
static const struct {
        enum leash_fig f;
        const char *basis, *less;
} tree_figs[] = {
        {LEASH_FIG_CPU_USER, "cpu.stat", "cpu.stat, less the cgroups not the job's"},
        {LEASH_FIG_CPU_SYSTEM, "cpu.stat", "cpu.stat, less the cgroups not the job's"},
        {LEASH_FIG_CPU_TOTAL, "cpu.stat", "cpu.stat, less the cgroups not the job's"},
        {LEASH_FIG_THROTTLED, "cpu.stat", NULL},
        {LEASH_FIG_MEM_CURRENT, "memory.current", "memory.current, less the cgroups not the job's"},
        {LEASH_FIG_SWAP_CURRENT, "memory.swap.current", "memory.swap.current, less the cgroups not the job's"},
        {LEASH_FIG_PIDS_CURRENT, "pids.current", "pids.current, less the cgroups not the job's"},
};

/* tree_figs of the cgroup fd into v (LEASH_NULL: no such file) */
static void read_tree_figs(int fd, uint64_t v[_LEASH_FIG_MAX]) {
        char buf[4096];
        struct leash_usage u;

        account_usage_init(&u);
        if (read_file_at(fd, "cpu.stat", buf, sizeof buf, NULL) < 0 || account_parse_cpu_stat(buf, &u) < 0)
                account_usage_init(&u);
        v[LEASH_FIG_CPU_USER] = u.cpu_user_us;
        v[LEASH_FIG_CPU_SYSTEM] = u.cpu_system_us;
        v[LEASH_FIG_CPU_TOTAL] = u.cpu_usage_us;
        v[LEASH_FIG_THROTTLED] = u.cpu_throttled_us;
        v[LEASH_FIG_MEM_CURRENT] = read_u64_at(fd, "memory.current");
        v[LEASH_FIG_SWAP_CURRENT] = read_u64_at(fd, "memory.swap.current");
        v[LEASH_FIG_PIDS_CURRENT] = read_u64_at(fd, "pids.current");
}

/* A cgroup that is not the job's: what it holds, to take out of the job
 * cgroup's figures (sample_take_out); LEASH_NULL sticks where one of them
 * lacks a file (nothing can be taken out). */
static int walk_out(int fd, struct pid_walk *w) {
        uint64_t v[_LEASH_FIG_MAX];

        read_tree_figs(fd, v);
        for (size_t i = 0; i < ELEMENTSOF(tree_figs); i++) {
                enum leash_fig f = tree_figs[i].f;
                w->out[f] = v[f] == LEASH_NULL || w->out[f] == LEASH_NULL ? LEASH_NULL : w->out[f] + v[f];
        }
        w->n_out++;
        return CGROUPFS_WALK_PRUNE;
}

static int walk_lists(int fd, unsigned depth, const char *rel, void *userdata) {
        struct pid_walk *w = userdata;
        _cleanup_free_ char *text = NULL;
        _cleanup_free_ pid_t *got = NULL;
        bool top = depth == 0;
        int n;

        if (!top && w->not_the_jobs && fnmatch(w->not_the_jobs, rel, FNM_PATHNAME) == 0)
                return walk_out(fd, w);
        if (read_file_at_alloc(fd, "cgroup.procs", &text, NULL) < 0 || (n = sample_parse_pid_list(text, &got)) < 0)
                return top ? -EIO : 0; /* below: a cgroup gone while walked */
        if (n > 0) {
                if (w->n_procs + (size_t) n > w->cap) {
                        size_t cap = w->n_procs + (size_t) n + 64;
                        pid_t *p = realloc(w->pids, cap * sizeof *p);
                        if (!p)
                                return -ENOMEM;
                        w->pids = p;
                        w->cap = cap;
                }
                memcpy(w->pids + w->n_procs, got, (size_t) n * sizeof *got);
                w->n_procs += (size_t) n;
        }
        free(TAKE_PTR(text));
        if (read_file_at_alloc(fd, "cgroup.threads", &text, NULL) == 0 && (n = sample_parse_pid_list(text, NULL)) > 0)
                w->n_threads += (size_t) n;
        return 0;
}

/* The job cgroup's figures less those of the cgroups below it that are not
 * the job's (read a moment later, so the difference is clamped at 0); a
 * figure that cannot be taken out (one of them lacks the file) is left out
 * of the sample rather than given with theirs in it. */
static void sample_take_out(const struct pid_walk *w, struct leash_sample *s) {
        for (size_t i = 0; i < ELEMENTSOF(tree_figs); i++) {
                enum leash_fig f = tree_figs[i].f;
                if (!tree_figs[i].less || s->v[f] == LEASH_NULL)
                        continue;
                if (w->out[f] == LEASH_NULL)
                        set(s, f, LEASH_NULL, NULL);
                else
                        set(s, f, s->v[f] > w->out[f] ? s->v[f] - w->out[f] : 0, tree_figs[i].less);
        }
}

/* The walk stops CGROUPFS_WALK_DEPTH levels down: where a cgroup there has
 * cgroups below it (truncated), the figures are a part, and say so (and a
 * measured limit on a figure of these lists counts as passed: step_limits). */
static void sample_procs_threads(int job_fd, const char *not_the_jobs, struct leash_sample *s, pid_t **ret_pids) {
        struct pid_walk w = {.not_the_jobs = not_the_jobs};
        const char *procs = "cgroup.procs", *threads = "cgroup.threads";
        bool partial;
        int seen = cgroupfs_walk(job_fd, walk_lists, &w, &partial);

        if (seen < 0) {
                free(w.pids);
                return;
        }
        if (partial) {
                procs = "cgroup.procs, in part: the job holds cgroups deeper than leash walks";
                threads = "cgroup.threads, in part: the job holds cgroups deeper than leash walks";
        } else if (w.n_out) {
                procs = "cgroup.procs of the job's cgroups, less the cgroups not the job's";
                threads = "cgroup.threads of the job's cgroups, less the cgroups not the job's";
        } else if (seen > 1) {
                procs = "cgroup.procs of the job's cgroups";
                threads = "cgroup.threads of the job's cgroups";
        }
        s->partial = partial;
        set(s, LEASH_FIG_PROCS, w.n_procs, procs);
        set(s, LEASH_FIG_THREADS, w.n_threads, threads);
        if (w.n_out)
                sample_take_out(&w, s);
        *ret_pids = w.pids;
}

int sample_read(int job_fd, int proc_fd, int disk_fd, struct leash_sample *s, pid_t **ret_pids, size_t *ret_n) {
        return sample_read_limited(job_fd, proc_fd, disk_fd, 0, NULL, s, ret_pids, ret_n);
}

static int sample_read_limited(int job_fd, int proc_fd, int disk_fd, uint64_t procs_limit, const char *not_the_jobs,
                               struct leash_sample *s, pid_t **ret_pids, size_t *ret_n) {
        char buf[8192];
        _cleanup_free_ char *big = NULL;
        _cleanup_free_ pid_t *pids = NULL;
        struct leash_usage u;
        uint64_t tree[_LEASH_FIG_MAX];

        account_usage_init(&u);
        read_tree_figs(job_fd, tree);
        for (size_t i = 0; i < ELEMENTSOF(tree_figs); i++)
                set(s, tree_figs[i].f, tree[tree_figs[i].f], tree_figs[i].basis);
        if (read_file_at(job_fd, "memory.stat", buf, sizeof buf, NULL) == 0)
                sample_parse_memory_stat(buf, s);
        sample_procs_threads(job_fd, not_the_jobs, s, &pids);
        if (read_file_at_alloc(job_fd, "io.stat", &big, NULL) == 0 && account_parse_io_stat(big, &u) == 0) {
                set(s, LEASH_FIG_IO_READ_BYTES, u.io_rbytes, "io.stat");
                set(s, LEASH_FIG_IO_WRITE_BYTES, u.io_wbytes, "io.stat");
                set(s, LEASH_FIG_IO_READ_OPS, u.io_rios, "io.stat");
                set(s, LEASH_FIG_IO_WRITE_OPS, u.io_wios, "io.stat");
        }
        if (read_file_at(job_fd, "cpu.pressure", buf, sizeof buf, NULL) == 0)
                (void) account_parse_pressure(buf, &u.psi_cpu_some, &u.psi_cpu_full);
        if (read_file_at(job_fd, "memory.pressure", buf, sizeof buf, NULL) == 0)
                (void) account_parse_pressure(buf, &u.psi_mem_some, &u.psi_mem_full);
        if (read_file_at(job_fd, "io.pressure", buf, sizeof buf, NULL) == 0)
                (void) account_parse_pressure(buf, &u.psi_io_some, &u.psi_io_full);
        set(s, LEASH_FIG_PSI_CPU_SOME, u.psi_cpu_some, "cpu.pressure");
        set(s, LEASH_FIG_PSI_CPU_FULL, u.psi_cpu_full, "cpu.pressure");
        set(s, LEASH_FIG_PSI_MEM_SOME, u.psi_mem_some, "memory.pressure");
        set(s, LEASH_FIG_PSI_MEM_FULL, u.psi_mem_full, "memory.pressure");
        set(s, LEASH_FIG_PSI_IO_SOME, u.psi_io_some, "io.pressure");
        set(s, LEASH_FIG_PSI_IO_FULL, u.psi_io_full, "io.pressure");

        if (proc_fd >= 0 && s->v[LEASH_FIG_PROCS] != LEASH_NULL && !procs_over(s, procs_limit)) {
                bool want_mem = s->v[LEASH_FIG_MEM_CURRENT] == LEASH_NULL;
                bool want_io = s->v[LEASH_FIG_IO_WRITE_BYTES] == LEASH_NULL;
                if (want_mem || want_io)
                        sample_fallback(proc_fd, pids, s->v[LEASH_FIG_PROCS], want_mem, want_io, s);
        }
        if (s->v[LEASH_FIG_MEM_CURRENT] != LEASH_NULL)
                set(s, LEASH_FIG_MEMORY, s->v[LEASH_FIG_MEM_CURRENT], s->basis[LEASH_FIG_MEM_CURRENT]);
        else if (s->v[LEASH_FIG_MEM_PSS] != LEASH_NULL)
                set(s, LEASH_FIG_MEMORY, s->v[LEASH_FIG_MEM_PSS], pss_basis(s));

        sample_disk(disk_fd, s);
        if (s->v[LEASH_FIG_PROCS] != LEASH_NULL && !procs_over(s, procs_limit)) {
                (void) gpu_read(proc_fd, pids, s->v[LEASH_FIG_PROCS], &s->gpu);
                sample_gpu_figures(s);
        }
        if (ret_pids && s->v[LEASH_FIG_PROCS] != LEASH_NULL) {
                *ret_n = s->v[LEASH_FIG_PROCS];
                *ret_pids = TAKE_PTR(pids);
        } else if (ret_pids) {
                *ret_n = 0;
                *ret_pids = NULL;
        }
        return 0;
}

/* --- series ------------------------------------------------------------------ */

/* "1.25", "0.000125", "3": at most 6 decimals, trailing zeros trimmed */
static void format_micro(uint64_t v, char *buf, size_t size) {
        size_t n = (size_t) snprintf(buf, size, "%llu.%06llu", (unsigned long long) (v / 1000000),
                                     (unsigned long long) (v % 1000000));
        while (n > 0 && buf[n - 1] == '0')
                buf[--n] = '\0';
        if (n > 0 && buf[n - 1] == '.')
                buf[--n] = '\0';
}

static void format_cell(enum leash_fig f, uint64_t v, char *buf, size_t size) {
        if (figs[f].unit == U_UCORES || figs[f].column_in_s)
                format_micro(v, buf, size);
        else
                snprintf(buf, size, "%llu", (unsigned long long) v);
}

int series_format_header(enum leash_series_format f, char **ret) {
        char *text = NULL;
        size_t len = 0;
        FILE *m;

        if (f != LEASH_SERIES_CSV) {
                *ret = NULL;
                return 0;
        }
        m = open_memstream(&text, &len);
        if (!m)
                return -ENOMEM;
        for (int i = 0; i < _LEASH_FIG_MAX; i++)
                fprintf(m, "%s,", figs[i].column);
        fputs("last\n", m);
        if (fclose(m) != 0) {
                free(text);
                return -ENOMEM;
        }
        *ret = text;
        return 0;
}

int series_format_row(enum leash_series_format f, const struct leash_sample *s, char **ret) {
        char *text = NULL, cell[48];
        size_t len = 0;
        FILE *m = open_memstream(&text, &len);

        if (!m)
                return -ENOMEM;
        if (f == LEASH_SERIES_JSONL)
                fputc('{', m);
        for (int i = 0; i < _LEASH_FIG_MAX; i++) {
                if (s->v[i] == LEASH_NULL)
                        strcpy(cell, f == LEASH_SERIES_JSONL ? "null" : "");
                else
                        format_cell((enum leash_fig) i, s->v[i], cell, sizeof cell);
                if (f == LEASH_SERIES_JSONL)
                        fprintf(m, "\"%s\": %s, ", figs[i].column, cell);
                else
                        fprintf(m, "%s,", cell);
        }
        if (f == LEASH_SERIES_JSONL)
                fprintf(m, "\"last\": %d}\n", s->last ? 1 : 0);
        else
                fprintf(m, "%d\n", s->last ? 1 : 0);
        if (fclose(m) != 0) {
                free(text);
                return -ENOMEM;
        }
        *ret = text;
        return 0;
}

/* --- measured limits ----------------------------------------------------------- */

static const enum leash_fig limitable[] = {
        LEASH_FIG_DISK_BYTES,     LEASH_FIG_DISK_FILES,  LEASH_FIG_IO_WRITE_BYTES,  LEASH_FIG_IO_READ_BYTES,
        LEASH_FIG_IO_WRITE_OPS,   LEASH_FIG_IO_READ_OPS, LEASH_FIG_TOTAL_PROCESSES, LEASH_FIG_PROCS,
        LEASH_FIG_THREADS,        LEASH_FIG_CORES_AVG,   LEASH_FIG_MEMORY,          LEASH_FIG_MEM_RSS,
        LEASH_FIG_MEM_PSS,        LEASH_FIG_MEM_USS,     LEASH_FIG_SWAP_CURRENT,    LEASH_FIG_GPU_MEMORY,
        LEASH_FIG_GPU_MEMORY_MAX,
};

bool sample_fig_limitable(enum leash_fig f) {
        for (size_t i = 0; i < ELEMENTSOF(limitable); i++)
                if (limitable[i] == f)
                        return true;
        return false;
}

int sample_limit_parse(const char *text, enum leash_fig *ret_fig, uint64_t *ret_value, const char **ret_expected) {
        const char *eq = text ? strchr(text, '=') : NULL;
        char name[64];
        uint64_t v;
        int f, r;

        *ret_expected = "FIGURE=VALUE, FIGURE one of disk, files, io_write_bytes, io_read_bytes, io_write_ops, "
                        "io_read_ops, total_processes, procs, threads, cores_avg, memory, mem_rss, mem_pss, "
                        "mem_uss, swap_current, gpu_memory, gpu_memory_max";
        if (!eq || eq == text || (size_t) (eq - text) >= sizeof name)
                return -EINVAL;
        memcpy(name, text, (size_t) (eq - text));
        name[eq - text] = '\0';
        f = leash_fig_from_name(name);
        if (f < 0 || !sample_fig_limitable((enum leash_fig) f))
                return -EINVAL;
        switch (figs[f].unit) {
        case U_BYTES:
                *ret_expected = "a size such as 10M or 2G";
                r = parse_size(eq + 1, &v);
                break;
        case U_UCORES:
                *ret_expected = "a number of cores such as 0.5 or 2";
                r = parse_cpus(eq + 1, &v);
                break;
        default:
                *ret_expected = "a whole number";
                r = parse_u64(eq + 1, &v);
                break;
        }
        if (r < 0)
                return r;
        if (v == 0 || v == PARSE_MAX) {
                *ret_expected = "a value above 0 (a limit of max is no limit: leave it out)";
                return -EINVAL;
        }
        *ret_fig = (enum leash_fig) f;
        *ret_value = v;
        return 0;
}

void sample_fig_format(enum leash_fig f, uint64_t v, char *buf, size_t size) {
        if (figs[f].unit == U_BYTES)
                format_size(v, buf, size);
        else if (figs[f].unit == U_UCORES || figs[f].column_in_s)
                format_micro(v, buf, size);
        else
                snprintf(buf, size, "%llu", (unsigned long long) v);
}

/* --- the sampler ---------------------------------------------------------------- */

struct sampler {
        struct leash_sampling cfg;
        int job_fd, proc_fd, disk_fd;
        uint64_t start_ns, next_ns, step;
        uint64_t below_ns;      /* the start of the last sample under every limit */
        uint64_t last_begin_ns; /* the start of the previous sample, 0 before the first */
        uint64_t prev_t_us, prev_cpu_us;
        pid_t *seen; /* sorted: the distinct processes seen so far */
        size_t n_seen, cap_seen;
        bool series_failed, header_done;
        bool forked; /* sampler_set_forked */
        struct leash_sampling_result res;
};

void sampler_set_forked(struct sampler *s) {
        if (s)
                s->forked = true;
}

int sampler_new(const struct leash_sampling *cfg, struct sampler **ret, struct leash_error *err) {
        _cleanup_(sampler_freep) struct sampler *s = NULL;
        bool any_limit = false;

        *ret = NULL;
        for (int f = 0; f < _LEASH_FIG_MAX; f++)
                if (cfg->limit[f] != 0)
                        any_limit = true;
        if (!cfg->interval_ns && !any_limit)
                return 0;
        s = calloc(1, sizeof *s);
        if (!s)
                return -ENOMEM;
        s->cfg = *cfg;
        if (!s->cfg.interval_ns)
                s->cfg.interval_ns = LEASH_SAMPLE_DEFAULT_NS;
        s->job_fd = s->disk_fd = -1;
        s->next_ns = UINT64_MAX;
        s->proc_fd = HELD_FD(open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (cfg->disk_path) {
                s->disk_fd = HELD_FD(open(cfg->disk_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY));
                if (s->disk_fd < 0) {
                        int r = negative_errno();
                        if (err) {
                                err->step = "open the --sample-disk directory";
                                snprintf(err->detail, sizeof err->detail, "%s", cfg->disk_path);
                                err->error = -r;
                        }
                        return r;
                }
        }
        s->res.interval_ns = s->cfg.interval_ns;
        s->res.limit_reached = -1;
        for (int f = 0; f < _LEASH_FIG_MAX; f++)
                s->res.peak[f] = LEASH_NULL;
        *ret = TAKE_PTR(s);
        return 0;
}

void sampler_start(struct sampler *s, int job_fd, uint64_t start_ns) {
        s->job_fd = job_fd;
        s->start_ns = s->below_ns = start_ns;
        s->next_ns = start_ns + s->cfg.interval_ns;
}

uint64_t sampler_next(const struct sampler *s) {
        return s ? s->next_ns : UINT64_MAX;
}

/* merges the sorted pid list into the sorted seen set */
static void remember(struct sampler *s, pid_t *pids, size_t n) {
        for (size_t i = 0; i < n; i++) {
                size_t lo = 0, hi = s->n_seen;
                while (lo < hi) {
                        size_t mid = (lo + hi) / 2;
                        if (s->seen[mid] < pids[i])
                                lo = mid + 1;
                        else
                                hi = mid;
                }
                if (lo < s->n_seen && s->seen[lo] == pids[i])
                        continue;
                if (s->n_seen == s->cap_seen) {
                        size_t cap = s->cap_seen ? s->cap_seen * 2 : 256;
                        pid_t *p = cap <= 4u << 20 ? realloc(s->seen, cap * sizeof *p) : NULL;
                        if (!p)
                                return; /* the figure stays a lower bound */
                        s->seen = p;
                        s->cap_seen = cap;
                }
                memmove(s->seen + lo + 1, s->seen + lo, (s->n_seen - lo) * sizeof *s->seen);
                s->seen[lo] = pids[i];
                s->n_seen++;
        }
}

static void write_all_fd(int fd, const char *t, bool *failed) {
        size_t len = strlen(t);
        while (len && !*failed) {
                ssize_t n = write(fd, t, len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        *failed = true; /* a full disk stops the series, not the job */
                        return;
                }
                t += n;
                len -= (size_t) n;
        }
}

/* the CPU figures of this sample: cores over the last step and on average */
static void step_cores(struct sampler *s, struct leash_sample *smp, uint64_t t_us) {
        uint64_t cpu = smp->v[LEASH_FIG_CPU_TOTAL];

        if (cpu == LEASH_NULL || t_us == 0)
                return;
        if (t_us > s->prev_t_us && cpu >= s->prev_cpu_us)
                set(smp, LEASH_FIG_CORES,
                    (uint64_t) ((double) (cpu - s->prev_cpu_us) * 1e6 / (double) (t_us - s->prev_t_us)), "cpu.stat");
        set(smp, LEASH_FIG_CORES_AVG, (uint64_t) ((double) cpu * 1e6 / (double) t_us), "cpu.stat");
        s->prev_t_us = t_us;
        s->prev_cpu_us = cpu;
}

/* the pids seen (cgroup.procs is not sorted), and what needs them */
static void step_pids(struct sampler *s, struct leash_sample *smp, pid_t *pids, size_t n, uint64_t t_us) {
        if (pids) {
                for (size_t i = 1; i < n; i++)
                        for (size_t j = i; j > 0 && pids[j - 1] > pids[j]; j--) {
                                pid_t x = pids[j];
                                pids[j] = pids[j - 1];
                                pids[j - 1] = x;
                        }
                remember(s, pids, n);
        }
        if (smp->v[LEASH_FIG_PROCS] != LEASH_NULL) {
                set(smp, LEASH_FIG_TOTAL_PROCESSES, s->n_seen, "sampled_pids");
                gpu_track_add(&s->res.gpu, &smp->gpu, t_us);
                sample_gpu_figures(smp); /* DRM utilisation needs the previous sample */
        }
}

/* A figure summed over the job's processes, read when it had none: zero is
 * true of that instant, not of the job, so it is no peak (a call shorter than
 * one interval, seen only by the last sample after it ended, read a memory
 * peak of 0 for the 32 MiB it touched). */
static bool empty_sum(const struct leash_sample *smp, enum leash_fig f) {
        const char *b = smp->basis[f];

        return smp->v[LEASH_FIG_PROCS] == 0 && b &&
               (strcmp(b, "smaps_rollup") == 0 || strncmp(b, "sampled_pss", 11) == 0 ||
                strncmp(b, "sampled_uss", 11) == 0 || strcmp(b, "proc_io") == 0);
}

/* the sample's way out: peaks, the series row, the caller's callback */
static void step_record(struct sampler *s, const struct leash_sample *smp, struct leash_job *job) {
        for (int f = 0; f < _LEASH_FIG_MAX; f++)
                if (smp->v[f] != LEASH_NULL && !empty_sum(smp, f) &&
                    (s->res.peak[f] == LEASH_NULL || smp->v[f] > s->res.peak[f])) {
                        s->res.peak[f] = smp->v[f];
                        s->res.peak_basis[f] = smp->basis[f];
                }
        s->res.samples++;
        if (s->cfg.series_fd >= 0 && !s->series_failed) {
                _cleanup_free_ char *row = NULL;
                if (!s->header_done) {
                        _cleanup_free_ char *h = NULL;
                        s->header_done = true;
                        if (series_format_header(s->cfg.series_format, &h) == 0 && h)
                                write_all_fd(s->cfg.series_fd, h, &s->series_failed);
                }
                if (series_format_row(s->cfg.series_format, smp, &row) == 0)
                        write_all_fd(s->cfg.series_fd, row, &s->series_failed);
        }
        if (s->cfg.fn)
                s->cfg.fn(job, smp, s->cfg.userdata);
}

/* A figure read from the job's pid lists (counts, the per-process sums, the
 * GPUs' processes), not from a file of the whole cgroup tree: where the job
 * hid cgroups deeper than the walk (smp->partial), or a process's io
 * (smp->io_refused), its limit cannot be judged, and counts as passed,
 * since a job that can undo a limit is not limited by it. */
static bool from_pid_lists(const struct leash_sample *smp, enum leash_fig f) {
        static const char *const whole_tree[] = {"cpu.stat", "memory.current", "memory.swap.current", "pids.current",
                                                 "io.stat"};
        const char *b = smp->basis[f];

        if (f == LEASH_FIG_DISK_BYTES || f == LEASH_FIG_DISK_FILES || f == LEASH_FIG_CORES_AVG)
                return false;
        /* "memory.current", or "memory.current, less the cgroups not the job's" */
        for (size_t i = 0; b && i < ELEMENTSOF(whole_tree); i++) {
                size_t n = strlen(whole_tree[i]);
                if (strncmp(b, whole_tree[i], n) == 0 && (b[n] == '\0' || b[n] == ','))
                        return false;
        }
        return true;
}

/* Why f's limit cannot be judged on this sample (LEASH_JUDGED: it can). */
static enum leash_unjudged unjudged(const struct leash_sample *smp, enum leash_fig f) {
        if (smp->partial && from_pid_lists(smp, f))
                return LEASH_UNJUDGED_DEEP_CGROUPS;
        if (smp->io_refused && (f == LEASH_FIG_IO_READ_BYTES || f == LEASH_FIG_IO_WRITE_BYTES) &&
            from_pid_lists(smp, f))
                return LEASH_UNJUDGED_IO_REFUSED;
        return LEASH_JUDGED;
}

/* the first measured limit this sample passed (-1: none, or one passed
 * before). The crossing happened after the last sample that read every
 * limited figure under its limit began, and was seen when this one's read
 * ended: that span is what the report gives as how late it can be. */
static int step_limits(struct sampler *s, const struct leash_sample *smp, uint64_t begin, uint64_t end) {
        if (s->res.limit_reached >= 0)
                return -1;
        for (int f = 0; f < _LEASH_FIG_MAX; f++)
                if (s->cfg.limit[f] != 0 && smp->v[f] != LEASH_NULL &&
                    (smp->v[f] > s->cfg.limit[f] || unjudged(smp, (enum leash_fig) f))) {
                        s->res.limit_reached = f;
                        s->res.limit_value_at = smp->v[f];
                        s->res.limit_seen_ns = end - s->start_ns;
                        s->res.limit_below_ns = s->below_ns - s->start_ns;
                        s->res.limit_read_ns = end - begin;
                        s->res.limit_partial =
                                smp->v[f] > s->cfg.limit[f] ? LEASH_JUDGED : unjudged(smp, (enum leash_fig) f);
                        return f;
                }
        s->below_ns = begin;
        return -1;
}

/* the next step on the grid, skipping steps a slow sample overran; a read
 * that took more than half an interval delays the next one by as long as it
 * took, so leash spends at most half its wall time reading (a 1,000-process
 * tree without a cgroup costs tens of ms a sample), and the report says so */
static void step_schedule(struct sampler *s, uint64_t begin, uint64_t end, bool last) {
        uint64_t iv = s->cfg.interval_ns, took = end - begin;

        if (s->last_begin_ns && begin - s->last_begin_ns > s->res.gap_max_ns)
                s->res.gap_max_ns = begin - s->last_begin_ns;
        s->last_begin_ns = begin;
        if (took > s->res.read_max_ns)
                s->res.read_max_ns = took;
        s->next_ns += iv;
        if (s->next_ns <= end)
                s->next_ns = end + iv - (end - s->start_ns) % iv;
        if (took > iv / 2 && s->next_ns < end + took) {
                s->next_ns = end + took;
                s->res.stretched++;
        }
        if (last)
                s->next_ns = UINT64_MAX;
}

int sampler_step(struct sampler *s, uint64_t now, bool last, struct leash_job *job) {
        struct leash_sample smp;
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0;
        uint64_t t_us, cpu0 = now_ns(CLOCK_THREAD_CPUTIME_ID), begin = now_ns(CLOCK_MONOTONIC), end;
        int passed;

        if (begin < now) /* a caller's clock read ahead of ours: never */
                begin = now;
        sample_init(&smp);
        smp.step = s->step++;
        smp.last = last;
        t_us = (begin - s->start_ns) / NSEC_PER_USEC;
        set(&smp, LEASH_FIG_T, t_us, "clock");
        if (s->job_fd < 0 && job) { /* no cgroup: the job's process tree (tree.c) */
                if (tree_pids(job, &pids, &n) == 0)
                        sample_read_tree(s->proc_fd, s->disk_fd, pids, n, s->cfg.limit[LEASH_FIG_PROCS], &smp);
        } else
                (void) sample_read_limited(s->job_fd, s->proc_fd, s->disk_fd, s->cfg.limit[LEASH_FIG_PROCS],
                                           s->cfg.not_the_jobs, &smp, &pids, &n);
        end = now_ns(CLOCK_MONOTONIC);
        /* a forked job's PSS holds a share of every page it still shares with
         * its caller (half of a 400 MB caller's heap): its USS, the pages only
         * one of its processes maps, is its own (a lower bound: pages its
         * processes share among themselves are left out) */
        if (s->forked && smp.basis[LEASH_FIG_MEMORY] && strncmp(smp.basis[LEASH_FIG_MEMORY], "sampled_pss", 11) == 0)
                set(&smp, LEASH_FIG_MEMORY, smp.v[LEASH_FIG_MEM_USS],
                    strcmp(smp.basis[LEASH_FIG_MEMORY], "sampled_pss") == 0 ? "sampled_uss" : "sampled_uss_rss");
        step_cores(s, &smp, t_us);
        step_pids(s, &smp, pids, n, t_us);
        step_record(s, &smp, job);
        passed = step_limits(s, &smp, begin, end);
        step_schedule(s, begin, end, last);
        s->res.cost_ns += now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
        return passed;
}

void sampler_result(const struct sampler *s, struct leash_sampling_result *ret) {
        if (!s) {
                memset(ret, 0, sizeof *ret);
                ret->limit_reached = -1;
                for (int f = 0; f < _LEASH_FIG_MAX; f++)
                        ret->peak[f] = LEASH_NULL;
                return;
        }
        *ret = s->res;
}

void sampler_free(struct sampler *s) {
        if (!s)
                return;
        if (s->proc_fd >= 0)
                heldfd_close(s->proc_fd);
        if (s->disk_fd >= 0)
                heldfd_close(s->disk_fd);
        free(s->seen);
        free(s);
}

void sampler_set_fn(struct sampler *s, leash_sample_fn fn, void *userdata) {
        s->cfg.fn = fn;
        s->cfg.userdata = userdata;
}

void sampler_freep(struct sampler **s) {
        sampler_free(*s);
        *s = NULL;
}
