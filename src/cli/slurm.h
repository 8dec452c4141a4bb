/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* `leash slurm`: shared between the subcommands (slurm.c) and the per-job
 * supervisor (slurm-supervise.c). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../lib/leash.h"
#include "../lib/slurm.h"

/* What the Prolog hands to the supervisor it forks. */
struct slurm_supervisor {
        const struct leash_spec *config;
        uint32_t job_id;
        uid_t uid;
        int listen_fd;     /* the socket, bound and listening */
        int job_fd;        /* the job cgroup */
        int state_fd;      /* <state-dir>/job_<ID> */
        uint64_t start_ns; /* CLOCK_MONOTONIC at the Prolog */
        double cores;
        bool nest;   /* mode = nest: job_fd is -1; Slurm's job cgroup is adopted from the first task */
        bool refuse; /* fail-job after a setup error: every task is refused */
        const char *refuse_why;
};

/* Mode nest: the figures of a step (and of the job) that the supervisor reads
 * at the step's end and writes into the verdict as "<prefix>.<key>", and the
 * Epilog reads back (Slurm has removed its cgroups by then): one table. */
struct slurm_nest_figure {
        const char *key;
        size_t offset; /* of a uint64_t in struct leash_usage */
};
extern const struct slurm_nest_figure slurm_nest_figures[];
extern const size_t slurm_nest_n_figures;

/* Runs until the Epilog says stop (or SIGTERM). Never prints: what goes wrong
 * is written to the verdict file. Returns an exit code. */
int slurm_supervise(const struct slurm_supervisor *s);

/* Client side: one request, one reply (SOCK_SEQPACKET), optionally passing
 * fd_to_send. Bounded by timeout_ms. */
int slurm_request(int state_fd, const char *request, int fd_to_send, int timeout_ms, char *reply, size_t size);
