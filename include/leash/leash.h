/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libleash: run a command or a function in its own cgroup under limits,
 * supervise it, and account for what it used, from the kernel's own figures.
 *
 *   leash_config   settings by key and value, with the names, syntax and
 *                  precedence of `leash run` and its INI profiles
 *                  (built-in < leash.ini < profile < what the caller set);
 *   leash_job      one job: created from a config (cgroup made, limits
 *                  written, nothing runs yet), then started (a command),
 *                  forked into (a function), or adopted (a cgroup the caller
 *                  already has); supervised by leash_job_wait() or from the
 *                  caller's event loop (leash_job_fd() + leash_job_dispatch());
 *                  finished (accounted, cgroup removed); reported.
 *
 * Rules the library keeps (see libleash(3)): every call returns >= 0 or
 * -errno and fills struct leash_error when it can say more; it never prints
 * or exits; it keeps no process-wide state: the caller's signal mask and
 * dispositions are left alone, no getenv(), and every process it creates
 * (the job, its watchdog) has exit signal 0 and is handled through a pidfd,
 * so a host's waitpid(-1) never reaps one. Objects are not shared between
 * threads unless said; distinct objects may be used from distinct threads.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LEASH_NULL UINT64_MAX /* a figure the kernel did not give */

/* Every limit leash knows. The order is the report's order. */
enum leash_limit {
        LEASH_LIMIT_MEMORY,      /* bytes, memory.max */
        LEASH_LIMIT_MEMORY_HIGH, /* bytes, memory.high */
        LEASH_LIMIT_SWAP,        /* bytes, memory.swap.max */
        LEASH_LIMIT_PIDS,        /* count, pids.max */
        LEASH_LIMIT_CPUS,        /* millionths of a core, cpu.max */
        LEASH_LIMIT_CPU_TIME,    /* ns of user+system CPU of the whole tree */
        LEASH_LIMIT_WALL_TIME,   /* ns of wall-clock time */
        LEASH_LIMIT_NOFILE,      /* RLIMIT_NOFILE */
        LEASH_LIMIT_FSIZE,       /* bytes, RLIMIT_FSIZE */
        LEASH_LIMIT_CORE,        /* bytes, RLIMIT_CORE */
        _LEASH_LIMIT_MAX,
};

enum leash_enforcer {
        LEASH_BY_NONE,   /* asked for, but nothing here can enforce it */
        LEASH_BY_CGROUP, /* a cgroup controller file */
        LEASH_BY_RLIMIT, /* a per-process rlimit (weaker: per process, not per tree) */
        LEASH_BY_LEASH,  /* the supervisor itself (time limits) */
};

/* ISOLATE: isolate(1)'s meta-file keys and meanings, for judges built on it */
enum leash_format { LEASH_FORMAT_JSON, LEASH_FORMAT_KV, LEASH_FORMAT_TEXT, LEASH_FORMAT_ISOLATE };

/* Why a job ended. New values are only ever added at the end. */
enum leash_reason {
        LEASH_REASON_OK,
        LEASH_REASON_EXIT,
        LEASH_REASON_SIGNAL,
        LEASH_REASON_WALL_TIME,
        LEASH_REASON_CPU_TIME,
        LEASH_REASON_MEMORY,
        LEASH_REASON_PIDS,
        LEASH_REASON_INTERRUPTED,
        LEASH_REASON_SETUP_ERROR,
        LEASH_REASON_EXEC_ERROR,
        LEASH_REASON_SECCOMP,  /* SIGSYS from the job's seccomp filter */
        LEASH_REASON_KILLED,   /* the caller ended it (leash_job_kill) */
        LEASH_REASON_MEASURED, /* a limit on a sampled figure (config key "limit") */
        LEASH_REASON_FSIZE,    /* the main process died of SIGXFSZ under the job's RLIMIT_FSIZE */
        _LEASH_REASON_MAX,
};

