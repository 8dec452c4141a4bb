/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The systemd step of placement: the process's own delegated scope, asked of
 * the service manager once per process and reused by every later job.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "leash.h"

/* ret holds the cgroup2 mount (ml characters) and gets the directory job
 * cgroups go under: the scope leash-NAME-PID.scope in leash.slice, which this
 * process has left for its leaf "supervisor" inside it. With create false,
 * only a scope this process already has is returned (-ENOENT otherwise). */
int scope_parent(char *ret, size_t ml, size_t size, bool create, struct leash_error *err);

/* The unit name this process's scope has ("" when it has none yet). */
void scope_unit(char *ret, size_t size);
