/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The page about many jobs: how their ends were distributed (the reasons
 * line), each figure's distribution, how close the jobs came to each limit,
 * and the RENDER_WORST worst jobs in a sortable table.
 */
#include "summary.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../basic/macro.h"
#include "chart.h"
#include "markup.h"

static void limits_short(const struct history_job *j, char *buf, size_t size) {
        static const enum leash_limit shown[] = {LEASH_LIMIT_MEMORY, LEASH_LIMIT_CPUS, LEASH_LIMIT_CPU_TIME,
                                                 LEASH_LIMIT_WALL_TIME, LEASH_LIMIT_PIDS};
        size_t n = 0;
        buf[0] = '\0';
        for (size_t i = 0; i < ELEMENTSOF(shown) && n < size; i++) {
                const struct history_limit *x = &j->limit[shown[i]];
                char v[64];
                if (!x->set)
                        continue;
                markup_value(x->value, history_limit_unit(shown[i]), v, sizeof v);
                n += (size_t) snprintf(buf + n, size - n, "%s%s %s", n ? ", " : "", history_limit_name(shown[i]),
                                       x->unlimited ? "max" : v);
        }
        if (!n)
                snprintf(buf, size, "none");
}

/* In a summary, the job cgroup's own name (NAME@PID) tells runs of one name apart. */
static const char *job_label(const struct history_job *j) {
        const char *b = j->cgroup ? strrchr(j->cgroup, '/') : NULL;
        return b && b[1] ? b + 1 : j->name ? j->name : j->path;
}

/* How bad a job's end was, for the summary's order: ended by a limit or an
 * OOM kill (0),
 * ended otherwise than ok or exited non-zero (1), ok (2). */
static int job_class(const struct history_job *j) {
        if (history_reason_limit(j->reason) >= 0 || strcmp(j->reason, "measured_limit") == 0 ||
            j->usage[HU_OOM_KILLS] > 0)
                return 0;
        return strcmp(j->reason, "ok") != 0 || j->exit_code != 0 ? 1 : 2;
}

/* The limit the job came nearest to, as usage / limit (a limit that ended it
 * counts as 1 at least); -1 with no limit to compare with. */
static double job_nearest(const struct history_job *j, enum leash_limit *which) {
        static const enum leash_limit lim[] = {LEASH_LIMIT_MEMORY, LEASH_LIMIT_CPU_TIME, LEASH_LIMIT_WALL_TIME,
                                               LEASH_LIMIT_PIDS};
        double best = -1;
        for (size_t l = 0; l < ELEMENTSOF(lim); l++) {
                const struct history_limit *x = &j->limit[lim[l]];
                double used = history_limit_used(j, lim[l]), r;
                if (!x->set || x->unlimited || !(x->value > 0))
                        continue;
                r = isnan(used) ? 0 : used / x->value;
                if (history_job_hit(j, lim[l]) && r < 1)
                        r = 1;
                if (r > best) {
                        best = r;
                        *which = lim[l];
                }
        }
        return best;
}

struct ranked {
        const struct history_job *j;
        int cls;
        double near;
        enum leash_limit which;
};

static int cmp_ranked(const void *a, const void *b) {
        const struct ranked *x = a, *y = b;
        if (x->cls != y->cls)
                return x->cls - y->cls;
        if (x->near != y->near)
                return x->near < y->near ? 1 : -1;
        return strcmp(job_label(x->j), job_label(y->j));
}

static void summary_row(struct writer *w, const struct ranked *k, const int *width) {
        const struct history_job *j = k->j;
        char ex[16], wall[64], cpu[64], mem[64], pids[64], near[64], lim[256];
        snprintf(ex, sizeof ex, "%d", j->exit_code);
        markup_value(j->usage[HU_WALL], HUNIT_SECONDS, wall, sizeof wall);
        markup_value(j->usage[HU_CPU], HUNIT_SECONDS, cpu, sizeof cpu);
        markup_value(j->usage[HU_MEM_PEAK], HUNIT_BYTES, mem, sizeof mem);
        markup_value(j->usage[HU_PIDS_PEAK], HUNIT_COUNT, pids, sizeof pids);
        if (k->near >= 0)
                snprintf(near, sizeof near, "%s %.0f %%", history_limit_name(k->which), k->near * 100);
        else
                snprintf(near, sizeof near, "—");
        limits_short(j, lim, sizeof lim);
        writer_table_row(w,
                         (struct cell[]){{.text = job_label(j), .sort = NAN},
                                         {.text = j->reason, .sort = NAN},
                                         {.plain = ex, .sort = j->exit_code},
                                         {.plain = wall, .sort = j->usage[HU_WALL]},
                                         {.plain = cpu, .sort = j->usage[HU_CPU]},
                                         {.plain = mem, .sort = j->usage[HU_MEM_PEAK]},
                                         {.plain = pids, .sort = j->usage[HU_PIDS_PEAK]},
                                         {.plain = near, .sort = k->near},
                                         {.plain = lim, .sort = NAN}},
                         9, width);
}