struct leash_error {
        const char *step; /* "create the job cgroup", "write a cgroup limit", ... (static text) */
        char detail[256]; /* a path or value, may be empty */
        int error;        /* positive errno */
};

/* ---- settings ----------------------------------------------------------- */

struct leash_config;

/* Built-in defaults; no file is read until a job is made from it. */
int leash_config_new(struct leash_config **ret);
void leash_config_free(struct leash_config *c);

/* One key of the `leash run` table (leash.ini(5)): "memory" = "2G",
 * "wall-time" = "90s", "seccomp" = "no-network", "profile" = "hpo-trial",
 * "profile-file" = PATH (may repeat). Flags take "true"/"false" (NULL =
 * true); list keys ("env", "unsetenv") add one value per call. The value is
 * checked now: -EINVAL/-ERANGE with err->detail "VALUE: expected ...",
 * -ENOENT for an unknown key. Values set here win over the profile's,
 * whatever the order of the calls. */
int leash_config_set(struct leash_config *c, const char *key, const char *value, struct leash_error *err);
/* The effective value as `leash profiles show` writes it, profile applied. */
int leash_config_get(const struct leash_config *c, const char *key, char **ret_value, struct leash_error *err);
/* Where leash.ini and profiles.d/ are read from (NULL: SYSCONFDIR/leash), and
 * a per-user profiles.d (NULL: none). The library reads no environment
 * variable: callers that honour LEASH_CONFIG_DIR pass it here. */
int leash_config_set_paths(struct leash_config *c, const char *config_dir, const char *user_dir);

/* ---- jobs ---------------------------------------------------------------- */

struct leash_job;

/* Plans how each limit is enforced (a `strict` config refuses here), creates
 * the job cgroup under the configured parent and writes its limits. Nothing
 * runs yet. On failure nothing is left behind. */
int leash_job_new(const struct leash_config *c, struct leash_job **ret, struct leash_error *err);

enum {
        LEASH_ADOPT_REMOVE = 1 << 0, /* leash_job_finish() removes the cgroup too */
        /* The cgroup stays its owner's: it may be empty now and get processes
         * later (a batch scheduler's job between its steps), so the job never
         * ends by itself; its owner ends it with leash_job_finish(), which then
         * neither kills nor waits for what runs in it. No watchdog: if the
         * caller dies, the owner cleans up. No main process can be started. */
        LEASH_ADOPT_OWNED = 1 << 1,
};
/* Takes over a cgroup the caller already has (absolute path, or relative to
 * the cgroup2 root): the config's cgroup limits are written to it, the time
 * limits are counted from now, and it may have no main process at all: the
 * job then ends when the cgroup is empty (or at leash_job_kill()), unless
 * LEASH_ADOPT_OWNED. */
int leash_job_adopt(const struct leash_config *c, const char *cgroup, unsigned flags, struct leash_job **ret,
                    struct leash_error *err);

/* Starts argv (PATH searched) inside the job cgroup with the sandbox applied.
 * 0: it runs. -errno with err filled: it did not; the job has then ended
 * with reason LEASH_REASON_EXEC_ERROR (exit code 126/127) or
 * LEASH_REASON_SETUP_ERROR (125): finish and report it as usual. */
int leash_job_start(struct leash_job *j, char *const argv[], struct leash_error *err);

/* Forks the caller into the job: returns 0 in the child, already inside the
 * job cgroup with rlimits and the sandbox applied (the child should end with
 * _exit()); the child's pid in the parent; -errno when no child runs. The
 * parent does not wait for the child's setup (rlimits, session, sandbox):
 * a child that fails it exits at once without running the caller's code,
 * and the job ends with LEASH_REASON_SETUP_ERROR (exit code 125), the
 * failed step and errno in the report's "exit". (Where the kernel
 * lacks clone3's CLONE_INTO_CGROUP, the parent waits, and returns -errno
 * for a failed setup, the job ended as with leash_job_start.) A caller
 * with one thread gets a child made by clone3(CLONE_INTO_CGROUP) in its fork
 * form, exit signal 0: glibc's fork() would take no lock either, but no
 * pthread_atfork handler runs. A caller that has (had) more threads
 * (__libc_single_threaded false) gets one cloned into the cgroup from a
 * copy made by glibc's fork(), which takes the malloc and stdio locks and
 * runs the atfork handlers, so the child may call malloc (a kernel without
 * CLONE_INTO_CGROUP: the fork's child, which moves itself into the cgroup
 * before this call returns); its exit signal is SIGCHLD, as any fork's:
 * a waitpid(-1) or an ignored SIGCHLD of the caller's may take its status,
 * which the report then gives as unknown. */
