/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The per-job supervisor (slurm-supervise.c) as `leash slurm` uses it: the
 * Prolog, Epilog and TaskProlog (slurm-prolog.c, slurm-epilog.c,
 * slurm-task-prolog.c) depend on it, never the reverse. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../engine/leash.h"
#include "../slurm/slurm.h"

/* What the Prolog hands to the supervisor it forks. */
struct slurm_supervisor {
        const struct leash_spec *config;
        uint32_t job_id;
        uid_t uid;
        int listen_fd;           /* the socket, bound and listening */
        int job_fd;              /* the job cgroup (mode own); -1 in mode nest */
        int state_fd;            /* <state-dir>/job_<ID> */
        const char *cgroup;      /* the job cgroup's path: adopted as an owned job */
        uint64_t epilog_wait_ns; /* slurm.ini's epilog-wait */
        bool nest;               /* mode nest: Slurm's job cgroup is adopted at the first task */
        bool refuse;             /* fail-job after a setup error: every task is refused */
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

/* Runs until the Epilog says stop (or SIGTERM), or ends by itself when no
 * Epilog came by the job's wall limit + grace + epilog-wait and the job
 * cgroup is empty. Never prints: what goes wrong
 * is written to the verdict file. Returns an exit code. */
int slurm_supervise(const struct slurm_supervisor *s);

/* Client side: one request, one reply (SOCK_SEQPACKET), optionally passing
 * fd_to_send. Bounded by timeout_ms. */
int slurm_request(int state_fd, const char *request, int fd_to_send, int timeout_ms, char *reply, size_t size);
