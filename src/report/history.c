/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Past jobs: the usage figures of a report by JSON path, the CSV series
 * reader (JSON lines and the report itself go through json-c in report.c),
 * the names and units of limits as reports write them, and small questions
 * about a job (its name, the limit that ended it).
 */
#include "history.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../basic/macro.h"

const struct history_usage_info history_usage_info[_HU_MAX] = {
        [HU_WALL] = {"usage.wall_time_s", "wall time", HUNIT_SECONDS},
        [HU_CPU] = {"usage.cpu_time_s", "CPU time", HUNIT_SECONDS},
        [HU_CPU_USER] = {"usage.cpu_user_s", "CPU user", HUNIT_SECONDS},
        [HU_CPU_SYSTEM] = {"usage.cpu_system_s", "CPU system", HUNIT_SECONDS},
        [HU_MEM_PEAK] = {"usage.memory_peak_bytes", "memory peak", HUNIT_BYTES},
        [HU_SWAP_PEAK] = {"usage.swap_peak_bytes", "swap peak", HUNIT_BYTES},
        [HU_PIDS_PEAK] = {"usage.pids_peak", "processes peak", HUNIT_COUNT},
        [HU_PIDS_MAX_EVENTS] = {"usage.pids_max_events", "forks refused", HUNIT_COUNT},
        [HU_OOM_EVENTS] = {"usage.oom_events", "OOM events", HUNIT_COUNT},
        [HU_OOM_KILLS] = {"usage.oom_kills", "OOM kills", HUNIT_COUNT},
        [HU_MEM_MAX_EVENTS] = {"usage.memory_max_events", "memory.max events", HUNIT_COUNT},
        [HU_MEM_HIGH_EVENTS] = {"usage.memory_high_events", "memory.high events", HUNIT_COUNT},
        [HU_IO_READ] = {"usage.io_read_bytes", "I/O read", HUNIT_BYTES},
        [HU_IO_WRITE] = {"usage.io_write_bytes", "I/O written", HUNIT_BYTES},
        [HU_IO_READ_OPS] = {"usage.io_read_ops", "read operations", HUNIT_COUNT},
        [HU_IO_WRITE_OPS] = {"usage.io_write_ops", "write operations", HUNIT_COUNT},
        [HU_THROTTLED] = {"usage.throttled_s", "CPU throttled", HUNIT_SECONDS},
        [HU_PSI_CPU_SOME] = {"usage.pressure.cpu_some_s", "CPU pressure (some)", HUNIT_SECONDS},
        [HU_PSI_CPU_FULL] = {"usage.pressure.cpu_full_s", "CPU pressure (full)", HUNIT_SECONDS},
        [HU_PSI_MEM_SOME] = {"usage.pressure.memory_some_s", "memory pressure (some)", HUNIT_SECONDS},
        [HU_PSI_MEM_FULL] = {"usage.pressure.memory_full_s", "memory pressure (full)", HUNIT_SECONDS},
        [HU_PSI_IO_SOME] = {"usage.pressure.io_some_s", "I/O pressure (some)", HUNIT_SECONDS},
        [HU_PSI_IO_FULL] = {"usage.pressure.io_full_s", "I/O pressure (full)", HUNIT_SECONDS},
        [HU_MAIN_MAXRSS] = {"usage.main_process.maxrss_bytes", "main process max RSS", HUNIT_BYTES},
        [HU_LEFTOVERS] = {"usage.leftovers_killed", "leftovers killed", HUNIT_COUNT},
};

void history_series_free(struct history_series *s) {
        if (!s)
                return;
        for (size_t i = 0; i < s->n_cols; i++)
                free(s->cols[i]);
        free(s->cols);
        free(s->v);
        free(s->path);
        free(s);
}