pid_t leash_job_fork(struct leash_job *j, struct leash_error *err);
/* The child of leash_job_fork() inherits none of the descriptors libleash
 * holds (of this job or any other of the process), nor those marked with
 * leash_fd_private(fd, true); every other fd of the caller it inherits as
 * fork(2) gives it. Mark an fd before another thread may fork; close a
 * marked fd with leash_fd_close() (unmarked and closed at once). 0 or
 * -errno. */
int leash_fd_private(int fd, bool on);
int leash_fd_close(int fd);

/* A file descriptor that becomes readable when the job needs
 * leash_job_dispatch() (a process exited, a deadline came). */
int leash_job_fd(struct leash_job *j);
/* Handles what is due without blocking. 1 when the job has ended (its main
 * process was reaped, or an adopted cgroup without one became empty), 0
 * while it runs, -errno. */
int leash_job_dispatch(struct leash_job *j);
/* Blocks until the job has ended. 0 or -errno. */
int leash_job_wait(struct leash_job *j);

enum leash_kill {
        LEASH_KILL_LADDER, /* the soft signal now, SIGKILL to the whole tree after the grace */
        LEASH_KILL_NOW,    /* SIGKILL to the whole tree now */
};
/* Ends the job on the caller's behalf (reason LEASH_REASON_KILLED unless a
 * limit already ended it). A ladder already running is cut short by
 * LEASH_KILL_NOW. */
int leash_job_kill(struct leash_job *j, enum leash_kill how);
/* As when `leash run` receives signal sig: sig itself to every process of
 * the job, SIGKILL after the grace (at once when a ladder already runs or on
 * a second call); reason
 * LEASH_REASON_INTERRUPTED, exit code 128 + sig. On a job whose main process
 * has ended but that is not finished yet, and that no limit or kill ended,
 * it signals nothing and only records the interruption (the signal that
 * stopped leash stopped the job first). */
int leash_job_interrupt(struct leash_job *j, int sig);
/* Sends sig to every process of the job (the main process through its
 * pidfd, wherever it is), nothing more: no ladder, no reason. `leash run`
 * passes on what the terminal sends, since the job runs in a session of its
 * own. Returns how many processes were signalled. */
int leash_job_signal(struct leash_job *j, int sig);

/* Kills what is left in the cgroup, waits for it to empty, reads the
 * accounting and removes the cgroup (an adopted one only with
 * LEASH_ADOPT_REMOVE), then stops the watchdog and closes the job's
 * descriptors (leash_job_fd() returns -EBADF after it: take it out of an
 * event loop first). Called on a job that has not ended, it kills it first.
 * Afterwards the results below are final. */
int leash_job_finish(struct leash_job *j, struct leash_error *err);
/* Kills and finishes the job when that was not done, then frees it. */
void leash_job_free(struct leash_job *j);

/* ---- results ------------------------------------------------------------- */

/* The report of `leash run` (schema of leash(1), REPORT FORMAT): malloc'd. */
int leash_job_report(const struct leash_job *j, enum leash_format format, char **ret_text);
/* One line on how a limit ended the job, or NULL in *ret_text when none did. */
int leash_job_summary(const struct leash_job *j, char **ret_text);
/* One line per limit enforced weaker than asked here (no controller), each
 * ending in a newline, as `leash run` prints them; "" when none. malloc'd.
 * Valid from leash_job_new on. */
