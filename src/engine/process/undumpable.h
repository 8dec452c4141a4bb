/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * leash is undumpable while a job of its process runs (issue 38): see
 * undumpable.c.
 */
#pragma once

/* A job is about to start: the process is undumpable from now until the
 * matching undumpable_release(). Counted: jobs of several threads overlap. */
void undumpable_hold(void);
/* The same for a process that exits after its job (leash run): undumpable
 * from now until it exits, whatever it was, so what it was is not asked
 * (no PR_GET_DUMPABLE) and no release restores it. */
void undumpable_hold_to_exit(void);
/* That job has finished: the last one out restores what the process was. */
void undumpable_release(void);
/* In a child forked from a holding process that runs on without exec (a
 * forked function): dumpable as the process was before the first hold, the
 * count of the copy zero, the lock made anew. Async-signal-safe (takes no
 * lock). Before any change of credentials, which makes the child
 * undumpable again where the kernel says so. Also the atfork child handler:
 * twice in a row is the same as once. */
void undumpable_child(void);
