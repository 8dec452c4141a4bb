/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libleash inside: the public API (<leash/leash.h>) plus what the engine's
 * modules and the CLI share but a program embedding the library never sees:
 * the job specification the engine runs from (struct leash_spec, built by
 * the settings layer), the result record, host discovery. The library never
 * prints and never exits: every call returns 0 (or a positive count) or
 * -errno, and fills struct leash_error with the step that failed.
 */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <leash/leash.h>

#include "../sandbox/sandbox-spec.h"
#include "hardware/devfilter.h"
#include "hardware/gpu.h"

#define LEASH_MAX UINT64_MAX /* "max": explicitly unlimited */

/* Sampling (src/engine/sample/sample.c): what to sample, and what it measured. */
enum leash_series_format { LEASH_SERIES_CSV, LEASH_SERIES_JSONL };

/* What to sample: part of struct leash_config. interval_ns 0 = no sampling
 * (unless a measured limit is set: then LEASH_SAMPLE_DEFAULT_NS). */
struct leash_sampling {
        uint64_t interval_ns;
        const char *disk_path; /* --sample-disk: opened before the job starts */
        int series_fd;         /* -1 = none; written a row per sample, never closed by leash */
        enum leash_series_format series_format;
        leash_sample_fn fn;
        void *userdata;
        /* --limit FIGURE=VALUE: 0 = none, else the value in the figure's unit */
        uint64_t limit[_LEASH_FIG_MAX];
        /* NULL, or a pattern (fnmatch, FNM_PATHNAME) of the cgroups below the
         * job's that hold none of its processes (Slurm's mode nest: its
         * slurmstepd in each step_<S>/slurm): not walked, and their processes,
         * threads, memory, swap, pids and CPU time taken out of the figures */
        const char *not_the_jobs;
};

#define LEASH_SAMPLE_DEFAULT_NS (1000000000ULL) /* with --limit and no --sample */

/* Why a measured limit was counted as passed without being judged: its
 * figure could not be read whole. */
enum leash_unjudged {
        LEASH_JUDGED,
        LEASH_UNJUDGED_DEEP_CGROUPS, /* the job holds cgroups deeper than the walk (sample.c) */
        LEASH_UNJUDGED_IO_REFUSED,   /* a process's /proc/PID/io refused: undumpable, leash not root */
        _LEASH_UNJUDGED_MAX,
};
/* Its words, for the reports; NULL for LEASH_JUDGED. */
const char *leash_unjudged_to_string(enum leash_unjudged u);

/* What sampling measured over the whole run: part of struct leash_result. */
struct leash_sampling_result {
        uint64_t interval_ns; /* 0: the job was not sampled */
        uint64_t samples;
        uint64_t peak[_LEASH_FIG_MAX]; /* largest value seen, LEASH_NULL when never given */
        const char *peak_basis[_LEASH_FIG_MAX];
        int limit_reached;       /* the enum leash_fig whose limit was passed, -1 when none */
        uint64_t limit_value_at; /* the figure's value at the sample that saw it */
        uint64_t limit_seen_ns;  /* when that sample's read ended, since the start */
        uint64_t limit_below_ns; /* when the last sample that read every limited
                                  * figure under its limit began (0: none did,
                                  * the job's start): the crossing came after */
        uint64_t limit_read_ns;  /* how long (wall) the sample that saw it took */
        /* passed since it could not be judged, and why (LEASH_JUDGED: judged) */
        enum leash_unjudged limit_partial;
        uint64_t read_max_ns; /* the longest (wall) read of any sample */
        uint64_t gap_max_ns;  /* the longest time between two samples' starts */
        uint64_t stretched;   /* samples delayed to keep leash's reads at most
                               * half of the wall time (slow reads, big trees) */
        uint64_t cost_ns;     /* CPU time leash spent sampling (thread CPU clock) */
        struct gpu_track gpu; /* the GPUs the job touched (gpu.c) */
};

/* --gpus and --devices (devices.c): which device nodes the job may open,
 * enforced by a cgroup device program (devfilter.c). */
#define LEASH_DEVICE_RULES_MAX 32
#define LEASH_GPUS_MAX 64
enum leash_gpus { LEASH_GPUS_UNSET, LEASH_GPUS_NONE, LEASH_GPUS_ALL, LEASH_GPUS_LIST };
struct leash_devices {
        enum leash_gpus gpus;
        uint64_t gpu_mask; /* LEASH_GPUS_LIST: bit N = GPU index N */
        bool allow_list;   /* --devices given: a device node not listed (nor a --gpus GPU's) is refused */
        unsigned n_rules;  /* the --devices entries, each an allowing rule */
        struct devfilter_rule rule[LEASH_DEVICE_RULES_MAX];
};

