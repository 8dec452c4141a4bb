/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What every `leash slurm` hook and command reads (slurm-ctx.c): the job from
 * SLURM_* variables, slurm.ini, the errors kept for the report, and the job's
 * state directory <state-dir>/job_<ID> with the Prolog's state, the
 * supervisor's verdict and its socket. Used by slurm.c, slurm-prolog.c,
 * slurm-epilog.c, slurm-task-prolog.c, slurm-status.c and slurm-sweep.c;
 * it calls none of them. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../basic/macro.h"
#include "../settings/profile.h"
#include "../slurm/slurm.h"

/* The option spank_leash.so passes (--leash-profile), as slurmd exports it. */
#define SPANK_OPT_ENV "SPANK__SLURM_SPANK_OPTION_leash_leash_profile"
#define SPANK_OPT_ENV2 "SPANK__SLURM_SPANK_OPTION_leash_leash-profile"

struct slurm_ctx {
        struct slurm_conf conf;
        struct slurm_job job;
        struct leash_profile_paths paths;
        char **errors; /* for the report */
        size_t n_errors;
        bool conf_ok;
};

/* Logs the error and keeps it for the report. */
void slurm_ctx_error(struct slurm_ctx *x, const char *fmt, ...) _printf_(2, 3);
void slurm_ctx_done(struct slurm_ctx *x);
/* Reads slurm.ini; on errors keeps the defaults and records them. */
void slurm_ctx_load_conf(struct slurm_ctx *x);
/* The job from SLURM_* variables: -EINVAL (logged) without a job id. */
int slurm_ctx_load_job(struct slurm_ctx *x);
/* <state-dir>/job_<ID> (made with create): 0 and *ret_fd, or -errno with why. */
int slurm_ctx_state_open(struct slurm_ctx *x, bool create, int *ret_fd, char *why, size_t size);
void slurm_ctx_state_remove(struct slurm_ctx *x);
/* fn for each job_<ID> of the state directory: 1 if any returned non-zero. */
int slurm_ctx_for_each_state(struct slurm_ctx *x, int (*fn)(struct slurm_ctx *, uint32_t, bool), bool arg);

/* A variable's value, "" when unset. */
const char *slurm_env(const char *name);
/* A directory root writes into, made when missing (create), judged with the
 * trust rules: its fd, or -errno with why. */
int slurm_root_dir_open(const char *path, bool create, char *why, size_t size);
/* A state or verdict file: -EBADMSG unless well formed. */
int slurm_state_read(int state_fd, const char *name, char **ret);
/* A key of a kv text as a number, dflt when absent or not one (text may be NULL). */
uint64_t slurm_kv_u64(const char *text, const char *key, uint64_t dflt);
/* The start time of pid (/proc/PID/stat), 0 when unknown. */
uint64_t slurm_proc_starttime(pid_t pid);
/* A pidfd of the supervisor a state names, if that process is still the one
 * the Prolog started; -ESRCH when not. */
int slurm_supervisor_pidfd(const char *state);
bool slurm_supervisor_alive(const char *state);
