/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Theory: every document is written through a small "writer" (writer.c)
 * that knows its target (HTML, Markdown, text) and escapes every string
 * that came from a report. This file draws one job's page and the document
 * around either page; summary.c draws the page about many jobs. The content is decided once (the verdict, the tables, the charts)
 * and only its dress differs between targets. HTML inlines its SVG charts and
 * one short script that makes the summary table sortable (the table reads
 * the same without it); Markdown links SVG files written beside it; text
 * draws each series as a one-line sparkline.
 */
#include "render.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../basic/macro.h"
#include "chart.h"
#include "markup.h"
#include "summary.h"
#include "writer.h"

/* --- the verdict ----------------------------------------------------------- */

static const struct history_signal *find_signal(const struct history_job *j, bool kill) {
        for (size_t i = 0; i < j->n_signals; i++)
                if ((strcmp(j->signals[i].signal, "KILL") == 0) == kill &&
                    (!j->signals[i].why || strcmp(j->signals[i].why, "leftover") != 0))
                        return &j->signals[i];
        return NULL;
}

static void limit_words(const struct history_job *j, enum leash_limit l, enum history_unit u, FILE *f) {
        char v[64];
        const struct history_limit *x = &j->limit[l];
        if (!x->set) {
                fputs("(not in the report)", f);
                return;
        }
        markup_value(x->value, u, v, sizeof v);
        fprintf(f, "%s", x->unlimited ? "max" : v);
        if (x->enforced_by)
                fprintf(f, ", enforced by %s", x->enforced_by);
}

static double job_end_time(const struct history_job *j) {
        if (j->series) {
                int t = history_series_col(j->series, "t_s");
                if (t >= 0 && j->series->n_rows)
                        return history_series_at(j->series, j->series->n_rows - 1, t);
        }
        return j->usage[HU_WALL];
}

/* "; leash sent SIGXCPU at 0.708 s and SIGKILL at ..., after the grace period" */
static void verdict_ladder(const struct history_job *j, FILE *f) {
        const struct history_signal *soft = find_signal(j, false), *kill = find_signal(j, true);

        if (soft)
                fprintf(f, "; leash sent SIG%s at %.3f s", soft->signal, soft->at_s);
        if (kill)
                fprintf(f, " and SIGKILL at %.3f s, after the grace period", kill->at_s);
        else if (soft)
                fprintf(f, ", and the job ended within the grace period");
}

static const struct history_measured *measured_named(const struct history_job *j, const char *name) {
        for (size_t i = 0; i < j->n_measured && name; i++)
                if (strcmp(history_fig_name(j->measured[i].fig), name) == 0)
                        return &j->measured[i];
        return NULL;
}

/* A limit on a sampled figure (--limit procs=3, --limit memory=100M): leash
 * saw it passed at a sample and sent the soft signal; no kernel limit,
 * no OOM killer. false: the reason is not such a limit. */
static bool verdict_sampled(const struct history_job *j, FILE *f) {
        const struct history_measured *m = j->reached ? measured_named(j, j->reached) : NULL;
        char v[64], seen[64], iv[64];

        if (!m || strcmp(j->reached, j->reason) != 0)
                return false;
        markup_value(m->value, history_unit_from_name(m->unit), v, sizeof v);
        markup_value(j->reached_value, history_unit_from_name(m->unit), seen, sizeof seen);
        markup_value(j->interval_s, HUNIT_SECONDS, iv, sizeof iv);
        fprintf(f, "Passed its %s limit (%s, checked by leash at each sample, every %s): the sample at %.3f s read %s",
                j->reason, v, iv, j->reached_at_s, seen);
        verdict_ladder(j, f);
        return true;
}

/* A job that failed by itself where a limit may be why: memory as a
 * per-process RLIMIT_AS (an allocation refused), a shell's status 153 or a
 * SIGXFSZ under --fsize. Only what the report shows, said as "may". */
static void verdict_hint(const struct history_job *j, FILE *f) {
        const struct history_limit *mem = &j->limit[LEASH_LIMIT_MEMORY], *fs = &j->limit[LEASH_LIMIT_FSIZE];
        char v[64];

        if (mem->set && mem->enforced_by && strcmp(mem->enforced_by, "rlimit") == 0) {
                markup_value(mem->value, HUNIT_BYTES, v, sizeof v);
                fprintf(f,
                        "; memory is limited per process by RLIMIT_AS (%s) here: an allocation it refused may be why",
                        v);
        }
        if (fs->set && ((strcmp(j->reason, "exit") == 0 && j->exit_status == 153) ||
                        (strcmp(j->reason, "signal") == 0 && j->exit_signal && strcmp(j->exit_signal, "XFSZ") == 0))) {
                markup_value(fs->value, HUNIT_BYTES, v, sizeof v);
                fprintf(f, "; %s: a write past the file-size limit (%s, RLIMIT_FSIZE) may be why",
                        j->exit_signal ? "SIGXFSZ is what the kernel sends at one"
                                       : "153 is a shell's status for a command killed by SIGXFSZ",
                        v);
        }
}