int leash_job_warnings(const struct leash_job *j, char **ret_text);

enum leash_reason leash_job_reason(const struct leash_job *j);
/* What `leash run` would exit with: the command's code, 124 (time limit),
 * 125/126/127, or 128 + N. */
int leash_job_exit_code(const struct leash_job *j);
/* The main process's exit status, -1 when it did not exit (or none). */
int leash_job_status(const struct leash_job *j);
/* The signal that ended the main process, 0 when none. */
int leash_job_term_signal(const struct leash_job *j);
pid_t leash_job_pid(const struct leash_job *j);
/* The main process's pidfd (owned by the job), -1 when none. */
int leash_job_pidfd(const struct leash_job *j);
/* The job cgroup's absolute path. */
const char *leash_job_cgroup(const struct leash_job *j);
/* 1 once the job has ended, 0 before. */
int leash_job_ended(const struct leash_job *j);

enum leash_usage_figure {
        LEASH_USAGE_WALL_NS,
        LEASH_USAGE_CPU_US, /* user + system, the whole tree */
        LEASH_USAGE_CPU_USER_US,
        LEASH_USAGE_CPU_SYSTEM_US,
        LEASH_USAGE_MEMORY_PEAK, /* bytes */
        LEASH_USAGE_SWAP_PEAK,   /* bytes */
        LEASH_USAGE_PIDS_PEAK,
        LEASH_USAGE_OOM_KILLS,
        LEASH_USAGE_IO_READ_BYTES,
        LEASH_USAGE_IO_WRITE_BYTES,
        _LEASH_USAGE_MAX,
};
/* A figure after leash_job_finish(), LEASH_NULL when the kernel gave none. */
uint64_t leash_job_usage(const struct leash_job *j, enum leash_usage_figure f);
/* The limit the job was given (its enum's unit), LEASH_NULL when none. */
uint64_t leash_job_limit(const struct leash_job *j, enum leash_limit l);

/* ---- sampling (leash(1), SAMPLING) ---------------------------------------
 * A sample exposes every figure by its enum. leash_sample_get() returns the
 * figure in its integer unit (leash_fig_unit(): "us", "ucores" = millionths
 * of a core, "bytes", "count"), or LEASH_NULL when the kernel did not give
 * it (a hybrid host has no memory, pids or io controller);
 * leash_sample_value() returns it in the unit of its series column
 * (leash_fig_column(): seconds, cores, bytes, count), NAN when null. */

/* The order is the series' column order. Never renumbered: new figures go
 * before _LEASH_FIG_MAX. */
