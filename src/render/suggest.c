/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Theory. For one resource, job i needed n_i and held its allocation for w_i
 * (its wall time for memory, processes and cores; 1 for a time budget, whose
 * allocation is time itself). A first allocation a costs job i a*w_i when
 * n_i <= a; otherwise the job is killed at a and (in the model: leash never reruns a job) rerun with the retry
 * allocation M (the largest need seen, with headroom), costing a*w_i + M*w_i.
 * This is the two-step policy of resource_monitor's categories; like their
 * "dependent" model the killed attempt is charged its whole time (an upper
 * bound: the kill may come earlier). Strategies:
 *   max-seen   a = M: nothing seen is killed;
 *   quantile   a = the q-quantile of the needs, with headroom;
 *   min-waste  a = the candidate (each seen need with headroom, and M) with
 *              the least expected cost per job; ties go to the larger a.
 * A censored job (it ended by a limit, or leash stopped it) needed at least
 * n_i: it fits no a it has not been seen to fit, so it counts as killed when
 * a <= n_i and as unknown above. Cores are not killed but slowed (cpu.max
 * throttles): for them only max-seen and quantile are offered.
 */
#include "suggest.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../basic/macro.h"

const char *const suggest_resource_name[_SUGGEST_MAX] = {"memory", "cpu-time", "wall-time", "pids", "cpus"};
const char *const suggest_strategy_name[_SUGGEST_STRATEGY_MAX] = {"max-seen", "quantile", "min-waste"};

enum history_unit suggest_resource_unit(enum suggest_resource r) {
        switch (r) {
        case SUGGEST_MEMORY:
                return HUNIT_BYTES;
        case SUGGEST_CPU_TIME:
        case SUGGEST_WALL_TIME:
                return HUNIT_SECONDS;
        case SUGGEST_PIDS:
                return HUNIT_COUNT;
        default:
                return HUNIT_CORES;
        }
}

static const enum leash_limit resource_limit[_SUGGEST_MAX] = {
        LEASH_LIMIT_MEMORY, LEASH_LIMIT_CPU_TIME, LEASH_LIMIT_WALL_TIME, LEASH_LIMIT_PIDS, LEASH_LIMIT_CPUS};

/* Ended early: by a limit, by an interrupt, or killed by a signal leash sent. */
static bool stopped_early(const struct history_job *j) {
        return history_reason_limit(j->reason) >= 0 || strcmp(j->reason, "interrupted") == 0;
}

bool suggest_observe(const struct history_job *j, enum suggest_resource r, struct suggest_obs *ret) {
        static const enum history_usage fig[_SUGGEST_MAX] = {HU_MEM_PEAK, HU_CPU, HU_WALL, HU_PIDS_PEAK, HU_CPU};
        const struct history_limit *l = &j->limit[resource_limit[r]];
        struct suggest_obs o = {j->usage[fig[r]], 1, false};

        /* no pids.peak (no pids controller): the sampled peak of tasks, what
         * pids.max counts, a lower bound (a sample may miss the top) */
        if (r == SUGGEST_PIDS && isnan(o.need))
                o.need = j->tasks_peak_sampled;
        if (strcmp(j->reason, "setup_error") == 0 || strcmp(j->reason, "exec_error") == 0 || isnan(o.need))
                return false;
        if (r == SUGGEST_MEMORY || r == SUGGEST_PIDS || r == SUGGEST_CPUS) {
                o.weight = j->usage[HU_WALL];
                if (isnan(o.weight))
                        return false;
        }
        if (r == SUGGEST_CPUS) {
                /* the peak of the sampled cores, else the average */
                int c = j->series ? history_series_col(j->series, "cores") : -1;
                double peak = NAN;
                for (size_t i = 0; c >= 0 && i < j->series->n_rows; i++) {
                        double v = history_series_at(j->series, i, c);
                        if (!isnan(v) && (isnan(peak) || v > peak))
                                peak = v;
                }
                o.need = !isnan(peak) ? peak : o.weight > 0 ? o.need / o.weight : NAN;
                if (isnan(o.need))
                        return false;
        } else if (stopped_early(j)) {
                o.censored = true;
                /* the limit that ended it: the need was at least the limit */
                if (history_job_hit(j, resource_limit[r]) && l->set && !l->unlimited && l->value > o.need)
                        o.need = l->value;
        }
        *ret = o;
        return true;
}

