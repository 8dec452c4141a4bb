/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * leash: the command line. This is the only layer that prints errors and
 * decides exit codes; main() is the only place that exits.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../basic/closest.h"
#include "../basic/fileio.h"
#include "../basic/macro.h"
#include "../basic/log.h"
#include "../engine/leash.h"
#include "../settings/options.h"
#include "cli.h"
#include "resident.h"
#include "git-revision.h"

/* Line 1 is "leash VERSION" (scripts read it); then where the build came from
 * and what it contains. */
static void print_version(FILE *f) {
        fprintf(f, "leash %s\n", leash_version());
        if (*LEASH_GIT_REVISION)
                fprintf(f, "revision: git %s\n", LEASH_GIT_REVISION);
        fprintf(f, "built: %s; binary %s\n", LEASH_BUILT_PARTS, LEASH_LINKAGE);
}

int main(int argc, char **argv) {
        const char *cmd = argc > 1 ? argv[1] : NULL;
        const char *base = argc > 0 ? strrchr(argv[0], '/') : NULL;

        /* Slurm runs Prolog=/Epilog=/TaskProlog= with no arguments: the
         * wrappers in $(libexecdir)/leash are links named after what they do */
        base = base ? base + 1 : argc > 0 ? argv[0] : "";
        if (strncmp(base, "slurm-", 6) == 0) {
                /* an admin's wrapper script may add --config-dir=DIR */
                char *sargv[] = {(char *) "slurm", (char *) base + 6, argc > 1 ? argv[1] : NULL, NULL};
                if (argc > 2)
                        return usage_error("%s: '%s': takes at most --config-dir=DIR (Slurm passes no arguments)", base,
                                           argv[2]);
                return cmd_slurm(argc > 1 ? 3 : 2, sargv);
        }

        /* before anything opens a file (issue 10.4): with fd 2 closed, the
         * report's file would become stderr and hold leash's error lines */
        if (fd_sanitize_stdio() < 0)
                return EXIT_LEASH_FAILED; /* nowhere to say why */
        if (!cmd)
                return usage_error(
                        "no subcommand given: expected run, check, profiles, slurm, report, suggest, ps, stat or top");
        if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
                print_help(stdout);
                return fflush(stdout) == 0 ? 0 : EXIT_LEASH_FAILED;
        }
        if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
                print_version(stdout);
                return fflush(stdout) == 0 ? 0 : EXIT_LEASH_FAILED;
        }
        if (strcmp(cmd, "run") == 0)
                return cmd_run(argc - 1, argv + 1);
        if (strcmp(cmd, "check") == 0)
                return cmd_check(argc - 1, argv + 1);
        if (strcmp(cmd, "profiles") == 0)
                return cmd_profiles(argc - 1, argv + 1);
        if (strcmp(cmd, "slurm") == 0)
                return cmd_slurm(argc - 1, argv + 1);
        if (strcmp(cmd, "report") == 0)
                return cmd_report(argc - 1, argv + 1);
        if (strcmp(cmd, "suggest") == 0)
                return cmd_suggest(argc - 1, argv + 1);
        if (strcmp(cmd, "ps") == 0)
                return cmd_ps(argc - 1, argv + 1);
        if (strcmp(cmd, "stat") == 0)
                return cmd_stat(argc - 1, argv + 1);
        if (strcmp(cmd, "top") == 0)
                return cmd_top(argc - 1, argv + 1);
        if (strcmp(cmd, "__resident") == 0)
                return cmd_resident(argc - 1, argv + 1);
        if (strcmp(cmd, "__complete") == 0)
                return cmd_complete(argc - 1, argv + 1);
        {
                static const char *const cmds[] = {"run",     "check", "profiles", "slurm", "report",
                                                   "suggest", "ps",    "stat",     "top"};
                const char *near = closest_word(cmd, cmds, ELEMENTSOF(cmds));
                if (near)
                        return usage_error("unknown subcommand '%s' (did you mean '%s'?)", cmd, near);
        }
        return usage_error(
                "unknown subcommand '%s': expected run, check, profiles, slurm, report, suggest, ps, stat or top", cmd);
}