static void verdict_limit(const struct history_job *j, const char *a, FILE *f) {
        const char *r = j->reason;
        char b[64];

        if (strcmp(r, "wall_time") == 0 || strcmp(r, "cpu_time") == 0) {
                bool wall = r[0] == 'w';
                fprintf(f, "Reached its %s limit (", wall ? "wall-time" : "CPU-time");
                limit_words(j, wall ? LEASH_LIMIT_WALL_TIME : LEASH_LIMIT_CPU_TIME, HUNIT_SECONDS, f);
                markup_value(j->usage[HU_CPU], HUNIT_SECONDS, b, sizeof b);
                fprintf(f, ") having used %s of CPU in %s", b, a);
                verdict_ladder(j, f);
        } else if (strcmp(r, "memory") == 0) {
                fprintf(f, "Reached its memory limit (");
                limit_words(j, LEASH_LIMIT_MEMORY, HUNIT_BYTES, f);
                markup_value(job_end_time(j), HUNIT_SECONDS, b, sizeof b);
                fprintf(f, "): the kernel's OOM killer ended it at about %s", b);
                if (!isnan(j->usage[HU_OOM_KILLS]))
                        fprintf(f, " (%.0f OOM kill%s)", j->usage[HU_OOM_KILLS],
                                j->usage[HU_OOM_KILLS] == 1 ? "" : "s");
        } else if (strcmp(r, "pids") == 0) {
                fprintf(f, "Reached its process limit (");
                limit_words(j, LEASH_LIMIT_PIDS, HUNIT_COUNT, f);
                fprintf(f, "): a fork was refused");
                if (!isnan(j->usage[HU_PIDS_MAX_EVENTS]))
                        fprintf(f, " %.0f time%s", j->usage[HU_PIDS_MAX_EVENTS],
                                j->usage[HU_PIDS_MAX_EVENTS] == 1 ? "" : "s");
                fprintf(f, " and the job failed after %s", a);
        } else if (strcmp(r, "fsize") == 0) {
                fprintf(f, "Tried to write past its file-size limit (");
                limit_words(j, LEASH_LIMIT_FSIZE, HUNIT_BYTES, f);
                fprintf(f, "): the kernel refused the write and its SIGXFSZ killed the job after %s", a);
        } else
                fprintf(f, "Ended with reason \"%s\" after %s", r, a);
}

int render_verdict(const struct history_job *j, char **ret) {
        const char *r = j->reason;
        char *text = NULL, a[64];
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);

        if (!f)
                return -ENOMEM;
        markup_value(j->usage[HU_WALL], HUNIT_SECONDS, a, sizeof a);
        if (strcmp(r, "ok") == 0)
                fprintf(f, "Finished successfully after %s", a);
        else if (strcmp(r, "exit") == 0)
                fprintf(f, "Failed: the command exited with status %d after %s", j->exit_status, a);
        else if (strcmp(r, "signal") == 0)
                fprintf(f, "Killed by SIG%s after %s (a signal leash did not send)",
                        j->exit_signal ? j->exit_signal : "?", a);
        else if (strcmp(r, "interrupted") == 0)
                fprintf(f, "Interrupted: leash received SIG%s after %s and ended the job",
                        j->interrupted_by ? j->interrupted_by : "?", a);
        else if (strcmp(r, "setup_error") == 0 || strcmp(r, "exec_error") == 0)
                fprintf(f, "Never ran: the command could not be %s", r[0] == 's' ? "set up" : "executed");
        else if (strcmp(r, "seccomp") == 0)
                fprintf(f, "Killed by the seccomp filter (SIGSYS): it made a denied system call, after %s", a);
        else if (!verdict_sampled(j, f))
                verdict_limit(j, a, f);
        if (strcmp(r, "exit") == 0 || strcmp(r, "signal") == 0)
                verdict_hint(j, f);
        fprintf(f, "; leash exited %d.", j->exit_code);
        if (fclose(f) != 0) {
                free(text);
                return -ENOMEM;
        }
        *ret = text;
        return 0;
}

/* --- charts --------------------------------------------------------------- */

/* What really enforced limit l, for its line and its words: the cgroup file
 * only where a cgroup did ("RLIMIT_AS is not memory.max"). */
static const char *enforcer_label(const struct history_job *j, enum leash_limit l, const char *cgroup_file) {
        const char *by = j->limit[l].enforced_by;

        if (by && strcmp(by, "cgroup") == 0)
                return cgroup_file;
        if (by && strcmp(by, "rlimit") == 0 && l == LEASH_LIMIT_MEMORY)
                return "RLIMIT_AS, per process";
        if (by && strcmp(by, "rlimit") == 0)
                return "rlimit, per process";
        if (by && strcmp(by, "leash") == 0)
                return "leash";
        if (by && strcmp(by, "sampling") == 0)
                return "leash, sampled";
        return "asked, not enforced";
}

static void add_level(struct chart *c, const struct history_job *j, enum leash_limit l, const char *cgroup_file,
                      enum chart_level_kind kind) {
        const char *label = enforcer_label(j, l, cgroup_file);
        if (j->limit[l].set && !j->limit[l].unlimited && !isnan(j->limit[l].value) && c->n_levels < CHART_MAX_LEVELS)
                c->level[c->n_levels++] = (struct chart_level){label, j->limit[l].value, kind};
}