struct leash_spec {
        char *const *argv;
        const char *name;                 /* job name; NULL = basename of argv[0] */
        const char *cgroup_parent;        /* NULL = default placement */
        uint64_t limit[_LEASH_LIMIT_MAX]; /* a value, or LEASH_MAX; meaningful where limit_set says */
        unsigned limit_set;               /* bit l: limit[l] was given (no value means "unset") */
        uint64_t grace_ns;
        int soft_signal;
        bool strict;
        /* filled by callers that know it (profiles): recorded in the report */
        const char *profile;
        const char *profile_source;
        /* the limits come from a profile alone (the Slurm hooks: the job has
         * no command line of leash's): a weak limit's remedy is named in the
         * profile's keys (weak.c) */
        bool profile_only;
        struct leash_sandbox sandbox;
        /* the job's signal mask; NULL = the caller's at the start (the CLI blocks
         * signals it forwards and gives the job the mask it had before) */
        const sigset_t *child_sigmask;
        bool spawn_fallback;       /* fork + self-migration instead of clone3 (a test hook of the CLI) */
        bool spawn_raw_fork;       /* leash_job_fork by a raw clone even with threads: libcfork.c's control (tests) */
        bool child_sigchld_ignore; /* the job starts with SIGCHLD ignored (the CLI's caller ignored it) */
        /* the caller is a child subreaper (PR_SET_CHILD_SUBREAPER) whose only
         * children are this job's: every orphan of the job is reparented to it,
         * so its process tree holds every process of the job (leash run) */
        bool reaper;
        /* the caller's process exits once the job is finished (leash run): the
         * job's descriptors are left to that exit, which closes them all, and
         * the caller stays undumpable until then (every fd is O_CLOEXEC: the
         * job inherits none either way) */
        bool exit_after;
        struct leash_sampling sampling;
        struct leash_devices devices;
};

/* Sets every field to its built-in default. */
void leash_spec_init(struct leash_spec *c);

static inline bool leash_spec_has(const struct leash_spec *c, enum leash_limit l) {
        return c->limit_set & (1U << l);
}
static inline void leash_spec_set_limit(struct leash_spec *c, enum leash_limit l, uint64_t v) {
        c->limit[l] = v;
        c->limit_set |= 1U << l;
}

/* Placement (placement.c): where job cgroups go, and why. */
enum placement_kind {
        PLACEMENT_NONE,      /* no cgroup: the cgroup-less mode (tree.c) */
        PLACEMENT_CONFIG,    /* --cgroup-parent / cgroup_parent in leash.ini or a profile */
        PLACEMENT_DELEGATED, /* a subtree delegated to leash's cgroup (a unit with Delegate=yes) */
        PLACEMENT_JOB,       /* inside a leash job: nested under it */
        PLACEMENT_SYSTEMD,   /* a transient Delegate=yes scope from the service manager */
        PLACEMENT_NAMESPACE, /* the writable root of leash's cgroup namespace (a container) */
        PLACEMENT_HOST,      /* root on a host whose cgroup tree no service manager owns: <mount>/leash */
        PLACEMENT_ADOPTED,   /* a cgroup its caller made, adopted (leash_job_adopt*): a Slurm job's */
        _PLACEMENT_MAX,
};

/* The name of the child leash moves the processes of a delegated cgroup into
 * when it must enable controllers there (no internal processes). */
#define PLACEMENT_LEAF "leash-leaf"

struct placement {
        enum placement_kind kind;
        int error;        /* with PLACEMENT_NONE: why no cgroup (errno), 0 when none was found */
        size_t mount_len; /* the cgroup2 mount is parent's first mount_len bytes ("" with NONE) */
        char parent[4096];
        char why[512];    /* one line: which step decided, and why the earlier ones did not */
        char remedy[512]; /* with NONE: what would give a cgroup on this machine */
        bool moved;       /* leash moved the processes of parent into parent/leash-leaf */
        bool joined;      /* parent is a unit leash is not in (systemd's shared unit): the
                           * job's watchdog goes into its PLACEMENT_LEAF */
        bool attaching;   /* leash's move into parent/PLACEMENT_LEAF is asked of the manager and
                           * may not be done yet: placement_settle waits for its reply */
        char own[4096];   /* leash's own cgroup ("/a/b" in the mount) as the decision read it and left it; "" when
                           * unread or moved: the escape home reads it from the decision, not again from /proc */
};

#define LEASH_SIGNALS_MAX 16
#define LEASH_ESCAPED_MAX 32

