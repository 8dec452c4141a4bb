/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * leash suggest: limits for one kind of job from the reports of its past
 * runs, with the reasoning (how many jobs, the distribution, how many each
 * proposal would have killed, the waste it costs) printed as text, as JSON,
 * or as comments above an INI profile section ready for profiles.d.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../basic/log.h"
#include "../basic/macro.h"
#include "../report/history.h"
#include "../render/markup.h"
#include "../settings/options.h"
#include "../render/suggest.h"
#include "cli.h"

enum out_format { OUT_TEXT, OUT_INI, OUT_JSON };

static void suggest_help(void) {
        printf("Usage: leash suggest [--name NAME | --profile NAME] [--strategy S] [--quantile Q]\n"
               "                     [--headroom PCT] [--format ini|json|text] REPORTS...\n"
               "\n"
               "Propose memory, cpu-time, wall-time, pids and cpus limits for one kind of job from\n"
               "the reports (and series) of its past runs; without --name or --profile, one\n"
               "proposal per job name. Jobs that ended by a limit count as censored: their need\n"
               "is at least what they used. pids and cpus only where a job ran under that limit;\n"
               "no limit that history shows ending jobs unless --strategy or --quantile asks.\n"
               "\n"
               "  --name NAME        only the jobs of this name (--name of leash run)\n"
               "  --profile NAME     only the jobs run with this profile; names the INI section\n"
               "  --strategy S       max-seen (cover the largest need seen, the default), quantile,\n"
               "                     or min-waste (least expected waste if you rerun a killed\n"
               "                     job with the max-seen limit; leash does not rerun it)\n"
               "  --quantile Q       the quantile strategy's Q, 0 < Q <= 1 [0.95]; implies\n"
               "                     --strategy quantile unless one is given\n"
               "  --headroom PCT     added to every proposal [10]\n"
               "  --format F         text (the reasoning), ini (a profile section) or json [text]\n");
}

static void json_string(const char *s) {
        putchar('"');
        for (const unsigned char *p = (const unsigned char *) s; *p; p++) {
                if (*p == '"' || *p == '\\')
                        printf("\\%c", *p);
                else if (*p < 0x20 || *p == 0x7f)
                        printf("\\u%04x", *p);
                else
                        putchar(*p);
        }
        putchar('"');
}

static const char *waste_unit(enum suggest_resource r) {
        static const char *const u[_SUGGEST_MAX] = {"MiB*s", "s", "s", "process*s", "core*s"};
        return u[r];
}

static const char *num(double v, char *buf, size_t size) {
        snprintf(buf, size, fabs(v) >= 100 ? "%.0f" : "%.3g", v);
        return buf;
}

static double waste_scale(enum suggest_resource r) {
        return r == SUGGEST_MEMORY ? 1.0 / 1048576 : 1.0;
}

static void print_text(enum suggest_resource r, const struct suggest_result *x, enum suggest_strategy chosen,
                       const char *lead) {
        enum history_unit u = suggest_resource_unit(r);
        char a[64], b[64], c[64], d[64], nb[32];

        markup_value(x->min, u, a, sizeof a);
        markup_value(x->median, u, b, sizeof b);
        markup_value(x->p90, u, c, sizeof c);
        markup_value(x->max, u, d, sizeof d);
        printf("%s%s: %zu jobs, %zu censored (stopped early: their need is at least what they used)\n", lead,
               suggest_resource_name[r], x->n, x->n_censored);
        printf("%s  seen: min %s, median %s, p90 %s, max %s%s\n", lead, a, b, c, d,
               x->retry_lower_bound ? " (the max is censored: the true need is higher)" : "");
        for (int s = 0; s < _SUGGEST_STRATEGY_MAX; s++) {
                const struct suggest_choice *ch = &x->choice[s];
                if (!ch->defined) {
                        printf("%s  %-10s —  a job over its cpu limit is slowed, not killed: no retry model\n", lead,
                               suggest_strategy_name[s]);
                        continue;
                }
                markup_value(ch->limit, u, a, sizeof a);
                markup_value(x->retry, u, b, sizeof b);
                printf("%s%s %-10s %-10s %s %zu of %zu", lead, s == (int) chosen ? "*" : " ", suggest_strategy_name[s],
                       a, r == SUGGEST_CPUS ? "throttles" : "kills", ch->killed, x->n);
                if (ch->unknown)
                        printf(" (+%zu unknown)", ch->unknown);
                /* the cost model's rerun: leash itself never reruns a job */
                if (ch->killed && r != SUGGEST_CPUS)
                        printf(", each costed as rerun by you at %s", b);
                if (r != SUGGEST_CPUS)
                        printf("; waste %s %s per job", num(ch->waste * waste_scale(r), nb, sizeof nb), waste_unit(r));
                if (ch->lower_bound)
                        printf("; a lower bound");
                putchar('\n');
        }
        if (r != SUGGEST_CPUS) {
                double saved = x->choice[SUGGEST_MAX_SEEN].waste - x->choice[chosen].waste;
                if (chosen != SUGGEST_MAX_SEEN)
                        printf("%s  %s avoids %s %s of waste per job against max-seen\n", lead,
                               suggest_strategy_name[chosen], num(saved * waste_scale(r), nb, sizeof nb),
                               waste_unit(r));
        }
}

