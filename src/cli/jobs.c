/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading past jobs for `leash report` and `leash suggest`: arguments are
 * report files (*.json), series files (*.csv, *.jsonl) or directories of them
 * (a --report-dir). A series belongs to the report with the same stem
 * (job-42.json + job-42.csv or job-42.series.csv), or to the only report when
 * there is one. A report directory may be writable by the jobs it describes:
 * entries are opened with O_NOFOLLOW|O_NONBLOCK and must be regular files, so
 * a symlink cannot make leash read another file and a FIFO cannot hang it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../basic/fileio.h"
#include "../basic/log.h"
#include "../basic/macro.h"
#include "../report/history.h"
#include "cli.h"

struct input {
        char *path;
        bool series;
};

static bool has_suffix(const char *s, const char *suffix) {
        size_t a = strlen(s), b = strlen(suffix);
        return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int read_regular(int dirfd, const char *name, const char *shown, int flags, char **ret, size_t *ret_len) {
        _cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | flags);
        struct stat st;
        if (fd < 0) {
                log_error("cannot open %s: %s", shown, strerror(errno));
                return -errno;
        }
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                log_error("%s: not a regular file", shown);
                return -EINVAL;
        }
        int r = read_fd_alloc(fd, 256u << 20, ret, ret_len);
        if (r < 0)
                log_error("cannot read %s: %s", shown, strerror(-r));
        return r;
}

