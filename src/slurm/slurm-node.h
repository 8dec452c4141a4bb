/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * leash's two Slurm modes, and which one a node is in.
 *
 * own:  leash places the tasks in its own layout (<cgroup2>/leash/slurm/job_ID/
 *       step_S, made by the Prolog; the TaskProlog or spank_leash.so moves each
 *       task there).  Slurm's proctrack/cgroup and task/cgroup must be off:
 *       with them Slurm places every task in system.slice/slurmstepd.scope/
 *       job_ID/step_S/user/task_N first, and leash moving it out defeats
 *       Slurm's limits and accounting (and Slurm's, leash's).
 * nest: Slurm's cgroup plugin places the tasks; leash adopts Slurm's job and
 *       step cgroups read-only (it moves nothing) and adds what Slurm lacks:
 *       the CPU-time ladder, the step-end leftovers kill and count, memory.peak
 *       and OOM kills per step, the per-job report.
 *
 * slurm_node_judge refuses a node where both would place tasks.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define SLURM_NODE_VALUE_MAX 512

enum slurm_mode {
        SLURM_MODE_OWN,
        SLURM_MODE_NEST,
};

struct slurm_node {
        char proctrack[SLURM_NODE_VALUE_MAX];   /* ProctrackType, "" when unset */
        char task_plugin[SLURM_NODE_VALUE_MAX]; /* TaskPlugin, "" when unset */
        char plugstack[SLURM_NODE_VALUE_MAX];   /* PlugStackConfig, "" when unset */
        bool slurm_places;                      /* proctrack/cgroup or task/cgroup */
        bool leash_prolog, leash_task_prolog;   /* Prolog=, TaskProlog= are leash's links */
        bool leash_spank;                       /* plugstack.conf loads spank_leash.so */
        bool includes;                          /* slurm.conf has Include lines (not followed) */
};

/* slurm.conf's text; -EINVAL for NULL arguments. */
int slurm_node_parse_conf(const char *text, size_t size, struct slurm_node *ret);
/* plugstack.conf's text: sets node->leash_spank. */
void slurm_node_parse_plugstack(const char *text, size_t size, struct slurm_node *node);
/* slurm.conf (path; NULL: $SLURM_CONF, else /etc/slurm/slurm.conf) and the
 * plugstack.conf it names (its path into stack_path) into n; -errno when
 * slurm.conf cannot be read. */
int slurm_node_read(const char *path, struct slurm_node *n, char *stack_path, size_t size);
const char *slurm_mode_to_string(enum slurm_mode m);
int slurm_mode_from_string(const char *s, enum slurm_mode *ret);
/* 0 with what the node does in why; -EEXIST when leash (mode own, with a
 * TaskProlog or the plugin) and Slurm's cgroup plugin would both place tasks;
 * -ENOENT when mode nest lacks Slurm's cgroup plugin or the plugin. */
int slurm_node_judge(const struct slurm_node *n, enum slurm_mode mode, char *why, size_t size);