static int parse_fraction(const char *s, double lo, double hi, bool pct, double *ret) {
        char *end;
        double v;
        errno = 0;
        v = strtod(s, &end);
        if (pct && *end == '%')
                end++;
        if (end == s || *end || errno || !isfinite(v) || v < lo || v > hi)
                return -EINVAL;
        *ret = v;
        return 0;
}

struct suggest_opts {
        const char *name, *profile;
        double quantile, headroom;
        int strategy;
        bool strategy_asked; /* --strategy or --quantile given */
        enum out_format fmt;
};

/* One kind of job: its reports, what they say per resource, and which keys
 * leash will not propose and why. */
struct suggest_group {
        const char *section; /* the INI section: --profile, --name, the jobs' name, or "suggested" */
        const char *by;      /* "name", "profile" or NULL (every report given, one kind) */
        struct history_job **jobs;
        size_t n;
        struct suggest_result res[_SUGGEST_MAX];
        bool have[_SUGGEST_MAX];
        size_t sampled_pids;             /* jobs whose pids figure is the sampled peak (no pids.peak) */
        char why_not[_SUGGEST_MAX][192]; /* "" where the key is proposed */
};

static const enum leash_limit suggest_limit[_SUGGEST_MAX] = {LEASH_LIMIT_MEMORY, LEASH_LIMIT_CPU_TIME,
                                                             LEASH_LIMIT_WALL_TIME, LEASH_LIMIT_PIDS, LEASH_LIMIT_CPUS};

static const struct suggest_choice *chosen_choice(const struct suggest_result *x, int strategy) {
        return x->choice[strategy].defined ? &x->choice[strategy] : &x->choice[SUGGEST_MAX_SEEN];
}

/* Why key r is not proposed, or "": pids and cpus only where a job of the
 * group ran under that limit and something enforced it (no cpus = 1.09 for
 * jobs that never asked for cores); never a limit that history shows ending
 * jobs (a censored need at or above it) unless a strategy was asked for. */
static void group_judge(struct suggest_group *g, enum suggest_resource r, const struct suggest_opts *o) {
        const struct suggest_choice *ch = chosen_choice(&g->res[r], o->strategy);
        bool enforced = r != SUGGEST_PIDS && r != SUGGEST_CPUS;
        char v[64];

        g->why_not[r][0] = '\0';
        for (size_t i = 0; i < g->n && !enforced; i++) {
                const struct history_limit *l = &g->jobs[i]->limit[suggest_limit[r]];
                enforced = l->set && l->enforced_by && strcmp(l->enforced_by, "none") != 0;
        }
        if (!enforced) {
                snprintf(
                        g->why_not[r], sizeof g->why_not[r],
                        "no job of these ran under a %s limit that leash enforced: it proposes none it was not seen to "
                        "enforce",
                        suggest_resource_name[r]);
                return;
        }
        if (ch->killed && r != SUGGEST_CPUS && !o->strategy_asked) {
                markup_value(ch->limit, suggest_resource_unit(r), v, sizeof v);
                snprintf(g->why_not[r], sizeof g->why_not[r],
                         "%s would have ended %zu of the past jobs (--strategy %s proposes it anyway)", v, ch->killed,
                         suggest_strategy_name[o->strategy]);
        }
}

