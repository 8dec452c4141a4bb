/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

/* Exit codes of leash itself (the job's own pass through). */
#define EXIT_LEASH_FAILED 125

/* Each subcommand returns the exit code; only main() exits. A usage error is
 * printed by the subcommand through usage_error() and returns 125. */
int cmd_run(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_profiles(int argc, char **argv);
int cmd_slurm(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_suggest(int argc, char **argv);
/* leash ps, stat, top: running jobs (src/cli/ps.c) */
int cmd_ps(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_top(int argc, char **argv);
/* leash __complete SUB OPTION: an option's fixed values for the shell
 * completion (src/cli/complete.c); hidden */
int cmd_complete(int argc, char **argv);
/* ps and stat -o: the words their parser takes (ps.c) */
extern const char *const ps_output_names[];
/* `leash run`'s signals (run-signals.c): blocked and read from a signalfd, which
 * *ret_fd gets; and a death by the signal that interrupted the job. */
int cli_guard_signals(int *ret_fd, sigset_t *ret_old);
void cli_reraise(int sig);
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void print_help(FILE *f);
/* leash check: seccomp, filter sets, capabilities, identity switch */
void print_sandbox_check(void);
/* leash check: the GPUs found and the figures available (check-gpu.c) */
void print_gpu_check(void);

/* `leash run` settings in precedence order: built-in < leash.ini < the
 * profile (cli->profile_name, or default) < the command line (args, in
 * order). The profiles object holds the origin strings: free it after s.
 * Returns 0, or an exit code after printing why. */
struct leash_option;
struct leash_settings;
struct leash_profiles;
struct cli_arg {
        const struct leash_option *opt;
        const char *value;
};
/* Whether the system's configuration defines profile NAME and can be used:
 * 0, or -EINVAL / -ENOENT / -ENOMEM with why filled (one line, no printing). */
int cli_profile_check(const char *name, char *why, size_t size);
int cli_settings_build(const struct leash_settings *cli, const struct cli_arg *args, size_t n_args,
                       struct leash_settings *s, struct leash_profiles **ret_profiles);

/* leash report / suggest: past jobs from report files, series files and
 * directories (src/cli/jobs.c); errors are printed, -errno returned. */
struct history_job;
int cli_jobs_load(char **args, size_t n_args, struct history_job ***ret, size_t *ret_n);
void cli_jobs_free(struct history_job **jobs, size_t n);
int cli_write_file(const char *path, const char *text);