void history_job_free(struct history_job *j) {
        if (!j)
                return;
        for (size_t i = 0; i < j->n_command; i++)
                free(j->command[i]);
        free(j->command);
        for (int l = 0; l < _LEASH_LIMIT_MAX; l++) {
                free(j->limit[l].enforced_by);
                free(j->limit[l].note);
        }
        for (size_t i = 0; i < j->n_measured; i++) {
                free(j->measured[i].unit);
                free(j->measured[i].note);
        }
        for (size_t i = 0; i < j->n_signals; i++) {
                free(j->signals[i].signal);
                free(j->signals[i].why);
        }
        free(j->signals);
        free(j->path);
        free(j->name);
        free(j->cgroup);
        free(j->profile);
        free(j->started);
        free(j->reason);
        free(j->exit_signal);
        free(j->interrupted_by);
        free(j->soft_signal);
        free(j->memory_peak_basis);
        free(j->reached);
        history_series_free(j->series);
        free(j);
}

int history_series_col(const struct history_series *s, const char *name) {
        for (size_t i = 0; s && i < s->n_cols; i++)
                if (strcmp(s->cols[i], name) == 0)
                        return (int) i;
        return -1;
}

/* One CSV line split at commas, in place; quotes around a cell are dropped
 * (the series has no commas inside cells). */
static size_t split_cells(char *line, char **cells, size_t max) {
        size_t n = 0;
        for (char *p = line;; p++) {
                char *comma = strchr(p, ',');
                if (comma)
                        *comma = '\0';
                if (n < max) {
                        size_t l = strlen(p);
                        if (l >= 2 && p[0] == '"' && p[l - 1] == '"') {
                                p[l - 1] = '\0';
                                p++;
                        }
                        cells[n] = p;
                }
                n++;
                if (!comma)
                        return n;
                p = comma;
        }
}

static int parse_cell(const char *s, double *ret) {
        char *end;
        double v;
        if (!*s) {
                *ret = NAN;
                return 0;
        }
        errno = 0;
        v = strtod(s, &end);
        if (*end || errno || !isfinite(v))
                return -EBADMSG;
        *ret = v;
        return 0;
}

int history_series_parse_csv(const char *text, size_t len, struct history_series **ret, size_t *ret_line) {
        _cleanup_free_ char *copy = strndup(text, len);
        struct history_series *s;
        size_t line_no = 0, cap = 0;
        char *save = NULL, **cells = NULL;
        int r = 0;

        if (!copy)
                return -ENOMEM;
        s = calloc(1, sizeof *s);
        if (!s)
                return -ENOMEM;
        for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                size_t l = strlen(line), n;
                line_no++;
                if (l && line[l - 1] == '\r')
                        line[--l] = '\0';
                if (!l)
                        continue;
                if (!s->cols) {
                        n = 1;
                        for (const char *c = line; *c; c++)
                                n += *c == ',';
                        s->cols = calloc(n, sizeof *s->cols);
                        cells = calloc(n, sizeof *cells);
                        if (!s->cols || !cells) {
                                r = -ENOMEM;
                                break;
                        }
                        split_cells(line, cells, n);
                        for (size_t i = 0; i < n; i++)
                                if (!(s->cols[i] = strdup(cells[i]))) {
                                        r = -ENOMEM;
                                        break;
                                }
                        s->n_cols = n;
                        if (r < 0)
                                break;
                        continue;
                }
                if (split_cells(line, cells, s->n_cols) != s->n_cols) {
                        r = -EBADMSG;
                        break;
                }
                if (s->n_rows == cap) {
                        size_t ncap = cap ? cap * 2 : 64;
                        double *v = reallocarray(s->v, ncap * s->n_cols, sizeof *v);
                        if (!v) {
                                r = -ENOMEM;
                                break;
                        }
                        s->v = v;
                        cap = ncap;
                }
                for (size_t i = 0; i < s->n_cols && r == 0; i++)
                        r = parse_cell(cells[i], &s->v[s->n_rows * s->n_cols + i]);
                if (r < 0)
                        break;
                s->n_rows++;
        }
        free(cells);
        if (r == 0 && !s->cols)
                r = -EBADMSG; /* not even a header */
        if (r < 0) {
                if (ret_line)
                        *ret_line = line_no;
                history_series_free(s);
                return r;
        }
        *ret = s;
        return 0;
}