static int group_compute(struct suggest_group *g, const struct suggest_opts *o) {
        for (size_t i = 0; i < g->n; i++)
                g->sampled_pids += isnan(g->jobs[i]->usage[HU_PIDS_PEAK]) && !isnan(g->jobs[i]->tasks_peak_sampled);
        for (int r = 0; r < _SUGGEST_MAX; r++) {
                _cleanup_free_ struct suggest_obs *obs = calloc(g->n, sizeof *obs);
                size_t k = 0;
                if (!obs)
                        return -ENOMEM;
                for (size_t i = 0; i < g->n; i++)
                        k += suggest_observe(g->jobs[i], (enum suggest_resource) r, &obs[k]);
                g->have[r] = k > 0 && suggest_compute(obs, k, (enum suggest_resource) r, o->quantile, o->headroom / 100,
                                                      &g->res[r]) == 0;
                if (g->have[r])
                        group_judge(g, (enum suggest_resource) r, o);
        }
        return 0;
}

/* A figure in JSON, rounded to millionths (of a second, a byte, a core): no
 * float noise such as 0.062164999999999998; null when it is not a number. */
static void jnum(const char *before, double v) {
        char buf[64];
        size_t n;

        fputs(before, stdout);
        if (!isfinite(v)) {
                fputs("null", stdout);
                return;
        }
        snprintf(buf, sizeof buf, "%.6f", v);
        n = strlen(buf);
        while (n > 0 && buf[n - 1] == '0')
                n--;
        if (n > 0 && buf[n - 1] == '.')
                n--;
        buf[n] = '\0';
        fputs(strcmp(buf, "-0") == 0 ? "0" : buf, stdout);
}

static void print_json_resource(const struct suggest_group *g, int r, const struct suggest_opts *o) {
        const struct suggest_result *x = &g->res[r];

        printf("\n    \"%s\": {\"jobs\": %zu, \"censored\": %zu", suggest_resource_name[r], x->n, x->n_censored);
        jnum(", \"min\": ", x->min);
        jnum(", \"median\": ", x->median);
        jnum(", \"p90\": ", x->p90);
        jnum(", \"max\": ", x->max);
        jnum(", \"used_per_job\": ", x->used);
        jnum(", \"retry\": ", x->retry);
        printf(", \"retry_lower_bound\": %s, \"proposed\": ", x->retry_lower_bound ? "true" : "false");
        if (g->why_not[r][0]) {
                printf("null, \"not_proposed\": ");
                json_string(g->why_not[r]);
        } else
                jnum("", chosen_choice(x, o->strategy)->limit);
        if (r == SUGGEST_PIDS)
                printf(", \"sampled_peaks\": %zu", g->sampled_pids);
        printf(", \"strategies\": {");
        for (int s = 0, f2 = 1; s < _SUGGEST_STRATEGY_MAX; s++) {
                const struct suggest_choice *ch = &x->choice[s];
                if (!ch->defined)
                        continue;
                printf("%s\"%s\": {", f2 ? "" : ", ", suggest_strategy_name[s]);
                jnum("\"limit\": ", ch->limit);
                printf(", \"killed\": %zu, \"unknown\": %zu", ch->killed, ch->unknown);
                jnum(", \"cost\": ", ch->cost);
                jnum(", \"waste\": ", ch->waste);
                printf(", \"lower_bound\": %s}", ch->lower_bound ? "true" : "false");
                f2 = 0;
        }
        printf("}}");
}

static void print_json(const struct suggest_group *g, const struct suggest_opts *o) {
        printf("{\n  \"jobs\": %zu,\n  \"selected_by\": ", g->n);
        if (g->by) {
                printf("{\"%s\": ", g->by);
                json_string(g->section);
                printf("}");
        } else
                printf("null");
        printf(",\n  \"strategy\": \"%s\",\n  \"quantile\": %g,\n  \"headroom_pct\": %g,\n  \"resources\": {",
               suggest_strategy_name[o->strategy], o->quantile, o->headroom);
        for (int r = 0, first = 1; r < _SUGGEST_MAX; r++) {
                if (!g->have[r])
                        continue;
                if (!first)
                        putchar(',');
                print_json_resource(g, r, o);
                first = 0;
        }
        printf("\n  }\n}");
}

