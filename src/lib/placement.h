/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Placement: where a job's cgroup comes from, decided once per process (and
 * again in a forked child: its cgroup may be another) by an ordered chain of
 * steps. The first step that applies decides; a step that does not apply
 * adds why to the decision's text, so that the report and `leash check` can
 * say what was tried. See placement.c for the order and the rules.
 *
 * Hook point for the systemd step (step 3, src/lib/systemd-scope.c, built
 * when configure finds libsystemd): it is expected to provide
 *
 *     int systemd_scope_acquire(bool user_manager, const char *slice, char **ret_cgroup_path);
 *
 * which asks the user manager (user_manager true: an ordinary user) or the
 * system manager (root) for a transient scope with Delegate=yes in slice
 * ("leash.slice"), moves the calling process into it (by PIDFDs, else PIDs),
 * waits for the start job (JobRemoved), and returns in *ret_cgroup_path
 * (malloc'd) the scope's cgroup, absolute under the cgroup2 mount. It returns
 * -ENOENT or -EOPNOTSUPP when no manager is reachable (no bus, PID 1 is not
 * systemd, the user manager is not running), another -errno when the manager
 * refused. placement.c then treats the scope like any delegated subtree
 * (placement_enter_subtree: leash moves itself into a leaf, job cgroups are
 * made beside it) and reports kind "systemd". Until that file exists the
 * chain has no step 3.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "leash.h"

/* enum placement_kind and struct placement are in leash.h (the CLI's check reads them). */

/* The step of the error --strict gives where no cgroup can be had (its
 * detail: why); the CLI then prints the remedy (placement_decide, apply false). */
#define PLACEMENT_STRICT_STEP "run without a cgroup (--strict refuses)"

/* The decision for this process. requested: --cgroup-parent / the config
 * (NULL: the chain). With apply false (check, ps) nothing is made or moved:
 * the decision says what a run would do. Only a bad requested parent fails
 * (-errno, err filled); anything else ends in PLACEMENT_NONE with why. */
int placement_decide(const char *requested, bool apply, struct placement *ret, struct leash_error *err);

const char *placement_kind_to_string(enum placement_kind k);

/* Inside a subtree delegated to leash (dir, absolute): a parent for job
 * cgroups that holds no process, as the no-internal-processes rule asks.
 * The first ancestor of leash's own cgroup (own, absolute) up to dir that
 * holds none, else dir itself once every process of own is moved into
 * own/leash-leaf (apply false: nothing moved, the plan is told). For the
 * systemd step too. */
int placement_enter_subtree(const char *dir, const char *own, bool apply, struct placement *p);

/* A cgroup (absolute path) holds a process of its own (or cannot be read). */
bool placement_holds_processes(const char *dir);

/* The pure parts, unit-tested. */
/* A cgroup's directory name that systemd gives a unit (…​.scope, .service, .slice). */
bool placement_is_unit_name(const char *name);

/* A placement cache a config holds: decided at the first job of this process. */
struct placement_cache;
int placement_cache_new(struct placement_cache **ret);
void placement_cache_free(struct placement_cache *c);
/* The cached decision for requested in this process, else a fresh one (then cached). */
int placement_cached(struct placement_cache *c, const char *requested, struct placement *ret, struct leash_error *err);