const char *history_limit_name(enum leash_limit l) {
        return leash_limit_to_string(l);
}

const char *history_fig_name(int fig) {
        return leash_fig_name((enum leash_fig) fig);
}

enum history_unit history_limit_unit(enum leash_limit l) {
        switch (l) {
        case LEASH_LIMIT_CPUS:
                return HUNIT_CORES;
        case LEASH_LIMIT_CPU_TIME:
        case LEASH_LIMIT_WALL_TIME:
                return HUNIT_SECONDS;
        case LEASH_LIMIT_PIDS:
        case LEASH_LIMIT_NOFILE:
                return HUNIT_COUNT;
        default:
                return HUNIT_BYTES;
        }
}

/* the units a report writes; HUNIT_PERCENT, last, is none of them */
static const char *const unit_names[] = {
        [HUNIT_SECONDS] = "s",
        [HUNIT_BYTES] = "bytes",
        [HUNIT_COUNT] = "count",
        [HUNIT_CORES] = "cores",
};

const char *history_unit_name(enum history_unit u) {
        return (size_t) u < ELEMENTSOF(unit_names) ? unit_names[u] : NULL;
}

enum history_unit history_unit_from_name(const char *name) {
        for (size_t u = 0; name && u < ELEMENTSOF(unit_names); u++)
                if (strcmp(name, unit_names[u]) == 0)
                        return (enum history_unit) u;
        return HUNIT_COUNT;
}

char *history_name_from_cgroup(const char *cgroup) {
        const char *base, *at;
        if (!cgroup)
                return NULL;
        base = strrchr(cgroup, '/');
        base = base ? base + 1 : cgroup;
        at = strrchr(base, '@');
        return strndup(base, at ? (size_t) (at - base) : strlen(base));
}

int history_reason_limit(const char *reason) {
        if (!reason)
                return -1;
        if (strcmp(reason, "memory") == 0)
                return LEASH_LIMIT_MEMORY;
        if (strcmp(reason, "pids") == 0)
                return LEASH_LIMIT_PIDS;
        if (strcmp(reason, "cpu_time") == 0)
                return LEASH_LIMIT_CPU_TIME;
        if (strcmp(reason, "wall_time") == 0)
                return LEASH_LIMIT_WALL_TIME;
        if (strcmp(reason, "fsize") == 0)
                return LEASH_LIMIT_FSIZE;
        return -1;
}

bool history_job_hit(const struct history_job *j, enum leash_limit l) {
        if (history_reason_limit(j->reason) == (int) l)
                return true;
        /* an OOM kill the job survived (a child killed) still shows that its
         * need was above the limit */
        return l == LEASH_LIMIT_MEMORY && j->usage[HU_OOM_KILLS] > 0;
}

double history_limit_used(const struct history_job *j, enum leash_limit l) {
        switch (l) {
        case LEASH_LIMIT_MEMORY:
        case LEASH_LIMIT_MEMORY_HIGH:
                return j->usage[HU_MEM_PEAK];
        case LEASH_LIMIT_SWAP:
                return j->usage[HU_SWAP_PEAK];
        case LEASH_LIMIT_PIDS:
                return j->usage[HU_PIDS_PEAK];
        case LEASH_LIMIT_CPU_TIME:
                return j->usage[HU_CPU];
        case LEASH_LIMIT_WALL_TIME:
                return j->usage[HU_WALL];
        case LEASH_LIMIT_CPUS:
                return j->usage[HU_WALL] > 0 ? j->usage[HU_CPU] / j->usage[HU_WALL] : NAN;
        default:
                return NAN;
        }
}

double history_quantile(const double *sorted, size_t n, double q) {
        size_t k;
        if (n == 0)
                return NAN;
        k = (size_t) ceil(q * (double) n - 1e-9);
        return sorted[k == 0 ? 0 : k > n ? n - 1 : k - 1];
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return (x > y) - (x < y);
}

size_t history_sorted(const double *v, size_t n, double *ret) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
                if (!isnan(v[i]))
                        ret[m++] = v[i];
        qsort(ret, m, sizeof *ret, cmp_double);
        return m;
}
