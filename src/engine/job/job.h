/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The job object's own entry for the layer above: leash_job_new and
 * leash_job_adopt are the settings layer's (src/settings/config.c), which
 * builds the spec from a leash_config and hands it here with what its
 * strings live in. The engine knows no settings: only a pointer it frees.
 */
#pragma once

#include "../leash.h"

struct placement_cache;
struct watchdog_pool;

/* A job from spec (a new job cgroup, or adopt_cgroup with flags when not
 * NULL), owning settings: freed with the job by settings_free. watch and
 * place: the caller's watchdog pool and placement cache, or NULL. On failure
 * settings stays the caller's. */
int job_new_owning(const struct leash_spec *spec, const char *adopt_cgroup, unsigned flags, struct watchdog_pool *watch,
                   struct placement_cache *place, void *settings, void (*settings_free)(void *), struct leash_job **ret,
                   struct leash_error *err);
