/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "leash.h"

struct supervise_params {
        const struct leash_config *config;
        int job_fd;
        int pidfd;
        int signal_fd;     /* signalfd for SIGINT, SIGTERM, SIGHUP */
        uint64_t start_ns; /* CLOCK_MONOTONIC when the job was started */
        double cores;      /* how many CPUs the job can use at once */
        enum leash_enforcer cpu_time_by;
};

/* Runs the event loop until the main process has exited and is reaped.
 * Fills status_code/term_signal, the signal log, the time-limit or interrupt
 * cause (*ret_cause: LEASH_REASON_OK when none) and the main rusage. */
int supervise_job(const struct supervise_params *p, struct leash_result *r, enum leash_reason *ret_cause,
                  struct rusage *ret_rusage);
