/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * job-devices.c: --gpus/--devices resolved (before the sandbox is), and
 * their device program attached to the job cgroup (or the job refused).
 * What job.c calls; job-devices.c knows the job object's data
 * (job-object.h), never job.c.
 */
#pragma once

#include "../process/job-object.h"
#include "../leash.h"

int job_devices_prepare(struct leash_job *j, struct leash_error *err);
int job_devices_attach(struct leash_job *j, struct leash_error *err);