/* The RENDER_WORST worst jobs, not a row per job: 10,000 rows are not read.
 * Worst: ended by a limit, then otherwise failed, then ok; within each, the
 * nearest to a limit first. The distributions above count every job. */
static void summary_table(struct writer *w, struct history_job *const *jobs, size_t n) {
        static const char *const head[] = {"job",         "reason",    "exit",          "wall",  "CPU",
                                           "memory peak", "processes", "nearest limit", "limits"};
        static const int width[] = {20, 12, 5, 10, 10, 12, 10, 16, 1};
        _cleanup_free_ struct ranked *k = calloc(n, sizeof *k);
        size_t shown = n < RENDER_WORST ? n : RENDER_WORST;
        char caption[256];

        if (!k) {
                w->err = -ENOMEM;
                return;
        }
        for (size_t i = 0; i < n; i++) {
                k[i] = (struct ranked){jobs[i], job_class(jobs[i]), -1, LEASH_LIMIT_MEMORY};
                k[i].near = job_nearest(jobs[i], &k[i].which);
        }
        qsort(k, n, sizeof *k, cmp_ranked);
        writer_heading(w, 2, shown < n ? "The worst jobs" : "Jobs");
        if (shown < n)
                snprintf(caption, sizeof caption,
                         "The %zu worst of %zu jobs (ended by a limit, then failed, then nearest a limit); %zu not "
                         "shown, counted in the distributions above%s",
                         shown, n, n - shown, w->fmt == RENDER_HTML ? " (select a column heading to sort)" : "");
        else
                snprintf(caption, sizeof caption, "Every job, the worst first%s",
                         w->fmt == RENDER_HTML ? " (select a column heading to sort; the table reads the same "
                                                 "without scripts)"
                                               : "");
        writer_table_open(w, caption, head, 9, true, width);
        for (size_t i = 0; i < shown; i++)
                summary_row(w, &k[i], width);
        writer_table_close(w);
}

static void reasons_line(struct writer *w, struct history_job *const *jobs, size_t n) {
        bool *done = calloc(n, sizeof *done);
        if (!done) {
                w->err = -ENOMEM;
                return;
        }
        writer_put(w, w->fmt == RENDER_HTML ? "<p id=\"reasons\">" : "\n");
        writer_putf(w, "%zu jobs: ", n);
        for (size_t i = 0, first = 1; i < n; i++) {
                size_t k = 0;
                if (done[i])
                        continue;
                for (size_t m = i; m < n; m++)
                        if (!done[m] && strcmp(jobs[m]->reason, jobs[i]->reason) == 0)
                                done[m] = true, k++;
                writer_putf(w, "%s%zu ", first ? "" : ", ", k);
                writer_esc(w, jobs[i]->reason);
                first = 0;
        }
        writer_put(w, w->fmt == RENDER_HTML ? ".</p>\n" : ".\n");
        free(done);
}

/* Each usage figure across the jobs: how many have it, min, median, p90, max. */
static void figures_table(struct writer *w, struct history_job *const *jobs, size_t n) {
        static const enum history_usage fig[] = {HU_WALL, HU_CPU, HU_MEM_PEAK, HU_PIDS_PEAK, HU_IO_WRITE};
        static const char *const head[] = {"figure", "jobs", "min", "median", "p90", "max"};
        static const int width[] = {16, 6, 12, 12, 12, 1};
        static const double q[] = {0, 0.5, 0.9, 1};
        _cleanup_free_ double *v = calloc(n, sizeof *v), *sorted = calloc(n, sizeof *sorted);

        if (!v || !sorted) {
                w->err = -ENOMEM;
                return;
        }
        writer_table_open(w, "Each figure across the jobs", head, 6, false, width);
        for (size_t f = 0; f < ELEMENTSOF(fig); f++) {
                const struct history_usage_info *info = &history_usage_info[fig[f]];
                char at[4][64], cnt[16];
                size_t m;
                for (size_t i = 0; i < n; i++)
                        v[i] = jobs[i]->usage[fig[f]];
                m = history_sorted(v, n, sorted);
                if (!m)
                        continue;
                for (size_t k = 0; k < ELEMENTSOF(q);
                     k++) /* the nearest rank: sorted[0] and sorted[m - 1] at the ends */
                        markup_value(history_quantile(sorted, m, q[k]), info->unit, at[k], sizeof at[k]);
                snprintf(cnt, sizeof cnt, "%zu", m);
                writer_table_row(w,
                                 (struct cell[]){{.plain = info->label, .sort = NAN},
                                                 {.plain = cnt, .sort = NAN},
                                                 {.plain = at[0], .sort = NAN},
                                                 {.plain = at[1], .sort = NAN},
                                                 {.plain = at[2], .sort = NAN},
                                                 {.plain = at[3], .sort = NAN}},
                                 6, width);
        }
        writer_table_close(w);
}

