/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The job without a cgroup (placement none): its processes are its process
 * tree. See tree.c.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct leash_job;

/* sig to every process of the job, the tree stopped (SIGSTOP) first so that
 * nothing it forks meanwhile is missed, continued after a signal that is
 * not SIGKILL; with SIGKILL, waits (bounded) until they ended. Returns how
 * many processes got it. */
int tree_signal(struct leash_job *j, int sig);
/* SIGKILL in rounds until a walk finds no live process of the job (below
 * a holder: until the holder has exited, bounded); reaps what ended as
 * leash's children. Returns how many were killed. */
int tree_kill_all(struct leash_job *j);
/* Whether nothing of the job runs. Below a holder its exit says so, not a
 * walk: a children list read while its owner reaps, or while a process in
 * the list exits and hands its children on, can miss a live process (the
 * kernel reads the list by position, unlocked between entries: "not
 * guaranteed to be consistent"), and the holder reaps as the caller walks.
 * Below leash itself (a subreaper that alone reaps its children): a walk. */
bool tree_empty(struct leash_job *j);
/* CPU time of the whole tree: the live processes (with the children they
 * reaped) plus the reaped ones (the main process, orphans leash reaped). */
void tree_cpu_us(struct leash_job *j, uint64_t *ret_user, uint64_t *ret_system);
/* The live processes of the job now (malloc'd), for sampling. */
int tree_pids(struct leash_job *j, pid_t **ret, size_t *ret_n);