static int add_input(struct input **in, size_t *n, const char *path, bool series) {
        struct input *p = reallocarray(*in, *n + 1, sizeof **in);
        if (!p)
                return -ENOMEM;
        *in = p;
        if (!(p[*n].path = strdup(path)))
                return -ENOMEM;
        p[(*n)++].series = series;
        return 0;
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* *.json, *.csv and *.jsonl of a directory, in name order. */
static int scan_dir(const char *dir, struct input **in, size_t *n) {
        DIR *d = opendir(dir);
        char **names = NULL;
        size_t k = 0;
        int r = 0;
        if (!d) {
                log_error("cannot open %s: %s", dir, strerror(errno));
                return -errno;
        }
        for (struct dirent *e; (e = readdir(d));) {
                char **p;
                if (e->d_name[0] == '.' || !(has_suffix(e->d_name, ".json") || has_suffix(e->d_name, ".csv") ||
                                             has_suffix(e->d_name, ".jsonl")))
                        continue;
                p = reallocarray(names, k + 1, sizeof *names);
                if (!p || !(p[k] = strdup(e->d_name))) {
                        names = p ? p : names;
                        r = -ENOMEM;
                        break;
                }
                names = p;
                k++;
        }
        closedir(d);
        if (r == 0)
                qsort(names, k, sizeof *names, cmp_str);
        for (size_t i = 0; i < k; i++) {
                _cleanup_free_ char *path = NULL;
                struct stat st;
                if (r == 0 && asprintf(&path, "%s/%s", dir, names[i]) < 0)
                        r = -ENOMEM;
                /* a symlink or FIFO planted by a job is passed over, said once */
                if (r == 0 && (lstat(path, &st) < 0 || !S_ISREG(st.st_mode)))
                        log_error("%s: not a regular file, skipped", path);
                else if (r == 0)
                        r = add_input(in, n, path, !has_suffix(names[i], ".json"));
                free(names[i]);
        }
        free(names);
        return r;
}

/* The stem a series names: "d/job-1.series.csv" -> "d/job-1". */
static char *stem(const char *path, bool series) {
        static const char *const sfx[] = {".series.csv", ".series.jsonl", ".csv", ".jsonl", ".json"};
        for (size_t i = 0; i < ELEMENTSOF(sfx); i++)
                if (has_suffix(path, sfx[i]) && (series || i == 4))
                        return strndup(path, strlen(path) - strlen(sfx[i]));
        return strdup(path);
}

static int load_series(const char *path, int flags, struct history_series **ret) {
        _cleanup_free_ char *text = NULL;
        size_t len, line = 0;
        int r = read_regular(AT_FDCWD, path, path, flags, &text, &len);
        if (r < 0)
                return r;
        if (has_suffix(path, ".jsonl"))
                r = report_parse_series_jsonl(text, len, ret);
        else
                r = history_series_parse_csv(text, len, ret, &line);
        if (r == -ELIBACC)
                log_error("%s: json-c could not be loaded", path);
        else if (r < 0 && line)
                log_error("%s:%zu: not a time series row (numbers, as many as the header)", path, line);
        else if (r == -EBADMSG && has_suffix(path, ".jsonl"))
                log_error("%s: not a JSON-lines series (one JSON object per line, as --series-format jsonl writes)",
                          path);
        else if (r == -EBADMSG)
                log_error("%s: not a CSV series (a header row, then one row of numbers per sample)", path);
        else if (r < 0)
                log_error("%s: not a time series (%s)", path, strerror(-r));
        if (r >= 0 && !((*ret)->path = strdup(path)))
                return -ENOMEM;
        return r;
}

/* A series is drawn as the report's job only if it can be: as many rows as
 * the report's samples where it counts them, none after the job's end (plus
 * one interval). */
static int series_fits(const struct history_job *j) {
        const struct history_series *s = j->series;
        int t = history_series_col(s, "t_s");
        double last = t >= 0 && s->n_rows ? history_series_at(s, s->n_rows - 1, t) : NAN;
        double slack = isnan(j->interval_s) ? 1.0 : j->interval_s;

        /* a report without sampling (not sampled, or an older leash's): the end alone */
        if (!isnan(j->samples) && (double) s->n_rows != j->samples) {
                log_error("%s: %zu samples, but %s took %.0f: this series is another job's", s->path, s->n_rows,
                          j->path, j->samples);
                return -EINVAL;
        }
        if (!isnan(last) && !isnan(j->usage[HU_WALL]) && last > j->usage[HU_WALL] + slack) {
                log_error("%s: samples until %.3f s, but %s ran %.3f s: this series is another job's", s->path, last,
                          j->path, j->usage[HU_WALL]);
                return -EINVAL;
        }
        return 0;
}

static int load_report(const char *path, int flags, struct history_job **ret) {
        _cleanup_free_ char *text = NULL;
        size_t len;
        int r = read_regular(AT_FDCWD, path, path, flags, &text, &len);
        if (r < 0)
                return r;
        r = report_parse_job(text, len, ret);
        if (r == -EBADMSG)
                log_error("%s: not JSON", path);
        else if (r == -EPROTO)
                log_error("%s: not a leash report (schema 1)", path);
        else if (r == -ELIBACC)
                log_error("%s: json-c could not be loaded", path);
        else if (r < 0)
                log_error("%s: %s", path, strerror(-r));
        if (r < 0)
                return r;
        if (!((*ret)->path = strdup(path)))
                return -ENOMEM;
        if (!(*ret)->name) {
                /* no cgroup in the report: the file's stem */
                const char *b = strrchr(path, '/');
                (*ret)->name = stem(b ? b + 1 : path, false);
        }
        return 0;
}

void cli_jobs_free(struct history_job **jobs, size_t n) {
        for (size_t i = 0; i < n; i++)
                history_job_free(jobs[i]);
        free(jobs);
}

static int cmp_job(const void *a, const void *b) {
        const struct history_job *x = *(struct history_job *const *) a, *y = *(struct history_job *const *) b;
        int c = strcmp(x->started ? x->started : "", y->started ? y->started : "");
        return c ? c : strcmp(x->path, y->path);
}

int cli_jobs_load(char **args, size_t n_args, struct history_job ***ret, size_t *ret_n) {
        struct input *in = NULL;
        size_t n_in = 0, n_jobs = 0;
        struct history_job **jobs = NULL;
        int r = 0;

        for (size_t i = 0; i < n_args && r == 0; i++) {
                struct stat st;
                if (stat(args[i], &st) == 0 && S_ISDIR(st.st_mode))
                        r = scan_dir(args[i], &in, &n_in);
                else if (has_suffix(args[i], ".json"))
                        r = add_input(&in, &n_in, args[i], false);
                else if (has_suffix(args[i], ".csv") || has_suffix(args[i], ".jsonl"))
                        r = add_input(&in, &n_in, args[i], true);
                else {
                        log_error("%s: expected a report (.json), a series (.csv, .jsonl) or a directory", args[i]);
                        r = -EINVAL;
                }
        }
        if (r == 0 && !(jobs = calloc(n_in ? n_in : 1, sizeof *jobs)))
                r = -ENOMEM;
        /* directory entries (not named by the user) are not followed */
        for (size_t i = 0; i < n_in && r == 0; i++) {
                bool named = false;
                for (size_t a = 0; a < n_args; a++)
                        named |= strcmp(args[a], in[i].path) == 0;
                if (!in[i].series)
                        r = load_report(in[i].path, named ? 0 : O_NOFOLLOW, &jobs[n_jobs++]);
                if (r < 0)
                        n_jobs--;
        }
        if (r == 0 && n_jobs == 0) {
                log_error("no leash report (.json) among the arguments");
                r = -EINVAL;
        }
        for (size_t i = 0; i < n_in && r == 0; i++) {
                _cleanup_free_ char *s = NULL;
                struct history_job *owner = NULL;
                bool named = false;
                if (!in[i].series)
                        continue;
                for (size_t a = 0; a < n_args; a++)
                        named |= strcmp(args[a], in[i].path) == 0;
                if (!(s = stem(in[i].path, true))) {
                        r = -ENOMEM;
                        break;
                }
                for (size_t k = 0; k < n_jobs && !owner; k++) {
                        _cleanup_free_ char *js = stem(jobs[k]->path, false);
                        if (js && strcmp(js, s) == 0)
                                owner = jobs[k];
                }
                if (!owner && n_jobs == 1)
                        owner = jobs[0];
                if (!owner) {
                        log_error("%s: no report of the same name (job.json + job.csv)", in[i].path);
                        r = -EINVAL;
                        break;
                }
                if (owner->series) {
                        log_error("%s: %s already has a series (%s)", in[i].path, owner->path, owner->series->path);
                        r = -EINVAL;
                        break;
                }
                r = load_series(in[i].path, named ? 0 : O_NOFOLLOW, &owner->series);
                if (r >= 0)
                        r = series_fits(owner);
        }
        for (size_t i = 0; i < n_in; i++)
                free(in[i].path);
        free(in);
        if (r < 0) {
                cli_jobs_free(jobs, n_jobs);
                return r;
        }
        qsort(jobs, n_jobs, sizeof *jobs, cmp_job);
        *ret = jobs;
        *ret_n = n_jobs;
        return 0;
}

/* Writes text to path through a temporary file in the same directory, renamed
 * into place: never a half-written file under the final name. */
int cli_write_file(const char *path, const char *text) {
        _cleanup_free_ char *tmp = NULL;
        size_t len = strlen(text);
        int fd;
        if (asprintf(&tmp, "%s.XXXXXX", path) < 0)
                return -ENOMEM;
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0) {
                log_error("cannot write %s: %s", path, strerror(errno));
                return -errno;
        }
        for (size_t off = 0; off < len;) {
                ssize_t w = write(fd, text + off, len - off);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0) {
                        int e = w < 0 ? errno : EIO;
                        close(fd);
                        unlink(tmp);
                        log_error("cannot write %s: %s", path, strerror(e));
                        return -e;
                }
                off += (size_t) w;
        }
        if (fchmod(fd, 0644) < 0 || close(fd) < 0 || rename(tmp, path) < 0) {
                int e = errno;
                unlink(tmp);
                log_error("cannot write %s: %s", path, strerror(e));
                return -e;
        }
        return 0;
}