static void add_marks(struct chart *c, const struct history_job *j, bool oom) {
        for (size_t i = 0; i < j->n_signals && c->n_marks < CHART_MAX_MARKS - 1; i++) {
                const struct history_signal *s = &j->signals[i];
                struct chart_mark *m = &c->mark[c->n_marks];
                if (s->why && strcmp(s->why, "leftover") == 0)
                        continue;
                snprintf(m->label, sizeof m->label, "SIG%.16s", s->signal);
                m->x = s->at_s;
                m->kind = strcmp(s->signal, "KILL") == 0 ? CHART_MARK_KILL : CHART_MARK_SOFT;
                c->n_marks++;
        }
        if (oom && c->n_marks < CHART_MAX_MARKS) {
                struct chart_mark *m = &c->mark[c->n_marks++];
                snprintf(m->label, sizeof m->label, "OOM kill");
                m->x = job_end_time(j);
                m->kind = CHART_MARK_OOM;
        }
}

/* A derived column (cores from CPU deltas, pressure as % of time) kept alive
 * until the document is done. */
struct derived {
        double *v[8];
        size_t n;
};

static double *derive_rate(struct derived *d, const struct history_series *s, int tcol, int col, double scale) {
        double *v;
        if (col < 0 || tcol < 0 || d->n >= ELEMENTSOF(d->v) || !(v = calloc(s->n_rows ? s->n_rows : 1, sizeof *v)))
                return NULL;
        for (size_t i = 0; i < s->n_rows; i++) {
                double dt = i ? history_series_at(s, i, tcol) - history_series_at(s, i - 1, tcol) : NAN;
                double dv = i ? history_series_at(s, i, col) - history_series_at(s, i - 1, col) : NAN;
                v[i] = dt > 0 && dv >= 0 ? dv / dt * scale : NAN;
        }
        d->v[d->n++] = v;
        return v;
}

/* true when the series has the column and at least one figure in it */
static bool column_has_data(const struct history_series *s, const char *key) {
        int col = history_series_col(s, key);
        for (size_t r = 0; col >= 0 && r < s->n_rows; r++)
                if (!isnan(s->v[r * s->n_cols + (size_t) col]))
                        return true;
        return false;
}

static bool add_line(struct chart *c, const struct history_series *s, int tcol, const char *key, const char *label,
                     const double *derived) {
        int col = history_series_col(s, key);
        /* no legend entry for a line with nothing to draw */
        if ((col < 0 && !derived) || (!derived && !column_has_data(s, key)) || tcol < 0 ||
            c->n_lines >= CHART_MAX_LINES)
                return false;
        c->line[c->n_lines++] = (struct chart_line){
                label, key, s->v + tcol, derived ? derived : s->v + col, s->n_rows, s->n_cols, derived ? 1 : s->n_cols};
        return true;
}

static void data_table(struct writer *w, const struct chart *c) {
        /* the text alternative: the figures behind the chart, at most ~60 rows */
        size_t n = c->n_lines ? c->line[0].n : 0, step = n > 60 ? (n + 59) / 60 : 1;
        if (w->fmt != RENDER_HTML || !n)
                return;
        writer_put(
                w,
                "<details><summary>Data behind this chart</summary><div class=\"scroll\"><table class=\"data\"><thead>"
                "<tr><th scope=\"col\">t</th>");
        for (size_t i = 0; i < c->n_lines; i++) {
                writer_put(w, "<th scope=\"col\">");
                writer_esc(w, c->line[i].label);
                writer_put(w, "</th>");
        }
        writer_put(w, "</tr></thead><tbody>\n");
        for (size_t k = 0; k < n; k += step) {
                char buf[64];
                writer_putf(w, "<tr><th scope=\"row\">%.3f s</th>", c->line[0].x[k * c->line[0].xstride]);
                for (size_t i = 0; i < c->n_lines; i++) {
                        markup_value(c->line[i].y[k * c->line[i].ystride], c->unit, buf, sizeof buf);
                        writer_putf(w, "<td>%s</td>", buf);
                }
                writer_put(w, "</tr>\n");
                if (k + step >= n && k != n - 1)
                        k = n - 1 - step; /* always show the last row */
        }
        writer_put(w, "</tbody></table></div></details>\n");
}

static const char spark[] = "_.:-=+*#%@";

