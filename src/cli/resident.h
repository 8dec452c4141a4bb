/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The resident launcher (resident.c) and its client (remote.c), issue 40:
 * a user's `leash run` from a login session asks no manager anything when a
 * resident launcher runs in the shared unit's leaf (leash.slice/
 * leash-jobs.service/leash-leaf of the user's manager). The client sends its
 * command line, environment, working directory and descriptors over
 * $XDG_RUNTIME_DIR/leash/resident.sock; the resident checks the caller from
 * the kernel's side (same credentials, namespaces, no seccomp filter, a
 * login session's scope) and starts `leash run` with them in the unit,
 * where placement needs no move; the client passes signals on and ends with
 * that leash's status.
 */
#pragma once

/* leash __resident [--socket PATH] [--accept-cgroup PATTERN]: the launcher
 * itself; hidden. */
int cmd_resident(int argc, char **argv);
