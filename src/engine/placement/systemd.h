/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sd-bus adapter: asks systemd's service manager for a transient scope
 * with Delegate=yes. The only file that includes <systemd/sd-bus.h>; it knows
 * no job and no cgroup layout.
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

/* Whether the manager (user: this euid's user manager; else the system
 * manager) has a socket this process may connect to: its private socket or
 * the bus. 0, or -errno of the last one tried. Connects to nothing. */
int systemd_manager_reachable(bool user);

struct systemd_scope_request {
        const char *unit;    /* e.g. "leash-run-42.scope" */
        const char *slice;   /* e.g. "leash.slice" */
        const char *bind_to; /* NULL, or a unit of the same manager: BindsTo= */
        const char *keeper;  /* NULL: a scope holding pid; else q->unit is a service whose one
                              * process is this program run with the argument "infinity"
                              * (/bin/sleep): it keeps the unit's cgroup; pid is unused */
};

/* Asks the service manager (user: this euid's user manager; else the system
 * manager) to start the transient scope q->unit in q->slice with Delegate=yes
 * holding `pid` (or, with q->keeper, the service q->unit: see there), bound (BindsTo=) to q->bind_to when given, and waits
 * until its start job is done. 0 on success; -errno: -ENOPKG libsystemd
 * cannot be loaded, -ENOENT/-ECONNREFUSED/-EACCES no manager to talk to,
 * -EEXIST the unit exists, -ETIMEDOUT the job did not end in time, -EIO the
 * job ended otherwise than "done". what, when given, gets the manager's own
 * words on failure (an empty string when there are none). */
int systemd_start_scope(bool user, const struct systemd_scope_request *q, pid_t pid, char *what, size_t what_size);

/* Whether the manager's loaded unit `unit` (a .scope, .service or .slice)
 * has Delegate=yes, asked of the manager itself (GetUnit, then the unit's
 * Delegate property): systemd 252's user manager writes no user.delegate
 * mark. 1 yes, 0 no; -errno: -ENOPKG no libsystemd, -EINVAL not a unit type
 * with the property, another when the manager cannot be asked or knows no
 * such unit. */
int systemd_unit_delegates(bool user, const char *unit);

/* Asks the manager to move pid into subcgroup ("/leaf") of its loaded unit
 * (AttachProcessesToUnit; the unit must have Delegate=yes). A user manager
 * that may not move the process itself (a process in a login session, below
 * root's user-UID.slice) asks the system manager. Sent, not waited for: the
 * manager moves the process while the caller goes on (the call is written
 * out before this returns). 0 and *ret (free with systemd_call_free, once
 * systemd_call_wait said how it ended); -errno when it could not be sent
 * (what: why; nothing in flight then). */
struct systemd_call; /* a method call sent and not yet answered, on its own connection */
int systemd_attach_send(bool user, const char *unit, const char *subcgroup, pid_t pid, struct systemd_call **ret,
                        char *what, size_t what_size);

/* Waits (30 s at most) for the reply to c: 0 the call succeeded; -errno
 * of an error reply (what: the manager's words), -ETIMEDOUT, or another
 * -errno of the connection. */
int systemd_call_wait(struct systemd_call *c, char *what, size_t what_size);

void systemd_call_free(struct systemd_call *c);