static void sparkline(struct writer *w, const struct chart *c) {
        for (size_t i = 0; i < c->n_lines; i++) {
                const struct chart_line *l = &c->line[i];
                double max = 0, t_end = 0, last = NAN;
                char buf[64], cells[61];
                for (size_t k = 0; k < l->n; k++) {
                        double y = l->y[k * l->ystride];
                        if (!isnan(y) && y > max)
                                max = y;
                        if (!isnan(l->x[k * l->xstride]))
                                t_end = l->x[k * l->xstride];
                }
                memset(cells, ' ', 60);
                cells[60] = '\0';
                for (size_t k = 0; k < l->n; k++) {
                        double x = l->x[k * l->xstride], y = l->y[k * l->ystride];
                        size_t col, lvl;
                        if (isnan(x) || isnan(y) || t_end <= 0)
                                continue;
                        col = (size_t) (x / t_end * 59);
                        lvl = max > 0 ? (size_t) (y / max * 9 + 0.5) : 0;
                        if (col < 60 && (cells[col] == ' ' || strchr(spark, cells[col]) < spark + lvl))
                                cells[col] = spark[lvl];
                        last = y;
                }
                for (size_t k = 1; k < 60; k++) /* hold each sample until the next */
                        if (cells[k] == ' ' && cells[k - 1] != ' ')
                                cells[k] = cells[k - 1];
                markup_value(max, c->unit, buf, sizeof buf);
                writer_putf(w, " %-22s |%s| max %s", l->label, cells, buf);
                markup_value(last, c->unit, buf, sizeof buf);
                writer_putf(w, ", last %s\n", buf);
        }
        for (size_t i = 0; i < c->n_levels; i++) {
                char buf[64];
                markup_value(c->level[i].y, c->unit, buf, sizeof buf);
                writer_putf(w, " %-22s %s\n", c->level[i].label, buf);
        }
}

static void emit_chart(struct writer *w, struct chart *c) {
        _cleanup_free_ char *svg = NULL;
        if (w->fmt == RENDER_TEXT) {
                writer_heading(w, 3, c->title);
                sparkline(w, c);
                return;
        }
        c->standalone = w->fmt == RENDER_MARKDOWN;
        w->err = chart_svg(c, &svg);
        if (w->err < 0)
                return;
        if (w->fmt == RENDER_HTML) {
                writer_putf(w, "<h3>%s</h3>\n<figure>\n%s<figcaption>", c->title, svg);
                writer_esc(w, c->desc);
                writer_put(w, "</figcaption>\n");
                data_table(w, c);
                writer_put(w, "</figure>\n");
        } else {
                const char *name = writer_attach_svg(w, c->id, &svg);
                if (!name)
                        return;
                writer_put(w, "![");
                writer_esc(w, c->desc);
                writer_put(w, "](");
                writer_put_url(w, name);
                writer_put(w, ")\n\n");
        }
}

/* --- one job --------------------------------------------------------------- */

static bool job_oom(const struct history_job *j) {
        return (j->reason && strcmp(j->reason, "memory") == 0) || j->usage[HU_OOM_KILLS] > 0;
}

static void chart_cpu(struct writer *w, const struct history_job *j, int t, struct derived *d) {
        const struct history_series *s = j->series;
        struct chart c = {.id = "cpu", .title = "CPU: cores used", .unit = HUNIT_CORES};
        char desc[512], a[64];

        if (!add_line(&c, s, t, "cores", "cores used", NULL))
                add_line(&c, s, t, "cpu_total_s", "cores used",
                         derive_rate(d, s, t, history_series_col(s, "cpu_total_s"), 1));
        add_level(&c, j, LEASH_LIMIT_CPUS, "cpu.max", CHART_LEVEL_LIMIT);
        add_marks(&c, j, false);
        markup_value(j->usage[HU_CPU], HUNIT_SECONDS, a, sizeof a);
        snprintf(desc, sizeof desc, "Cores used between samples over %zu samples; %s of CPU in all%s.", s->n_rows, a,
                 c.n_levels ? "; the dashed line is the cpu limit" : "");
        c.desc = desc;
        emit_chart(w, &c);
}

static void chart_memory(struct writer *w, const struct history_job *j, int t) {
        const struct history_series *s = j->series;
        struct chart c = {.id = "memory", .title = "Memory", .unit = HUNIT_BYTES};
        /* without a memory controller: the per-process sampling of the tree */
        bool charged = column_has_data(s, "mem_current_bytes") || !column_has_data(s, "mem_pss_bytes");
        const struct history_limit *max = &j->limit[LEASH_LIMIT_MEMORY];
        char desc[512], a[64], b[64];

        add_line(&c, s, t, charged ? "mem_current_bytes" : "mem_pss_bytes", charged ? "current" : "PSS (sampled)",
                 NULL);
        add_line(&c, s, t, charged ? "mem_anon_bytes" : "mem_rss_bytes", charged ? "anon" : "RSS (sampled)", NULL);
        add_level(&c, j, LEASH_LIMIT_MEMORY, "memory.max", CHART_LEVEL_LIMIT);
        add_level(&c, j, LEASH_LIMIT_MEMORY_HIGH, "memory.high", CHART_LEVEL_SOFT);
        if (!isnan(j->usage[HU_MEM_PEAK]) && c.n_levels < CHART_MAX_LEVELS)
                c.level[c.n_levels++] = (struct chart_level){"peak", j->usage[HU_MEM_PEAK], CHART_LEVEL_PEAK};
        add_marks(&c, j, job_oom(j));
        markup_value(j->usage[HU_MEM_PEAK], HUNIT_BYTES, a, sizeof a);
        markup_value(max->set && !max->unlimited ? max->value : NAN, HUNIT_BYTES, b, sizeof b);
        snprintf(desc, sizeof desc, "Memory %s over time; peak %s, limit %s (%s)%s.",
                 charged ? "charged to the job" : "of the job's processes, sampled", a, b,
                 enforcer_label(j, LEASH_LIMIT_MEMORY, "memory.max"), job_oom(j) ? "; the job was OOM-killed" : "");
        c.desc = desc;
        emit_chart(w, &c);
}

