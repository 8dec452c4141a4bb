/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* `leash slurm`'s subcommands, each in a file of its own, dispatched by
 * cmd_slurm (slurm.c); each returns the exit code. See leash-slurm(8). */
#pragma once

#include <stdbool.h>

/* Prolog= (root): the job cgroup, its limits, the per-job supervisor
 * (slurm-prolog.c). */
int slurm_prolog(void);
/* Epilog= (root): leftovers killed, the report, the cgroups removed
 * (slurm-epilog.c). */
int slurm_epilog(void);
/* TaskProlog= (the user): the task placed in its step cgroup
 * (slurm-task-prolog.c); env_ignored: the job's environment named a
 * LEASH_CONFIG_DIR, which was ignored. */
int slurm_task_prolog(bool env_ignored);
/* leash slurm status [--config-dir DIR] [-o json|text] [JOBID]
 * (slurm-status.c); argv[0] is "status". */
int slurm_status(int argc, char **argv);
/* leash slurm sweep [--dry-run] [--orphans] (slurm-sweep.c). */
int slurm_sweep(int argc, char **argv);
