/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>

/* Exit codes of leash itself (the job's own pass through). */
#define EXIT_LEASH_FAILED 125

/* Each subcommand returns the exit code; only main() exits. A usage error is
 * printed by the subcommand through usage_error() and returns 125. */
int cmd_run(int argc, char **argv);
int cmd_check(int argc, char **argv);
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void print_help(FILE *f);
/* leash check: seccomp, filter sets, capabilities, identity switch */
void print_sandbox_check(void);