static void chart_pids(struct writer *w, const struct history_job *j, int t) {
        const struct history_series *s = j->series;
        struct chart c = {.id = "pids", .title = "Processes", .unit = HUNIT_COUNT};
        char desc[512], a[64];

        add_line(&c, s, t, "pids_current", "tasks (pids.current)", NULL);
        add_line(&c, s, t, "procs", "processes", NULL);
        add_level(&c, j, LEASH_LIMIT_PIDS, "pids.max", CHART_LEVEL_LIMIT);
        add_marks(&c, j, false);
        markup_value(j->usage[HU_PIDS_PEAK], HUNIT_COUNT, a, sizeof a);
        snprintf(desc, sizeof desc, "Processes and threads in the job over time; peak %s.", a);
        c.desc = desc;
        emit_chart(w, &c);
}

/* io.stat where the job had the io controller (the report's usage has its
 * totals); else /proc/PID/io of the processes alive at each sample */
static void chart_io(struct writer *w, const struct history_job *j, int t) {
        const struct history_series *s = j->series;
        struct chart c;

        if (isnan(j->usage[HU_IO_READ]) && isnan(j->usage[HU_IO_WRITE]))
                c = (struct chart){.id = "io",
                                   .title = "I/O of the live processes (/proc/PID/io)",
                                   .desc = "Bytes read and written by the processes alive at each sample "
                                           "(/proc/PID/io, summed): a process that exits takes its count with it, "
                                           "so the line can fall.",
                                   .unit = HUNIT_BYTES};
        else
                c = (struct chart){.id = "io",
                                   .title = "I/O (io.stat, cumulative)",
                                   .desc = "Bytes read and written by the job (io.stat), cumulative.",
                                   .unit = HUNIT_BYTES};
        add_line(&c, s, t, "io_read_bytes", "read", NULL);
        add_line(&c, s, t, "io_write_bytes", "written", NULL);
        add_marks(&c, j, false);
        emit_chart(w, &c);
}

/* GPUs (issue 28): only where a GPU driver answered */
static void chart_gpus(struct writer *w, const struct history_job *j, int t) {
        const struct history_series *s = j->series;
        struct chart c;

        if (column_has_data(s, "gpu_memory_bytes")) {
                c = (struct chart){.id = "gpu",
                                   .title = "GPU memory",
                                   .desc = "The job's memory on the GPUs (NVML or DRM fdinfo, attributed by pid): on "
                                           "all of them, and on the one where it used most.",
                                   .unit = HUNIT_BYTES};
                add_line(&c, s, t, "gpu_memory_bytes", "all GPUs", NULL);
                add_line(&c, s, t, "gpu_memory_max_bytes", "busiest GPU", NULL);
                add_marks(&c, j, false);
                emit_chart(w, &c);
        }
        if (column_has_data(s, "gpu_util_pct")) {
                c = (struct chart){.id = "gpu-util",
                                   .title = "GPU utilisation",
                                   .desc = "The job's GPU utilisation in percent, summed over the GPUs it used.",
                                   .unit = HUNIT_PERCENT};
                add_line(&c, s, t, "gpu_util_pct", "summed over GPUs", NULL);
                add_marks(&c, j, false);
                emit_chart(w, &c);
        }
}

static void chart_pressure(struct writer *w, const struct history_job *j, int t, struct derived *d) {
        static const char *const col[] = {"psi_cpu_some_us", "psi_mem_some_us", "psi_io_some_us"};
        static const char *const label[] = {"CPU some", "memory some", "I/O some"};
        const struct history_series *s = j->series;
        struct chart c = {.id = "pressure",
                          .title = "Pressure: share of time stalled",
                          .desc = "Percentage of each interval in which some of the job's tasks were stalled on CPU, "
                                  "memory or I/O (the pressure files).",
                          .unit = HUNIT_PERCENT};

        for (size_t i = 0; i < ELEMENTSOF(col); i++)
                add_line(&c, s, t, col[i], label[i], derive_rate(d, s, t, history_series_col(s, col[i]), 1e-4));
        add_marks(&c, j, false);
        if (c.n_lines)
                emit_chart(w, &c);
}

static void job_charts(struct writer *w, const struct history_job *j) {
        struct derived d = {{NULL}, 0};
        int t = history_series_col(j->series, "t_s");

        writer_heading(w, 2, "Over time");
        if (t < 0) {
                writer_put(w, w->fmt == RENDER_HTML ? "<p>" : "");
                writer_put(w, "The series has no t_s column: nothing to draw.");
                writer_put(w, w->fmt == RENDER_HTML ? "</p>\n" : "\n");
                return;
        }
        chart_cpu(w, j, t, &d);
        chart_memory(w, j, t);
        chart_pids(w, j, t);
        chart_io(w, j, t);
        chart_gpus(w, j, t);
        chart_pressure(w, j, t, &d);
        for (size_t i = 0; i < d.n; i++)
                free(d.v[i]);
}

