/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Limits sized from history, the way resource_monitor's categories size a
 * task's first allocation: per resource, the observed needs of past jobs of
 * one kind, with jobs that ended by a limit (or were stopped early) counted
 * as censored observations (their need is at least what they used). Pure
 * arithmetic; the model is spelled out in leash(1), SUGGEST.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "../report/history.h"

enum suggest_resource { SUGGEST_MEMORY, SUGGEST_CPU_TIME, SUGGEST_WALL_TIME, SUGGEST_PIDS, SUGGEST_CPUS, _SUGGEST_MAX };
enum suggest_strategy { SUGGEST_MAX_SEEN, SUGGEST_QUANTILE, SUGGEST_MIN_WASTE, _SUGGEST_STRATEGY_MAX };

struct suggest_obs {
        double need;   /* what the job used; a lower bound when censored */
        double weight; /* how long it held the allocation: wall seconds, or 1 for a time budget */
        bool censored;
};

struct suggest_choice {
        bool defined;
        double limit;     /* after headroom and rounding */
        size_t killed;    /* past jobs this limit would have killed */
        size_t unknown;   /* censored jobs whose need may or may not fit */
        double cost;      /* expected allocation x time per job, retries included */
        double waste;     /* cost minus what the jobs used, per job */
        bool lower_bound; /* the limit rests on a censored observation */
};

struct suggest_result {
        size_t n, n_censored;
        double min, median, p90, max; /* of the observed needs, censored ones at their bound */
        double used;                  /* mean need x weight per job */
        double retry;                 /* the allocation a killed job is retried with */
        bool retry_lower_bound;
        struct suggest_choice choice[_SUGGEST_STRATEGY_MAX];
};

extern const char *const suggest_resource_name[_SUGGEST_MAX]; /* the profile keys */
extern const char *const suggest_strategy_name[_SUGGEST_STRATEGY_MAX];
enum history_unit suggest_resource_unit(enum suggest_resource r);

/* The observation of resource r in job j: false when the report lacks it. */
bool suggest_observe(const struct history_job *j, enum suggest_resource r, struct suggest_obs *ret);
/* Rounds a limit up to what a profile would say: whole MiB, 0.1 s below
 * 10 s and whole seconds above, whole processes, hundredths of a core. */
double suggest_round(enum suggest_resource r, double v);
/* quantile in (0, 1], headroom >= 0 (0.1 = 10 %). -EINVAL without
 * observations. */
int suggest_compute(const struct suggest_obs *obs, size_t n, enum suggest_resource r, double quantile, double headroom,
                    struct suggest_result *ret);
/* A profile value: "312M", "12.5s", "16", "1.5". */
void suggest_format(enum suggest_resource r, double v, char *buf, size_t size);
