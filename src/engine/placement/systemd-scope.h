/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Placement's systemd step (step 3 of placement.c): a scope of this process's
 * own, asked of the service manager through the sd-bus adapter (systemd.c).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Asks the user manager (user_manager true) or the system manager for
 * leash-NAME-PID.scope in slice with Delegate=yes holding this process, waits
 * for the start job, and returns in *ret_cgroup_path (malloc'd) the scope's
 * cgroup, absolute under the cgroup2 mount, which the process is now in.
 * -ENOENT/-ECONNREFUSED/-EACCES no manager reachable, -ENOPKG no
 * libsystemd, another -errno when the manager refused; what (may be NULL)
 * gets the manager's own words. */
int systemd_scope_acquire(bool user_manager, const char *slice, char **ret_cgroup_path, char *what, size_t what_size);

/* The unit a scope of the manager (user_manager: uid's user manager) is
 * bound to for a process whose cgroup is own (relative to the mount): the
 * innermost .service or .scope of own that the same manager owns. 1 and the
 * name in ret; 0 none (e.g. a user in a login session: that scope is the
 * system manager's); -ENAMETOOLONG. */
int systemd_scope_bind_unit(const char *own, bool user_manager, unsigned uid, char *ret, size_t size);

/* Whether the unit whose cgroup is unit_cgroup (relative to the mount) is a
 * subtree this process may use: the scope it got (*ret_own true), or, for an
 * ordinary user, a unit of its user manager whose Delegate property is yes
 * (asked of the manager). 1 yes, 0 no or unknown. */
int systemd_scope_delegated(const char *unit_cgroup, bool *ret_own);

/* For a decision that makes nothing (check, ps): the scope a run would get,
 * <manager's cgroup>/leash.slice/leash-run-PID.scope. 0, or -errno when no
 * manager is reachable. */
int systemd_scope_plan(bool user_manager, const char *mount, char *ret, size_t size);

/* The unit every job of this euid's manager may join, so that a launch asks
 * for no unit of its own: leash-jobs.service in leash.slice, Delegate=yes,
 * started once; its one process (/bin/sleep infinity, moved into its leaf
 * by the first leash that uses it) keeps its cgroup until the unit is
 * stopped (systemctl stop leash.slice) or its manager ends. */
#define SYSTEMD_SHARED_UNIT "leash-jobs.service"

/* Its cgroup, absolute (under mount), into ret. 1: it is there, delegated
 * (root: the system manager's trusted.delegate mark; a user: the user's, as
 * all below the user manager is); 0: it is not and start is false; with
 * start, it is started first when absent (one StartTransientUnit and its
 * job), then 1, or -errno (what: the manager's words). */
int systemd_scope_shared(bool user_manager, const char *mount, bool start, char *ret, size_t size, char *what,
                         size_t what_size);

/* Asks the shared unit's manager to move this process into its leaf
 * ("/leash-leaf"; systemd_attach_send): for a user in a login session, who
 * may not move it there itself. The call is sent, not waited for: 0 once it
 * is; -errno (what: why) when it could not be. */
int systemd_scope_shared_enter(bool user_manager, const char *leaf, char *what, size_t what_size);

/* Waits for the reply to this process's systemd_scope_shared_enter, once:
 * 0 when the process is in the leaf (or none was asked for); -errno (what:
 * the manager's words) when the manager refused or the process is
 * elsewhere, and the same again at every later call. */
int systemd_scope_shared_settle(char *what, size_t what_size);

/* This process's move into the leaf was asked and refused (a decision made
 * since goes on to a scope of its own); what (may be NULL) gets why. */
bool systemd_scope_shared_refused(char *what, size_t what_size);