/* The --limit FIGURE=VALUE rows: checked by leash at each sample. */
static bool job_measured_limits(struct writer *w, const struct history_job *j, const int *width) {
        for (size_t i = 0; i < j->n_measured; i++) {
                const struct history_measured *m = &j->measured[i];
                enum history_unit u = history_unit_from_name(m->unit);
                char v[64], us[64], pct[32], by[96], iv[64];

                markup_value(m->value, u, v, sizeof v);
                markup_value(m->peak, u, us, sizeof us);
                markup_value(j->interval_s, HUNIT_SECONDS, iv, sizeof iv);
                snprintf(by, sizeof by, "leash, sampled every %s", iv);
                if (m->value > 0 && !isnan(m->peak))
                        snprintf(pct, sizeof pct, "%.0f %%", m->peak / m->value * 100);
                else
                        snprintf(pct, sizeof pct, "—");
                writer_table_row(w,
                                 (struct cell[]){{.plain = history_fig_name(m->fig), .sort = NAN},
                                                 {.plain = v, .sort = NAN},
                                                 {.plain = by, .sort = NAN},
                                                 {.plain = us, .sort = NAN},
                                                 {.plain = pct, .sort = NAN},
                                                 {.text = m->note ? m->note : "", .sort = NAN}},
                                 6, width);
        }
        return j->n_measured > 0;
}

static void job_limits(struct writer *w, const struct history_job *j) {
        static const char *const head[] = {"limit", "value", "enforced by", "used", "of the limit", "note"};
        static const int width[] = {14, 12, 12, 12, 13, 1};
        bool any = false;

        static const char *const cgroup_file[_LEASH_LIMIT_MAX] = {
                [LEASH_LIMIT_MEMORY] = "memory.max",    [LEASH_LIMIT_MEMORY_HIGH] = "memory.high",
                [LEASH_LIMIT_SWAP] = "memory.swap.max", [LEASH_LIMIT_PIDS] = "pids.max",
                [LEASH_LIMIT_CPUS] = "cpu.max",
        };
        writer_heading(w, 2, "Limits");
        writer_table_open(w, "Each limit, how it was enforced, and how close the job came to it", head, 6, false,
                          width);
        for (int l = 0; l < _LEASH_LIMIT_MAX; l++) {
                const struct history_limit *x = &j->limit[l];
                enum history_unit u = history_limit_unit((enum leash_limit) l);
                double used = history_limit_used(j, (enum leash_limit) l);
                char v[64], us[64], pct[32];
                if (!x->set)
                        continue;
                any = true;
                markup_value(x->value, u, v, sizeof v);
                markup_value(used, u == HUNIT_CORES ? HUNIT_CORES : u, us, sizeof us);
                /* like with like: a per-process rlimit is no share of the tree's figure */
                if (!x->unlimited && x->value > 0 && !isnan(used) &&
                    !(x->enforced_by && strcmp(x->enforced_by, "rlimit") == 0))
                        snprintf(pct, sizeof pct, "%.0f %%", used / x->value * 100);
                else
                        snprintf(pct, sizeof pct, "—");
                writer_table_row(
                        w,
                        (struct cell[]){{.plain = history_limit_name((enum leash_limit) l), .sort = NAN},
                                        {.plain = x->unlimited ? "max" : v, .sort = NAN},
                                        {.text = enforcer_label(j, (enum leash_limit) l, cgroup_file[l]), .sort = NAN},
                                        {.plain = us, .sort = NAN},
                                        {.plain = pct, .sort = NAN},
                                        {.text = x->note ? x->note : "", .sort = NAN}},
                        6, width);
        }
        any = job_measured_limits(w, j, width) || any;
        if (!any)
                writer_table_row(w, (struct cell[]){{.plain = "(none asked for)", .sort = NAN}}, 1, width);
        writer_table_close(w);
}

static void job_usage(struct writer *w, const struct history_job *j) {
        static const char *const head[] = {"figure", "value"};
        static const int width[] = {24, 1};
        writer_heading(w, 2, "Usage");
        writer_table_open(w, "What the job used, from the kernel's accounting", head, 2, false, width);
        for (int u = 0; u < _HU_MAX; u++) {
                char v[64];
                if (isnan(j->usage[u]))
                        continue;
                markup_value(j->usage[u], history_usage_info[u].unit, v, sizeof v);
                writer_table_row(
                        w,
                        (struct cell[]){{.plain = history_usage_info[u].label, .sort = NAN}, {.plain = v, .sort = NAN}},
                        2, width);
                if (u == HU_MEM_PEAK && j->memory_peak_basis)
                        writer_table_row(w,
                                         (struct cell[]){{.plain = "memory peak basis", .sort = NAN},
                                                         {.text = j->memory_peak_basis, .sort = NAN}},
                                         2, width);
        }
        writer_table_close(w);
        if (j->n_signals) {
                static const char *const shead[] = {"at", "signal", "why"};
                static const int swidth[] = {10, 8, 1};
                writer_heading(w, 2, "Signals leash sent");
                writer_table_open(w, "Every signal leash sent, in order", shead, 3, false, swidth);
                for (size_t i = 0; i < j->n_signals; i++) {
                        char at[32];
                        snprintf(at, sizeof at, "%.3f s", j->signals[i].at_s);
                        writer_table_row(
                                w,
                                (struct cell[]){{.plain = at, .sort = NAN},
                                                {.text = j->signals[i].signal, .sort = NAN},
                                                {.text = j->signals[i].why ? j->signals[i].why : "", .sort = NAN}},
                                3, swidth);
                }
                writer_table_close(w);
        }
}