enum leash_fig {
        LEASH_FIG_T,            /* us since the job started: t_s */
        LEASH_FIG_CPU_USER,     /* us, cumulative, cpu.stat */
        LEASH_FIG_CPU_SYSTEM,   /* us, cumulative */
        LEASH_FIG_CPU_TOTAL,    /* us, cumulative (usage_usec) */
        LEASH_FIG_CORES,        /* ucores: CPU used since the previous sample / time since it */
        LEASH_FIG_MEM_CURRENT,  /* bytes, memory.current */
        LEASH_FIG_MEM_ANON,     /* bytes, memory.stat */
        LEASH_FIG_MEM_FILE,     /* bytes */
        LEASH_FIG_MEM_KERNEL,   /* bytes */
        LEASH_FIG_MEM_SHMEM,    /* bytes */
        LEASH_FIG_MEM_SOCK,     /* bytes */
        LEASH_FIG_SWAP_CURRENT, /* bytes, memory.swap.current */
        LEASH_FIG_PIDS_CURRENT, /* count of tasks (threads), pids.current */
        LEASH_FIG_PROCS,        /* count of processes in cgroup.procs */
        LEASH_FIG_IO_READ_BYTES,
        LEASH_FIG_IO_WRITE_BYTES,
        LEASH_FIG_IO_READ_OPS,
        LEASH_FIG_IO_WRITE_OPS,
        LEASH_FIG_THROTTLED, /* us, cpu.stat throttled_usec */
        LEASH_FIG_PSI_CPU_SOME,
        LEASH_FIG_PSI_CPU_FULL,
        LEASH_FIG_PSI_MEM_SOME,
        LEASH_FIG_PSI_MEM_FULL,
        LEASH_FIG_PSI_IO_SOME,
        LEASH_FIG_PSI_IO_FULL,
        LEASH_FIG_DISK_BYTES, /* bytes allocated under the --sample-disk directory */
        LEASH_FIG_DISK_FILES, /* entries under it */
        /* added by leash beyond the shared contract */
        LEASH_FIG_THREADS,         /* count of threads in cgroup.threads */
        LEASH_FIG_MEM_RSS,         /* bytes: sum of the processes' Rss (smaps_rollup), fallback only */
        LEASH_FIG_MEM_PSS,         /* bytes: sum of Pss */
        LEASH_FIG_MEM_USS,         /* bytes: sum of Private_Clean + Private_Dirty */
        LEASH_FIG_CORES_AVG,       /* ucores: cpu_total / t */
        LEASH_FIG_TOTAL_PROCESSES, /* count of distinct processes seen by the samples so far */
        LEASH_FIG_MEMORY,          /* bytes: memory.current, or the Pss sum where there is none */
        LEASH_FIG_GPU_MEMORY,      /* bytes: the job's memory on all GPUs (NVML, DRM fdinfo) */
        LEASH_FIG_GPU_MEMORY_MAX,  /* bytes: the job's memory on the GPU where it uses most */
        LEASH_FIG_GPU_UTIL,        /* count: the job's utilisation in percent, summed over GPUs */
        LEASH_FIG_GPUS,            /* count: GPUs the job uses now */
        _LEASH_FIG_MAX,
};

struct leash_sample; /* opaque: valid only during the callback */

uint64_t leash_sample_get(const struct leash_sample *s, enum leash_fig f);
double leash_sample_value(const struct leash_sample *s, enum leash_fig f);
/* 0 for the first sample */
uint64_t leash_sample_step(const struct leash_sample *s);
/* true for the sample taken when the main process ended */
bool leash_sample_last(const struct leash_sample *s);
/* where a figure came from in this sample: "memory.current", "smaps_rollup",
 * "cgroup.procs", ...; NULL when null */
const char *leash_sample_basis(const struct leash_sample *s, enum leash_fig f);

/* "cpu_user" */
const char *leash_fig_name(enum leash_fig f);
/* unit of leash_sample_get: "us", "ucores", "bytes" or "count" */
const char *leash_fig_unit(enum leash_fig f);
/* the series column, unit as suffix: "cpu_user_s", "cores", "mem_current_bytes" */
const char *leash_fig_column(enum leash_fig f);
/* by name or column name; -EINVAL when unknown */
int leash_fig_from_name(const char *name);

/* Called after each sample is taken (from leash_job_dispatch/wait), before
 * the measured limits are checked. The sample is valid during the call. */
struct leash_job;
typedef void (*leash_sample_fn)(struct leash_job *job, const struct leash_sample *s, void *userdata);
/* Sets the callback of a job (before it starts); sampling itself is asked for
 * with the config keys "sample" (interval) and "limit" (FIGURE=VALUE). */
int leash_job_set_sample_fn(struct leash_job *j, leash_sample_fn fn, void *userdata);

const char *leash_reason_to_string(enum leash_reason r);
/* the report's reason of a finished job: leash_reason_to_string, or the
 * figure a --limit named ("disk") for LEASH_REASON_MEASURED */
const char *leash_job_reason_name(const struct leash_job *j);
const char *leash_limit_to_string(enum leash_limit l);
const char *leash_enforcer_to_string(enum leash_enforcer e);
const char *leash_version(void);

#ifdef __cplusplus
}
#endif
