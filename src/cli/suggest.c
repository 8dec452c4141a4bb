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
               "the reports (and series) of its past runs. Jobs that ended by a limit count as\n"
               "censored: their need is at least what they used.\n"
               "\n"
               "  --name NAME        only the jobs of this name (--name of leash run)\n"
               "  --profile NAME     only the jobs run with this profile; names the INI section\n"
               "  --strategy S       max-seen (cover the largest need seen, the default), quantile,\n"
               "                     or min-waste (least expected waste when a killed job is\n"
               "                     retried with the max-seen limit)\n"
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
                if (ch->killed && r != SUGGEST_CPUS)
                        printf(", retried at %s", b);
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

int cmd_suggest(int argc, char **argv) {
        static const struct option longopts[] = {
                {"name", required_argument, NULL, 'n'},     {"profile", required_argument, NULL, 'p'},
                {"quantile", required_argument, NULL, 'q'}, {"headroom", required_argument, NULL, 'H'},
                {"format", required_argument, NULL, 'f'},   {"strategy", required_argument, NULL, 's'},
                {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0},
        };
        const char *name = NULL, *profile = NULL;
        double quantile = 0.95, headroom = 10;
        int strategy = -1, c;
        enum out_format fmt = OUT_TEXT;
        struct history_job **all = NULL, **jobs = NULL;
        size_t n_all = 0, n = 0;
        struct suggest_result res[_SUGGEST_MAX];
        bool have[_SUGGEST_MAX] = {false};
        const char *section;
        int rc = EXIT_LEASH_FAILED;

        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
                switch (c) {
                case 'n':
                        name = optarg;
                        break;
                case 'p':
                        profile = optarg;
                        break;
                case 'q':
                        if (parse_fraction(optarg, 1e-9, 1, false, &quantile) < 0 || quantile <= 0)
                                return usage_error("suggest: invalid quantile '%s': expected 0 < Q <= 1", optarg);
                        if (strategy < 0)
                                strategy = SUGGEST_QUANTILE;
                        break;
                case 'H':
                        if (parse_fraction(optarg, 0, 1000, true, &headroom) < 0)
                                return usage_error("suggest: invalid headroom '%s': expected a percentage, 0 to 1000",
                                                   optarg);
                        break;
                case 's':
                        strategy = -2;
                        for (int s = 0; s < _SUGGEST_STRATEGY_MAX; s++)
                                if (strcmp(optarg, suggest_strategy_name[s]) == 0)
                                        strategy = s;
                        if (strategy < 0)
                                return usage_error(
                                        "suggest: invalid strategy '%s': expected max-seen, quantile or min-waste",
                                        optarg);
                        break;
                case 'f':
                        if (strcmp(optarg, "ini") == 0)
                                fmt = OUT_INI;
                        else if (strcmp(optarg, "json") == 0)
                                fmt = OUT_JSON;
                        else if (strcmp(optarg, "text") == 0)
                                fmt = OUT_TEXT;
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
        if (strategy < 0)
                strategy = SUGGEST_MAX_SEEN;
        if (name && profile)
                return usage_error("suggest: --name and --profile select the jobs two ways: give one");
        section = profile ? profile : name ? name : "suggested";
        if (fmt == OUT_INI && !leash_profile_name_is_valid(section))
                return usage_error("suggest: '%s' is not a valid profile name for the INI section", section);
        if (optind >= argc)
                return usage_error("suggest: no report given");
        if (cli_jobs_load(argv + optind, (size_t) (argc - optind), &all, &n_all) < 0)
                return EXIT_LEASH_FAILED;
        jobs = calloc(n_all, sizeof *jobs);
        if (!jobs)
                goto out;
        for (size_t i = 0; i < n_all; i++)
                if ((!name || (all[i]->name && strcmp(all[i]->name, name) == 0)) &&
                    (!profile || (all[i]->profile && strcmp(all[i]->profile, profile) == 0)))
                        jobs[n++] = all[i];
        if (n == 0) {
                log_error("suggest: none of the %zu reports is of %s '%s'", n_all, name ? "name" : "profile",
                          name ? name : profile);
                goto out;
        }
        for (int r = 0; r < _SUGGEST_MAX; r++) {
                _cleanup_free_ struct suggest_obs *obs = calloc(n, sizeof *obs);
                size_t k = 0;
                if (!obs)
                        goto out;
                for (size_t i = 0; i < n; i++)
                        k += suggest_observe(jobs[i], (enum suggest_resource) r, &obs[k]);
                have[r] = k > 0 &&
                          suggest_compute(obs, k, (enum suggest_resource) r, quantile, headroom / 100, &res[r]) == 0;
        }

        if (fmt == OUT_JSON) {
                printf("{\n  \"jobs\": %zu,\n  \"selected_by\": ", n);
                if (name || profile) {
                        printf("{\"%s\": ", name ? "name" : "profile");
                        json_string(name ? name : profile);
                        printf("}");
                } else
                        printf("null");
                printf(",\n  \"strategy\": \"%s\",\n  \"quantile\": %g,\n  \"headroom_pct\": %g,\n  \"resources\": {",
                       suggest_strategy_name[strategy], quantile, headroom);
                for (int r = 0, first = 1; r < _SUGGEST_MAX; r++) {
                        const struct suggest_result *x = &res[r];
                        if (!have[r])
                                continue;
                        printf("%s\n    \"%s\": {\"jobs\": %zu, \"censored\": %zu, \"min\": %.17g, \"median\": %.17g, "
                               "\"p90\": %.17g, \"max\": %.17g, \"used_per_job\": %.17g, \"retry\": %.17g, "
                               "\"retry_lower_bound\": %s, \"proposed\": ",
                               first ? "" : ",", suggest_resource_name[r], x->n, x->n_censored, x->min, x->median,
                               x->p90, x->max, x->used, x->retry, x->retry_lower_bound ? "true" : "false");
                        if (x->choice[strategy].defined)
                                printf("%.17g", x->choice[strategy].limit);
                        else
                                printf("%.17g", x->choice[SUGGEST_MAX_SEEN].limit);
                        printf(", \"strategies\": {");
                        for (int s = 0, f2 = 1; s < _SUGGEST_STRATEGY_MAX; s++) {
                                const struct suggest_choice *ch = &x->choice[s];
                                if (!ch->defined)
                                        continue;
                                printf("%s\"%s\": {\"limit\": %.17g, \"killed\": %zu, \"unknown\": %zu, \"cost\": "
                                       "%.17g, \"waste\": %.17g, \"lower_bound\": %s}",
                                       f2 ? "" : ", ", suggest_strategy_name[s], ch->limit, ch->killed, ch->unknown,
                                       ch->cost, ch->waste, ch->lower_bound ? "true" : "false");
                                f2 = 0;
                        }
                        printf("}}");
                        first = 0;
                }
                printf("\n  }\n}\n");
        } else {
                const char *lead = fmt == OUT_INI ? "; " : "";
                printf("%sleash suggest: %zu jobs", lead, n);
                if (name || profile) {
                        printf(" of %s '", name ? "name" : "profile");
                        markup_text(stdout, section);
                        printf("'");
                }
                printf(", strategy %s, headroom %g %%", suggest_strategy_name[strategy], headroom);
                if (strategy == SUGGEST_QUANTILE)
                        printf(", quantile %g", quantile);
                printf("\n");
                for (int r = 0; r < _SUGGEST_MAX; r++)
                        if (have[r])
                                print_text((enum suggest_resource) r, &res[r], (enum suggest_strategy) strategy, lead);
                        else
                                printf("%s%s: no report has this figure\n", lead, suggest_resource_name[r]);
                if (fmt == OUT_INI) {
                        printf("\n[%s]\n", section);
                        for (int r = 0; r < _SUGGEST_MAX; r++) {
                                const struct suggest_choice *ch = res[r].choice[strategy].defined
                                                                          ? &res[r].choice[strategy]
                                                                          : &res[r].choice[SUGGEST_MAX_SEEN];
                                char v[64];
                                if (!have[r])
                                        continue;
                                suggest_format((enum suggest_resource) r, ch->limit, v, sizeof v);
                                printf("%s = %s\n", suggest_resource_name[r], v);
                        }
                }
        }
        rc = fflush(stdout) == 0 ? 0 : EXIT_LEASH_FAILED;
out:
        free(jobs);
        cli_jobs_free(all, n_all);
        return rc;
}