static void job_about(struct writer *w, const struct history_job *j) {
        struct {
                const char *k, *v;
        } rows[] = {{"cgroup", j->cgroup},
                    {"profile", j->profile},
                    {"started", j->started},
                    {"report", j->path},
                    {"series", j->series ? j->series->path : NULL}};
        writer_heading(w, 2, "Job");
        if (w->fmt == RENDER_HTML)
                writer_put(w, "<dl>\n<dt>command</dt><dd><code>");
        else
                writer_put(w, w->fmt == RENDER_MARKDOWN ? "- command: " : " command: ");
        markup_command(w->f, j->command, j->n_command,
                       w->fmt == RENDER_HTML       ? markup_html
                       : w->fmt == RENDER_MARKDOWN ? markup_md
                                                   : markup_text);
        writer_put(w, w->fmt == RENDER_HTML ? "</code></dd>\n" : "\n");
        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                if (!rows[i].v)
                        continue;
                if (w->fmt == RENDER_HTML)
                        writer_putf(w, "<dt>%s</dt><dd>", rows[i].k);
                else
                        writer_putf(w, w->fmt == RENDER_MARKDOWN ? "- %s: " : " %s: ", rows[i].k);
                writer_esc(w, rows[i].v);
                writer_put(w, w->fmt == RENDER_HTML ? "</dd>\n" : "\n");
        }
        if (w->fmt == RENDER_HTML)
                writer_put(w, "</dl>\n");
}

static void job_page(struct writer *w, const struct history_job *j) {
        _cleanup_free_ char *verdict = NULL;
        int r = render_verdict(j, &verdict);
        if (r < 0) {
                w->err = r;
                return;
        }
        if (w->fmt == RENDER_HTML) {
                writer_put(w, "<h1>leash report: ");
                writer_esc(w, j->name ? j->name : "job");
                writer_putf(w, "</h1>\n<p class=\"verdict %s\" id=\"verdict\"><strong>",
                            strcmp(j->reason, "ok") == 0 ? "good" : "bad");
                writer_esc(w, j->reason);
                writer_put(w, ".</strong> ");
                writer_esc(w, verdict);
                writer_put(w, "</p>\n");
        } else { /* Markdown and text: the same lines, Markdown's marks */
                bool md = w->fmt == RENDER_MARKDOWN;

                writer_put(w, md ? "# leash report: " : "leash report: ");
                writer_esc(w, j->name ? j->name : "job");
                writer_put(w, md ? "\n\n**" : "\n\nverdict: ");
                writer_esc(w, j->reason);
                writer_put(w, md ? ".** " : ". ");
                writer_esc(w, verdict);
                writer_put(w, "\n");
        }
        job_limits(w, j);
        job_usage(w, j);
        if (j->series)
                job_charts(w, j);
        else if (w->fmt != RENDER_TEXT)
                writer_put(w, w->fmt == RENDER_HTML
                                      ? "<p class=\"note\">No time series: run the job with <code>leash run "
                                        "--sample 100ms --series FILE</code> for charts over time.</p>\n"
                                      : "\nNo time series: run the job with `leash run --sample 100ms --series "
                                        "FILE` for charts over time.\n");
        job_about(w, j);
}

/* --- the document ---------------------------------------------------------- */

static const char html_head[] =
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<meta name=\"color-scheme\" content=\"light dark\">\n"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "script-src 'unsafe-inline'; img-src data:\">\n"
        "<meta name=\"generator\" content=\"leash\">\n<title>";
