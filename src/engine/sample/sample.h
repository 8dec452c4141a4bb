/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Sampling a job cgroup: one read of every figure through the held job dirfd
 * (sample_read), the per-process fallback where the kernel gives no memory
 * or io figure (smaps_rollup and /proc/PID/io of the processes in
 * cgroup.procs), the bounded disk walk, and the sampler that the event loop
 * drives: next deadline, one step (series row, callback, measured limits),
 * the summary for the report.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../hardware/gpu.h"
#include "../leash.h"

struct leash_sample {
        uint64_t v[_LEASH_FIG_MAX];
        const char *basis[_LEASH_FIG_MAX];
        uint64_t step;
        bool last;
        bool partial;           /* the job holds cgroups deeper than the walk: the pid lists are a part */
        bool io_refused;        /* a process's /proc/PID/io was refused (undumpable): the io sums are a part */
        struct gpu_reading gpu; /* the GPUs the job uses (gpu.c) */
};

/* One process of the job, for the fallback and `leash stat --processes`. */
struct sample_proc {
        pid_t pid;
        uid_t uid;
        char comm[64];
        char state;
        uint64_t utime_us, stime_us;      /* LEASH_NULL when unreadable */
        uint64_t rss, pss, uss;           /* bytes, LEASH_NULL when unreadable */
        uint64_t read_bytes, write_bytes; /* /proc/PID/io, LEASH_NULL when unreadable */
};

/* --- pure parsers (tests/unit/test-sample.c) ------------------------------ */
/* "Rss: 5120 kB" ... -> bytes; USS = Private_Clean + Private_Dirty. */
int sample_parse_smaps_rollup(const char *text, uint64_t *ret_rss, uint64_t *ret_pss, uint64_t *ret_uss);
/* /proc/PID/io: read_bytes, write_bytes */
int sample_parse_proc_io(const char *text, uint64_t *ret_read, uint64_t *ret_write);
/* /proc/PID/stat: comm, state, utime, stime (clock ticks -> us with ticks_per_s) */
int sample_parse_proc_stat(const char *text, long ticks_per_s, struct sample_proc *p);
/* cgroup.procs / cgroup.threads: the pids, one a line. Returns the count,
 * fills ret_pids (malloc'd) when asked. -EINVAL on a bad line. */
int sample_parse_pid_list(const char *text, pid_t **ret_pids);
/* memory.stat -> anon, file, kernel, shmem, sock (reuses account.c's parsers) */
void sample_parse_memory_stat(const char *text, struct leash_sample *s);

/* --- readers --------------------------------------------------------------- */
void sample_init(struct leash_sample *s);
/* The gpu_* figures from s->gpu. */
void sample_gpu_figures(struct leash_sample *s);
/* Every cgroup figure of the job, and the fallback figures where the cgroup
 * gives none. proc_fd is an open /proc (or -1: no fallback); disk_fd the
 * --sample-disk directory or -1. ret_pids: the processes seen, when asked. */
int sample_read(int job_fd, int proc_fd, int disk_fd, struct leash_sample *s, pid_t **ret_pids, size_t *ret_n);
/* One process: stat, status (uid), smaps_rollup, io. -ESRCH when gone. */
int sample_read_proc(int proc_fd, pid_t pid, struct sample_proc *p);
/* Bounded walk of a directory: bytes allocated (st_blocks) and entries,
 * never following symlinks or crossing into another filesystem. Returns 1
 * when the walk stopped at its bound (figures are then lower bounds). */
int sample_disk_usage(int dir_fd, uint64_t *ret_bytes, uint64_t *ret_files);
#define SAMPLE_DISK_MAX_ENTRIES 1000000
#define SAMPLE_DISK_MAX_DEPTH 64

/* --- series ---------------------------------------------------------------- */
/* The header row (CSV) into buf; JSON lines have none. */
int series_format_header(enum leash_series_format f, char **ret);
int series_format_row(enum leash_series_format f, const struct leash_sample *s, char **ret);

/* --- the sampler the event loop drives ------------------------------------ */
struct sampler;
/* NULL in *ret when the config asks for no sampling. Opens --sample-disk
 * (err->detail names it on failure) before anything of the job exists. */
int sampler_new(const struct leash_sampling *cfg, struct sampler **ret, struct leash_error *err);
/* The job exists: its dirfd, and when it started (CLOCK_MONOTONIC). */
void sampler_start(struct sampler *s, int job_fd, uint64_t start_ns);
/* The job's main process is a fork of its caller (leash_job_fork): without
 * memory.current the memory figure is the sampled USS, not PSS. NULL: none. */
void sampler_set_forked(struct sampler *s);
/* Absolute CLOCK_MONOTONIC deadline of the next sample, UINT64_MAX when none. */
uint64_t sampler_next(const struct sampler *s);
/* Takes a sample now: series row, callback, limits. Returns the enum
 * leash_fig of a measured limit passed (first time only), else -1. */
int sampler_step(struct sampler *s, uint64_t now_ns, bool last, struct leash_job *job);
void sampler_result(const struct sampler *s, struct leash_sampling_result *ret);
void sampler_free(struct sampler *s);
void sampler_freep(struct sampler **s);
void sampler_set_fn(struct sampler *s, leash_sample_fn fn, void *userdata);

/* --limit FIGURE=VALUE: the figures a limit may name and how to read VALUE */
int sample_limit_parse(const char *text, enum leash_fig *ret_fig, uint64_t *ret_value, const char **ret_expected);
bool sample_fig_limitable(enum leash_fig f);
/* "1.5G" / "2.5 cores" / "1200": a figure's value as a user would write it */
void sample_fig_format(enum leash_fig f, uint64_t v, char *buf, size_t size);