struct leash_usage {
        uint64_t wall_ns;
        /* cpu.stat */
        uint64_t cpu_usage_us, cpu_user_us, cpu_system_us;
        uint64_t cpu_nr_periods, cpu_nr_throttled, cpu_throttled_us;
        /* memory */
        uint64_t memory_peak;
        uint64_t mem_ev_low, mem_ev_high, mem_ev_max, mem_ev_oom, mem_ev_oom_kill;
        uint64_t mem_anon, mem_file, mem_shmem; /* memory.stat at the end of the job */
        uint64_t swap_peak;
        /* pids */
        uint64_t pids_peak;
        uint64_t pids_events_max; /* forks refused by pids.max */
        /* io.stat, summed over devices */
        uint64_t io_rbytes, io_wbytes, io_rios, io_wios;
        /* pressure: total stall time in microseconds */
        uint64_t psi_cpu_some, psi_cpu_full, psi_mem_some, psi_mem_full, psi_io_some, psi_io_full;
        /* the main process (wait4 rusage) */
        uint64_t main_maxrss_bytes, main_utime_us, main_stime_us;
        uint64_t main_minflt, main_majflt, main_nvcsw, main_nivcsw;
        /* last, after the u64 figures: "memory.peak", "rusage_maxrss_main", or NULL */
        const char *memory_peak_basis;
        /* why memory_peak is null where a figure could be expected (static text), or NULL */
        const char *memory_peak_note;
};

struct leash_signal_event {
        int signal;
        uint64_t at_ns;  /* since the start of the job */
        const char *why; /* "wall_time", "cpu_time", "grace", "interrupt", "leftover" */
};

struct leash_result {
        enum leash_reason reason;
        int exit_code;         /* what leash should exit with */
        int status_code;       /* the main process's exit code, -1 when it did not exit */
        int term_signal;       /* the signal that killed it, 0 when none */
        int interrupt_signal;  /* the signal leash itself received, 0 when none */
        int exec_errno;        /* with LEASH_REASON_EXEC_ERROR */
        const char *exec_step; /* and the step that failed (static text), with it and SETUP_ERROR */
        uint64_t started_realtime_ns;
        pid_t pid;
        enum leash_enforcer enforced[_LEASH_LIMIT_MAX];
        const char *enforce_note[_LEASH_LIMIT_MAX]; /* why not by cgroup, or NULL */
        struct leash_usage usage;
        struct leash_signal_event signals[LEASH_SIGNALS_MAX];
        unsigned n_signals;
        unsigned leftovers_killed; /* processes still in the cgroup after the main exit */
        unsigned n_escaped;
        unsigned escaped_unnamed; /* more found at one look than escaped[] holds */
        bool escaped_incomplete;  /* the walks may have missed some, or one outran them all */
        unsigned n_moved, moved_unnamed;
        const char *devices_by; /* --devices/--gpus: what enforced them, NULL when not asked */
        unsigned devices_insns; /* the device program's length (0: none attached) */
        const char *isolation;  /* what stops the job from touching leash and the cgroup tree (isolate.c) */
        struct leash_sandbox_result sandbox;
        struct leash_sampling_result sampling;
        enum placement_kind placement; /* where the job cgroup came from */
        char placement_why[512];       /* placement.why */
        /* Last, and written before they are read (cgroup as a string, the
         * arrays up to their counts n_escaped and n_moved, which are above):
         * a new job leaves these 15 KiB unzeroed (job_alloc in job.c). */
        char cgroup[4096];
        /* processes of the job seen outside the job cgroup (escape.c): they
         * left it; signals reached them through a pidfd or not at all */
        struct leash_escapee {
                pid_t pid;
                char comm[16];
                char cgroup[256]; /* where it was, relative to the cgroup2 root */
                enum leash_escape_end {
                        LEASH_ESCAPE_RUNNING, /* alive when leash last looked */
                        LEASH_ESCAPE_KILLED,  /* ended after a signal of leash's (the soft one, SIGKILL) */
                        LEASH_ESCAPE_ENDED,   /* had ended by itself before leash signalled it */
                } end;
        } escaped[LEASH_ESCAPED_MAX];
        /* leash (or its watchdog) found inside the job cgroup, put there by the job */
        struct leash_moved {
                char cgroup[256];  /* where it was, relative to the cgroup2 root */
                char back_to[256]; /* where it moved itself back, "" when it could not */
                uint64_t at_ns;    /* since the start */
                int error;         /* errno of the move back, 0 when it worked */
                bool watchdog;     /* the watchdog, not leash itself */
        } moved[4];
};

/* Fills err (when not NULL) with step, detail and -r; returns r (a -errno). */
int leash_error_set(struct leash_error *err, const char *step, const char *detail, int r);

/* Validates the config before anything is created: -EINVAL with err->step. */
int leash_spec_validate(const struct leash_spec *c, struct leash_error *err);

/* The job object from a specification the caller built (the CLI, which reads
 * the configuration itself to list every FILE:LINE error): the strings of
 * the spec are borrowed and must outlive the job. */