static void print_reasoning(const struct suggest_group *g, const struct suggest_opts *o) {
        const char *lead = o->fmt == OUT_INI ? "; " : "";

        printf("%sleash suggest: %zu jobs", lead, g->n);
        if (g->by) {
                printf(" of %s '", g->by);
                markup_text(stdout, g->section);
                printf("'");
        }
        printf(", strategy %s, headroom %g %%", suggest_strategy_name[o->strategy], o->headroom);
        if (o->strategy == SUGGEST_QUANTILE)
                printf(", quantile %g", o->quantile);
        printf("\n");
        for (int r = 0; r < _SUGGEST_MAX; r++) {
                if (!g->have[r]) {
                        printf("%s%s: no report has this figure\n", lead, suggest_resource_name[r]);
                        continue;
                }
                print_text((enum suggest_resource) r, &g->res[r], (enum suggest_strategy) o->strategy, lead);
                if (r == SUGGEST_PIDS && g->sampled_pids)
                        printf("%s  %zu of them: the sampled peak of the job's tasks (no pids.peak): a lower bound\n",
                               lead, g->sampled_pids);
                if (g->why_not[r][0])
                        printf("%s  not proposed: %s\n", lead, g->why_not[r]);
        }
}

static void print_group(const struct suggest_group *g, const struct suggest_opts *o) {
        if (o->fmt == OUT_JSON) {
                print_json(g, o);
                return;
        }
        print_reasoning(g, o);
        if (o->fmt != OUT_INI)
                return;
        if (!leash_profile_name_is_valid(g->section)) {
                printf("; '%s' is not a valid profile name: no section\n", g->section);
                return;
        }
        printf("\n[%s]\n", g->section);
        for (int r = 0; r < _SUGGEST_MAX; r++) {
                char v[64];
                if (!g->have[r] || g->why_not[r][0])
                        continue;
                suggest_format((enum suggest_resource) r, chosen_choice(&g->res[r], o->strategy)->limit, v, sizeof v);
                printf("%s = %s\n", suggest_resource_name[r], v);
        }
}

static int parse_suggest_options(int argc, char **argv, struct suggest_opts *o) {
        static const struct option longopts[] = {
                {"name", required_argument, NULL, 'n'},     {"profile", required_argument, NULL, 'p'},
                {"quantile", required_argument, NULL, 'q'}, {"headroom", required_argument, NULL, 'H'},
                {"format", required_argument, NULL, 'f'},   {"strategy", required_argument, NULL, 's'},
                {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0},
        };
        int c;

        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
                switch (c) {
                case 'n':
                        o->name = optarg;
                        break;
                case 'p':
                        o->profile = optarg;
                        break;
                case 'q':
                        if (parse_fraction(optarg, 1e-9, 1, false, &o->quantile) < 0 || o->quantile <= 0)
                                return usage_error("suggest: invalid quantile '%s': expected 0 < Q <= 1", optarg);
                        if (o->strategy < 0)
                                o->strategy = SUGGEST_QUANTILE;
                        o->strategy_asked = true;
                        break;
                case 'H':
                        if (parse_fraction(optarg, 0, 1000, true, &o->headroom) < 0)
                                return usage_error("suggest: invalid headroom '%s': expected a percentage, 0 to 1000",
                                                   optarg);
                        break;
                case 's':
                        o->strategy = -2;
                        for (int s = 0; s < _SUGGEST_STRATEGY_MAX; s++)
                                if (strcmp(optarg, suggest_strategy_name[s]) == 0)
                                        o->strategy = s;
                        if (o->strategy < 0)
                                return usage_error(
                                        "suggest: invalid strategy '%s': expected max-seen, quantile or min-waste",
                                        optarg);
                        o->strategy_asked = true;
                        break;
                case 'f':
                        if (strcmp(optarg, "ini") == 0)
                                o->fmt = OUT_INI;
                        else if (strcmp(optarg, "json") == 0)
                                o->fmt = OUT_JSON;
                        else if (strcmp(optarg, "text") == 0)
                                o->fmt = OUT_TEXT;
                        else
                                return usage_error("suggest: invalid format '%s': expected ini, json or text", optarg);
                        break;
                case 'h':
                        suggest_help();
                        return fflush(stdout) == 0 ? 0 : EXIT_LEASH_FAILED;
                default:
                        return usage_error("suggest: unknown option '%s'", argv[optind - 1]);
                }
        }
        if (o->strategy < 0)
                o->strategy = SUGGEST_MAX_SEEN;
        if (o->name && o->profile)
                return usage_error("suggest: --name and --profile select the jobs two ways: give one");
        if (o->fmt == OUT_INI && (o->name || o->profile) &&
            !leash_profile_name_is_valid(o->profile ? o->profile : o->name))
                return usage_error("suggest: '%s' is not a valid profile name for the INI section",
                                   o->profile ? o->profile : o->name);
        if (optind >= argc)
                return usage_error("suggest: no report given");
        return -1; /* go on */
}