/* How close each job came to limit l: usage / limit in bins of 10 %, the
 * last bin the jobs that ended by that limit. *ret_with: the jobs with
 * that limit and a figure to compare; *ret_hit: those it ended. */
static const char *const near_bins[] = {"<10%", "10%", "20%", "30%", "40%", "50%", "60%", "70%", "80%", "90%", "hit"};
#define N_NEAR_BINS ELEMENTSOF(near_bins)

static void near_counts(struct history_job *const *jobs, size_t n, enum leash_limit l, double counts[N_NEAR_BINS],
                        size_t *ret_with, size_t *ret_hit) {
        *ret_with = *ret_hit = 0;
        for (size_t i = 0; i < n; i++) {
                const struct history_limit *x = &jobs[i]->limit[l];
                double used = history_limit_used(jobs[i], l), ratio;
                if (!x->set || x->unlimited || !(x->value > 0) || isnan(used))
                        continue;
                (*ret_with)++;
                if (history_job_hit(jobs[i], l)) {
                        counts[N_NEAR_BINS - 1]++;
                        (*ret_hit)++;
                        continue;
                }
                ratio = used / x->value;
                counts[ratio >= 1 ? 9 : (size_t) (ratio * 10)]++;
        }
}

/* The bars of near_counts: a row of #s per bin in text, else an SVG
 * histogram (inline with its data table in HTML, a file beside Markdown). */
static void near_chart(struct writer *w, const char *id, const char *title, const char *desc,
                       const double counts[N_NEAR_BINS], size_t with) {
        _cleanup_free_ char *svg = NULL;
        struct chart_bars cb = {id,
                                title,
                                desc,
                                "usage as a share of the limit",
                                w->fmt == RENDER_MARKDOWN,
                                near_bins,
                                counts,
                                N_NEAR_BINS,
                                N_NEAR_BINS - 1};
        const char *name;

        if (w->fmt == RENDER_TEXT) {
                writer_heading(w, 3, title);
                for (size_t b = 0; b < N_NEAR_BINS; b++)
                        writer_putf(w, " %-5s %4.0f %.*s\n", near_bins[b], counts[b],
                                    (int) (counts[b] * 50 / (double) with),
                                    "##################################################");
                return;
        }
        w->err = chart_bars_svg(&cb, &svg);
        if (w->err < 0)
                return;
        if (w->fmt == RENDER_HTML) {
                writer_putf(w,
                            "<h3>%s</h3>\n<figure>\n%s<figcaption>%s</figcaption>\n<details><summary>Data "
                            "behind this "
                            "chart</summary><table class=\"data\"><thead><tr><th scope=\"col\">share "
                            "of the limit</th><th scope=\"col\">jobs</th></tr></thead><tbody>",
                            title, svg, desc);
                for (size_t b = 0; b < N_NEAR_BINS; b++)
                        writer_putf(w, "<tr><th scope=\"row\">%s</th><td>%.0f</td></tr>", near_bins[b], counts[b]);
                writer_put(w, "</tbody></table></details>\n</figure>\n");
        } else if ((name = writer_attach_svg(w, id, &svg))) {
                writer_putf(w, "![%s](", desc);
                writer_put_url(w, name);
                writer_put(w, ")\n\n");
        }
}

static void distributions(struct writer *w, struct history_job *const *jobs, size_t n) {
        static const enum leash_limit lim[] = {LEASH_LIMIT_MEMORY, LEASH_LIMIT_CPU_TIME, LEASH_LIMIT_WALL_TIME,
                                               LEASH_LIMIT_PIDS};

        writer_heading(w, 2, "Distributions");
        figures_table(w, jobs, n);
        for (size_t l = 0; l < ELEMENTSOF(lim) && w->err >= 0; l++) {
                const char *name = history_limit_name(lim[l]);
                double counts[N_NEAR_BINS] = {0};
                size_t with, hit;
                char id[32], title[96], desc[256];

                near_counts(jobs, n, lim[l], counts, &with, &hit);
                if (!with)
                        continue;
                snprintf(id, sizeof id, "near-%s", name);
                snprintf(title, sizeof title, "How close the jobs came to their %s limit", name);
                snprintf(desc, sizeof desc,
                         "%zu jobs had a %s limit; %zu ended by it. Bars count the jobs by their usage as a share of "
                         "the limit, in steps of 10 %%; the last bar counts the jobs the limit ended.",
                         with, name, hit);
                near_chart(w, id, title, desc, counts, with);
        }
}

void summary_page(struct writer *w, struct history_job *const *jobs, size_t n) {
        if (w->fmt == RENDER_HTML)
                writer_putf(w, "<h1>leash report: %zu jobs</h1>\n", n);
        else if (w->fmt == RENDER_MARKDOWN)
                writer_putf(w, "# leash report: %zu jobs\n", n);
        else
                writer_putf(w, "leash report: %zu jobs\n", n);
        reasons_line(w, jobs, n);
        distributions(w, jobs, n);
        summary_table(w, jobs, n);
}
