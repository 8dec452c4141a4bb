/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Placement: where a job's cgroup comes from, decided once per process (and
 * again in a forked child: its cgroup may be another) by an ordered chain of
 * steps. The first step that applies decides; a step that does not apply
 * adds why to the decision's text, so that the report and `leash check` can
 * say what was tried. See placement.c for the order and the rules.
 *
 * The systemd step (step 3) is systemd-scope.c over the sd-bus adapter
 * systemd.c: the manager's shared unit leash.slice/leash-jobs.service
 * (Delegate=yes), else a scope with Delegate=yes in leash.slice from the
 * user manager (an ordinary user) or the system manager (root), entered with
 * placement_enter_subtree like any delegated subtree; kind "systemd".
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "../leash.h"

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

/* A decision with p->attaching (a user's leash in a login session: the
 * manager moves it into the shared unit's leaf) is made once the move is
 * asked, not done; the job makes its cgroup meanwhile and calls this before
 * its first process starts (a job of another decision need not): it waits for the manager's reply. 0 when leash
 * is in the leaf (or nothing was asked); -errno with err naming the
 * manager's words when it refused, and so again at every later call of the
 * process (its next decision goes on to a scope of its own, and the job
 * whose settle failed is made again: job.c). */
int placement_settle(struct leash_error *err);

/* placement_settle failed in this process: the manager refused the move. */
bool placement_attach_refused(void);

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
/* leash's own cgroup ("/a/b" in the cgroup2 mount), read from
 * /proc/self/cgroup by the first job of a config in each process and kept:
 * where leash goes back to if a job pulls it in (escape.c). 0 or -errno. */
int placement_cache_own(struct placement_cache *c, char *ret, size_t size);
/* True once per process that asks: the first job of a config in it sweeps
 * the stale cgroups of dead leashes (sweep.c), the calls after it do not. */
bool placement_cache_sweep_due(struct placement_cache *c);
