/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* `leash run` through the resident launcher (remote.c; resident.h). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* `leash run`: its job through the resident where one serves this caller.
 * Returns -1 when the caller is to run the job itself (not eligible, no
 * resident, refused), else the exit code (a job's death by a signal is
 * raised here). argv: cmd_run's. */
int remote_run(int argc, char **argv);

/* After a job run by leash itself: start a resident when remote_run found
 * none and leash is now in the shared unit's leaf. */
void remote_spawn_resident(void);

/* leash check: the launcher as a run from here would find it (one line,
 * false where a run would not use one). */
bool remote_describe(char *buf, size_t size);