double suggest_round(enum suggest_resource r, double v) {
        switch (r) {
        case SUGGEST_MEMORY:
                return ceil(v / 1048576 - 1e-9) * 1048576;
        case SUGGEST_CPU_TIME:
        case SUGGEST_WALL_TIME:
                return v < 10 ? ceil(v * 10 - 1e-9) / 10 : ceil(v - 1e-9);
        case SUGGEST_PIDS:
                return ceil(v - 1e-9);
        default:
                return ceil(v * 100 - 1e-9) / 100;
        }
}

void suggest_format(enum suggest_resource r, double v, char *buf, size_t size) {
        switch (r) {
        case SUGGEST_MEMORY:
                if (fmod(v, 1073741824) == 0)
                        snprintf(buf, size, "%.0fG", v / 1073741824);
                else
                        snprintf(buf, size, "%.0fM", v / 1048576);
                return;
        case SUGGEST_CPU_TIME:
        case SUGGEST_WALL_TIME:
                snprintf(buf, size, "%gs", v);
                return;
        case SUGGEST_PIDS:
                snprintf(buf, size, "%.0f", v);
                return;
        default:
                snprintf(buf, size, "%g", v);
                return;
        }
}

static void evaluate(const struct suggest_obs *obs, size_t n, double a, double retry, struct suggest_choice *c) {
        double cost = 0;
        c->killed = c->unknown = 0;
        for (size_t i = 0; i < n; i++) {
                bool fits = !obs[i].censored && obs[i].need <= a;
                if (obs[i].censored && a > obs[i].need)
                        c->unknown++;
                else if (!fits)
                        c->killed++;
                cost += a * obs[i].weight + (fits ? 0 : retry * obs[i].weight);
        }
        c->defined = true;
        c->limit = a;
        c->cost = cost / (double) n;
}

int suggest_compute(const struct suggest_obs *obs, size_t n, enum suggest_resource r, double quantile, double headroom,
                    struct suggest_result *ret) {
        _cleanup_free_ double *need = calloc(n ? n : 1, sizeof *need);
        struct suggest_result x = {0};
        double used = 0, qv;
        bool q_censored = false;

        if (!need)
                return -ENOMEM;
        if (n == 0 || !(quantile > 0 && quantile <= 1) || !(headroom >= 0))
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                need[i] = obs[i].need;
                used += obs[i].need * obs[i].weight;
                x.n_censored += obs[i].censored;
        }
        x.n = history_sorted(need, n, need);
        x.min = need[0];
        x.median = history_quantile(need, x.n, 0.5);
        x.p90 = history_quantile(need, x.n, 0.9);
        x.max = need[x.n - 1];
        x.used = used / (double) n;
        x.retry = suggest_round(r, x.max * (1 + headroom));
        for (size_t i = 0; i < n; i++)
                if (obs[i].censored && obs[i].need >= x.max)
                        x.retry_lower_bound = true;

        evaluate(obs, n, x.retry, x.retry, &x.choice[SUGGEST_MAX_SEEN]);
        x.choice[SUGGEST_MAX_SEEN].lower_bound = x.retry_lower_bound;

        qv = history_quantile(need, x.n, quantile);
        for (size_t i = 0; i < n; i++)
                if (obs[i].censored && obs[i].need == qv)
                        q_censored = true;
        evaluate(obs, n, suggest_round(r, qv * (1 + headroom)), x.retry, &x.choice[SUGGEST_QUANTILE]);
        x.choice[SUGGEST_QUANTILE].lower_bound = q_censored;

        if (r != SUGGEST_CPUS) {
                struct suggest_choice best = x.choice[SUGGEST_MAX_SEEN], c = {0};
                for (size_t i = 0; i < n; i++) {
                        double a = suggest_round(r, obs[i].need * (1 + headroom));
                        if (obs[i].censored || a > x.retry)
                                continue;
                        evaluate(obs, n, a, x.retry, &c);
                        if (c.cost < best.cost - 1e-12 * fabs(best.cost) ||
                            (fabs(c.cost - best.cost) <= 1e-12 * fabs(best.cost) && a > best.limit))
                                best = c;
                }
                best.lower_bound = best.limit >= x.retry && x.retry_lower_bound;
                x.choice[SUGGEST_MIN_WASTE] = best;
        }
        for (int s = 0; s < _SUGGEST_STRATEGY_MAX; s++)
                if (x.choice[s].defined)
                        x.choice[s].waste = x.choice[s].cost - x.used;
        *ret = x;
        return 0;
}