static const char *job_name(const struct history_job *j) {
        return j->name ? j->name : "";
}

static int by_name(const void *a, const void *b) {
        return strcmp(job_name(*(struct history_job *const *) a), job_name(*(struct history_job *const *) b));
}

/* The selected jobs, one group per job name unless --name or --profile
 * chose one kind: unrelated commands are never merged into one profile. */
static int suggest_groups(struct history_job **jobs, size_t n, const struct suggest_opts *o) {
        size_t n_groups = 0;

        if (!o->name && !o->profile)
                qsort(jobs, n, sizeof *jobs, by_name);
        for (size_t i = 0; i < n; n_groups++) {
                struct suggest_group *g = calloc(1, sizeof *g);
                size_t k = i + 1;
                int r;
                if (!g)
                        return -ENOMEM;
                while (k < n && !o->name && !o->profile && strcmp(job_name(jobs[k]), job_name(jobs[i])) == 0)
                        k++;
                g->jobs = jobs + i;
                g->n = (o->name || o->profile) ? n : k - i;
                g->by = o->profile ? "profile" : "name";
                g->section = o->profile ? o->profile : o->name ? o->name : job_name(jobs[i]);
                if (!*g->section) { /* reports without a job cgroup's name */
                        g->section = "suggested";
                        g->by = NULL;
                }
                r = group_compute(g, o);
                if (r >= 0) {
                        if (o->fmt == OUT_JSON)
                                printf("%s", n_groups ? ",\n" : "");
                        else if (n_groups)
                                printf("\n");
                        print_group(g, o);
                }
                k = g->n;
                free(g);
                if (r < 0)
                        return r;
                i += k;
        }
        return (int) n_groups;
}

int cmd_suggest(int argc, char **argv) {
        struct suggest_opts o = {.quantile = 0.95, .headroom = 10, .strategy = -1, .fmt = OUT_TEXT};
        struct history_job **all = NULL, **jobs = NULL;
        size_t n_all = 0, n = 0;
        bool mixed = false;
        int rc = parse_suggest_options(argc, argv, &o);

        if (rc >= 0)
                return rc;
        rc = EXIT_LEASH_FAILED;
        if (cli_jobs_load(argv + optind, (size_t) (argc - optind), &all, &n_all) < 0)
                return EXIT_LEASH_FAILED;
        jobs = calloc(n_all ? n_all : 1, sizeof *jobs);
        if (!jobs)
                goto out;
        for (size_t i = 0; i < n_all; i++)
                if ((!o.name || strcmp(job_name(all[i]), o.name) == 0) &&
                    (!o.profile || (all[i]->profile && strcmp(all[i]->profile, o.profile) == 0)))
                        jobs[n++] = all[i];
        if (n == 0) {
                log_error("suggest: none of the %zu reports is of %s '%s'", n_all, o.name ? "name" : "profile",
                          o.name ? o.name : o.profile);
                goto out;
        }
        for (size_t i = 1; i < n && !o.name && !o.profile; i++)
                mixed = mixed || strcmp(job_name(jobs[i]), job_name(jobs[0])) != 0;
        if (o.fmt == OUT_JSON && mixed)
                printf("{\"groups\": [\n");
        if (suggest_groups(jobs, n, &o) < 0)
                goto out;
        if (o.fmt == OUT_JSON)
                printf(mixed ? "\n]}\n" : "\n");
        rc = fflush(stdout) == 0 ? 0 : EXIT_LEASH_FAILED;
out:
        free(jobs);
        cli_jobs_free(all, n_all);
        return rc;
}
