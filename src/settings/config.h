/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The public settings object (struct leash_config): key/value settings
 * through the option table, built into a job specification in precedence
 * order (built-in < leash.ini < profile < the caller's values).
 */
#pragma once

#include "../engine/leash.h"

struct config_built;
struct watchdog_pool;
struct placement_cache;

/* Reads the configuration files and builds the settings of one job. */
int config_build(const struct leash_config *c, struct config_built **ret, struct leash_error *err);
const struct leash_spec *config_built_spec(const struct config_built *b);
/* Drops a reference to b: freed with the last (a job, the config's cache). */
void config_built_free(struct config_built *b);
/* The pool whose watchdog watches the jobs made from c (NULL: each its own). */
struct watchdog_pool *config_watchdog_pool(const struct leash_config *c);
/* Where the jobs made from c go, decided at the first (placement.c). */
struct placement_cache *config_placement_cache(const struct leash_config *c);
