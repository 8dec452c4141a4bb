/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Past jobs as their reports and time series say: what `leash report` and
 * `leash suggest` read. A report is data a hostile job may have influenced
 * (its command line, its name): strings are kept as they came and escaped by
 * whoever prints them. A missing or null figure is NAN, never zero.
 */
#pragma once

#include <math.h>
#include <stdbool.h>
#include <stddef.h>

#include "../engine/leash.h"

enum history_usage {
        HU_WALL,
        HU_CPU,
        HU_CPU_USER,
        HU_CPU_SYSTEM,
        HU_MEM_PEAK,
        HU_SWAP_PEAK,
        HU_PIDS_PEAK,
        HU_PIDS_MAX_EVENTS,
        HU_OOM_EVENTS,
        HU_OOM_KILLS,
        HU_MEM_MAX_EVENTS,
        HU_MEM_HIGH_EVENTS,
        HU_IO_READ,
        HU_IO_WRITE,
        HU_IO_READ_OPS,
        HU_IO_WRITE_OPS,
        HU_THROTTLED,
        HU_PSI_CPU_SOME,
        HU_PSI_CPU_FULL,
        HU_PSI_MEM_SOME,
        HU_PSI_MEM_FULL,
        HU_PSI_IO_SOME,
        HU_PSI_IO_FULL,
        HU_MAIN_MAXRSS,
        HU_LEFTOVERS,
        _HU_MAX,
};

enum history_unit { HUNIT_SECONDS, HUNIT_BYTES, HUNIT_COUNT, HUNIT_CORES, HUNIT_PERCENT };

struct history_usage_info {
        const char *path; /* dotted JSON path in the report */
        const char *label;
        enum history_unit unit;
};
extern const struct history_usage_info history_usage_info[_HU_MAX];

struct history_limit {
        bool set;          /* the report lists it */
        bool unlimited;    /* "max" */
        double value;      /* bytes, count, cores or seconds */
        char *enforced_by; /* cgroup, rlimit, leash, none; NULL if absent */
        char *note;
};

/* A --limit FIGURE=VALUE: keyed in "limits" by the figure's name ("procs",
 * "disk", and "memory" too, which is then not limit[LEASH_LIMIT_MEMORY]),
 * enforced_by "sampling": leash read the figure every interval. */
struct history_measured {
        int fig; /* enum leash_fig */
        double value;
        char *unit; /* "bytes", "count", "s", "cores" */
        char *note;
        double peak; /* sampling.peaks.<column>.value: the highest sample, NAN when none */
};

struct history_signal {
        char *signal; /* "XCPU", "KILL" */
        double at_s;
        char *why;
};

struct history_series {
        char *path;
        size_t n_cols, n_rows;
        char **cols;
        double *v; /* row-major, NAN = no figure */
};

struct history_job {
        char *path;
        char *name; /* the job cgroup's name without "@pid", else the file's stem */
        char **command;
        size_t n_command;
        char *cgroup, *profile, *started, *reason;
        int exit_code;   /* leash's exit status; -1 if absent */
        int exit_status; /* the command's own; -1 if it did not exit */
        char *exit_signal, *interrupted_by;
        struct history_limit limit[_LEASH_LIMIT_MAX];
        struct history_measured measured[_LEASH_FIG_MAX];
        size_t n_measured;
        double tasks_peak_sampled; /* sampling.peaks.threads (else procs): the sampled peak of tasks, NAN when none */
        char *reached;             /* sampling.limit_reached.figure: the sampled limit that ended it */
        double reached_value, reached_at_s; /* what that sample read, and when */
        char *soft_signal;
        double grace_s;
        double usage[_HU_MAX];
        char *memory_peak_basis;
        double samples, interval_s; /* sampling.samples and interval_s; NAN when not sampled */
        struct history_signal *signals;
        size_t n_signals;
        struct history_series *series; /* owned; NULL without one */
};

void history_job_free(struct history_job *j);
void history_series_free(struct history_series *s);

/* The json-c adapter (report.c) fills these: -EBADMSG for text that is not
 * JSON, -EPROTO for JSON that is not a schema 1 leash report. */
int report_parse_job(const char *text, size_t len, struct history_job **ret);
int report_parse_series_jsonl(const char *text, size_t len, struct history_series **ret);

/* CSV with one header row; an empty cell is NAN. -EBADMSG (with the 1-based
 * line in *ret_line when not NULL) on a cell that is not a number or a row
 * whose width differs from the header's. */
int history_series_parse_csv(const char *text, size_t len, struct history_series **ret, size_t *ret_line);

int history_series_col(const struct history_series *s, const char *name);
static inline double history_series_at(const struct history_series *s, size_t row, int col) {
        return col < 0 ? NAN : s->v[row * s->n_cols + (size_t) col];
}

/* Limit and figure names and units as reports write and read them: the
 * one vocabulary of the "limits" object, for the writer (report.c) and for
 * whatever draws pages from reports (src/render, which uses no engine name
 * itself). A name is the engine's own (one table, in the engine, which
 * needs it too); NULL for a figure out of range. */
const char *history_limit_name(enum leash_limit l);
const char *history_fig_name(int fig);
/* A limit's unit: HUNIT_CORES, _SECONDS, _COUNT or _BYTES; a unit's name
 * in a report ("cores", "s", "count", "bytes"; NULL for HUNIT_PERCENT, which
 * no report writes), and back (a name not known, or NULL: HUNIT_COUNT). */
enum history_unit history_limit_unit(enum leash_limit l);
const char *history_unit_name(enum history_unit u);
enum history_unit history_unit_from_name(const char *name);

/* The job's name from its cgroup ("/x/leash/trial-7@123" -> "trial-7"). */
char *history_name_from_cgroup(const char *cgroup);
/* The limit a reason names (memory -> LEASH_LIMIT_MEMORY), or -1. */
int history_reason_limit(const char *reason);
/* Whether the job ended because it reached limit l. */
bool history_job_hit(const struct history_job *j, enum leash_limit l);

/* What the job used of what limit l limits (memory peak for memory and
 * memory_high, CPU time / wall time for cpus, ...), NAN when the report
 * has no figure or l has no usage figure (nofile, fsize, core). */
double history_limit_used(const struct history_job *j, enum leash_limit l);

/* Nearest rank: the smallest of sorted[0..n) with at least a share q of the
 * values at or below it (q = 0.5: the median; q = 1: the maximum). */
double history_quantile(const double *sorted, size_t n, double q);
/* Sorts the non-NAN figures of v[0..n) into ret (n entries), returns how many. */
size_t history_sorted(const double *v, size_t n, double *ret);