static const char html_style[] =
        "</title>\n<style>\n"
        ":root{--fg:#1f2328;--bg:#fff;--muted:#59636e;--rule:#d1d9e0;--c0:#1f77b4;--c1:#2ca02c;--c2:#9467bd;"
        "--c3:#8c564b;--limit:#d62728;--soft:#b35c00;--peak:#6e7781;--good:#1a7f37;--bad:#cf222e}\n"
        "@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--muted:#9198a1;--rule:#3d444d;"
        "--c0:#58a6ff;--c1:#56d364;--c2:#bc8cff;--c3:#d29922;--limit:#ff7b72;--soft:#f0883e;--peak:#9198a1;"
        "--good:#56d364;--bad:#ff7b72}}\n"
        "body{font-family:system-ui,sans-serif;color:var(--fg);background:var(--bg);max-width:60rem;margin:0 auto;"
        "padding:1rem;line-height:1.45}\n"
        "h1{font-size:1.5rem;overflow-wrap:anywhere}h3{font-size:1rem;margin:1.5rem 0 "
        "0}h2{font-size:1.2rem;border-bottom:1px solid var(--rule);"
        "margin-top:2rem}\n"
        ".verdict{font-size:1.1rem;padding:.75rem 1rem;border-left:.4rem solid var(--bad);"
        "background:color-mix(in srgb,var(--bad) 8%,transparent)}\n"
        ".verdict.good{border-color:var(--good);background:color-mix(in srgb,var(--good) 8%,transparent)}\n"
        ".scroll{overflow-x:auto}table{border-collapse:collapse;margin:.5rem 0;font-variant-numeric:tabular-nums}\n"
        "caption{text-align:left;color:var(--muted);padding-bottom:.25rem}\n"
        "th,td{border-bottom:1px solid var(--rule);padding:.25rem .6rem;text-align:right;vertical-align:top}\n"
        "th:first-child,td:first-child,td.t{text-align:left}thead th{text-align:left}td{white-space:nowrap}\n"
        /* a note in the last column wraps: no side scroller for the limits' notes */
        "td.t:last-child{white-space:normal;overflow-wrap:anywhere;min-width:12rem}\n"
        "table.sortable th button{font:inherit;color:inherit;background:none;border:0;padding:0;cursor:pointer}\n"
        "th[aria-sort=ascending] button::after{content:\" \\25B2\"}th[aria-sort=descending] button::after{content:\" "
        "\\25BC\"}\n"
        "figure{margin:1rem 0}svg.chart{width:100%;height:auto;color:var(--fg)}figcaption{color:var(--muted)}\n"
        "code{overflow-wrap:anywhere}dt{font-weight:600}dd{margin:0 0 .5rem 1rem}.note{color:var(--muted)}\n"
        "@media print{body{max-width:none}details{display:none}figure{break-inside:avoid}}\n"
        "</style>\n</head>\n<body>\n";
/* A dozen lines and no framework: turns the headings of sortable tables into
 * buttons that sort by data-v, numbers numerically. */
static const char html_script[] =
        "<script>\n(function(){document.documentElement.setAttribute('data-js','ready');\n"
        "document.querySelectorAll('table.sortable thead th').forEach(function(th,col){\n"
        " var b=document.createElement('button');b.type='button';b.textContent=th.textContent;th.textContent='';"
        "th.appendChild(b);\n"
        " b.addEventListener('click',function(){var t=th.closest('table'),tb=t.tBodies[0],"
        "up=th.getAttribute('aria-sort')!=='ascending';\n"
        "  var rows=Array.prototype.slice.call(tb.rows);rows.sort(function(x,y){var a=x.cells[col].dataset.v,"
        "c=y.cells[col].dataset.v,p=parseFloat(a),q=parseFloat(c);\n"
        "   var r=(isNaN(p)||isNaN(q))?String(a).localeCompare(String(c)):p-q;return up?r:-r;});\n"
        "  t.querySelectorAll('thead th').forEach(function(h){h.removeAttribute('aria-sort');});\n"
        "  th.setAttribute('aria-sort',up?'ascending':'descending');rows.forEach(function(r){tb.appendChild(r);});});\n"
        "});})();\n</script>\n";

int render_jobs(struct history_job *const *jobs, size_t n, enum render_format fmt, const char *prefix,
                struct render_output *ret) {
        struct render_output out = {NULL, NULL, 0};
        struct writer w = {NULL, fmt, prefix, &out, 0};
        size_t len = 0;

        if (n == 0)
                return -EINVAL;
        w.f = open_memstream(&out.text, &len);
        if (!w.f)
                return -ENOMEM;
        if (fmt == RENDER_HTML) {
                writer_put(&w, html_head);
                writer_put(&w, "leash report: ");
                if (n == 1)
                        writer_esc(&w, jobs[0]->name ? jobs[0]->name : "job");
                else
                        writer_putf(&w, "%zu jobs", n);
                writer_put(&w, html_style);
        }
        if (n == 1)
                job_page(&w, jobs[0]);
        else
                summary_page(&w, jobs, n);
        if (fmt == RENDER_HTML) {
                writer_put(&w, "<footer class=\"note\"><p>Drawn by leash from its reports; every figure comes from the "
                               "kernel's accounting or the time series.</p></footer>\n");
                if (n > 1)
                        writer_put(&w, html_script);
                writer_put(&w, "</body>\n</html>\n");
        }
        if (fclose(w.f) != 0 && w.err == 0)
                w.err = -ENOMEM;
        if (w.err < 0) {
                render_output_free(&out);
                return w.err;
        }
        *ret = out;
        return 0;
}

void render_output_free(struct render_output *o) {
        free(o->text);
        for (size_t i = 0; i < o->n_files; i++) {
                free(o->files[i].name);
                free(o->files[i].text);
        }
        free(o->files);
        *o = (struct render_output){NULL, NULL, 0};
}