int leash_job_new_spec(const struct leash_spec *spec, struct leash_job **ret, struct leash_error *err);
int leash_job_adopt_spec(const struct leash_spec *spec, const char *cgroup, unsigned flags, struct leash_job **ret,
                         struct leash_error *err);
const struct leash_result *leash_job_result(const struct leash_job *j);
/* Whether the job's ladder has SIGKILLed the whole job (its grace, an
 * interrupt, the caller's end: a cgroup.kill, which no fork escapes), by the
 * signals it logged: what the job's cgroups still hold then is exiting, not
 * left behind. */
bool leash_result_ladder_killed(const struct leash_result *r);
const struct leash_spec *leash_job_spec(const struct leash_job *j);
/* What has ended or is ending the job so far (a time limit, an interrupt,
 * the caller): LEASH_REASON_OK while none; the result's reason is only set
 * by leash_job_finish(). An owned adopted job's owner reports it as it goes. */
enum leash_reason leash_job_cause(const struct leash_job *j);
/* Records a signal the owner of an adopted job sent to part of it (a Slurm
 * step's leftovers) in the job's signal log, beside the job's own. */
void leash_job_log_signal(struct leash_job *j, int sig, const char *why);
/* An owned adopted job whose cgroup also holds processes that are not the
 * job's (a Slurm job cgroup in mode nest: slurmstepd beside the tasks): its
 * time limits' signals, the kill at the end of the grace and the look at
 * whether anything of the job still runs go through fn instead of the whole
 * cgroup. fn(userdata, sig) sends sig to the job's processes (SIGKILL: kills
 * them all) and returns how many there were (sig 0: only counts), or -errno.
 * -EINVAL for a job that is not owned. */
int leash_job_set_signal_fn(struct leash_job *j, int (*fn)(void *userdata, int sig), void *userdata);
/* Why leash_job_start/fork's child failed (step and detail), for the one-line message. */
const struct leash_error *leash_job_start_error(const struct leash_job *j);

/* the report's reason: leash_reason_to_string, or the figure a --limit named */
const char *leash_result_reason(const struct leash_result *r);

/* Report writers: a malloc'd text. */
int leash_report_format(const struct leash_spec *c, const struct leash_result *r, enum leash_format format,
                        char **ret_text);
/* "leash: wall_time limit (2s) reached; killed by SIGKILL after 5s grace" */
int leash_report_summary(const struct leash_spec *c, const struct leash_result *r, char **ret_text);

/* A limit enforced weaker than asked (enforced[l] is not a cgroup where
 * the limit wants one): one line (no "leash: ", no newline) saying what was
 * asked, what enforces it, the consequence and the better option on this
 * host; with strict, why no cgroup can enforce it and the remedy. Returns 1
 * and fills buf, or 0 (as asked: buf untouched). */
int leash_limit_weakness(const struct leash_spec *c, const enum leash_enforcer enforced[_LEASH_LIMIT_MAX],
                         const char *const note[_LEASH_LIMIT_MAX], enum leash_limit l, bool strict, char *buf,
                         size_t size);

/* Host discovery for `leash check` and placement. */
enum leash_cgroup_mode { LEASH_CG_NONE, LEASH_CG_V1, LEASH_CG_HYBRID, LEASH_CG_V2 };

struct leash_host {
        enum leash_cgroup_mode mode;
        char cgroup2_mount[4096]; /* "" when none */
        char own_cgroup[4096];    /* leash's own cgroup, relative to the cgroup2 root */
        char parent[4096];        /* where a job cgroup would be created */
        int parent_error;         /* 0 when job cgroups can be created there, else errno */
        bool parent_missing;      /* the default parent does not exist yet: made by the first run */
        bool ctl_available[4];    /* memory, pids, cpu, io: in the parent's cgroup.controllers */
        char v1_mount[4][4096];   /* where libcgroup found each controller on v1, "" if not */
        bool clone_into_cgroup, cgroup_kill, memory_peak, pids_peak, pressure; /* what a job of this user gets */
        /* what the kernel has, whoever asks (seen in any cgroup of the tree):
         * an ordinary user without a cgroup of its own gets none of it */
        struct {
                bool cgroup_kill, memory_peak, pids_peak, pressure;
                bool memory_unseen, pids_unseen; /* no cgroup has the controller on to tell */
        } kernel;
        enum leash_enforcer enforced[_LEASH_LIMIT_MAX]; /* how each limit would be enforced */
        const char *enforce_note[_LEASH_LIMIT_MAX];
        struct placement placement; /* what a run would use (nothing made or moved) */
};

int leash_host_probe(const char *cgroup_parent, struct leash_host *ret, struct leash_error *err);
