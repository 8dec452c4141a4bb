/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * leash slurm prolog|epilog|task-prolog|status|sweep|check|check-profile:
 * leash as Slurm's Prolog, Epilog and TaskProlog (see leash-slurm(8)). This
 * file dispatches and holds the two checks; each hook and command is a file
 * of its own (slurm-hooks.h), all on what slurm-ctx.c reads.
 *
 * Slurm runs these with no arguments and no PATH: the admin points slurm.conf
 * at the wrappers in $(libexecdir)/leash/ (symlinks to leash, dispatched on
 * their name by main.c). Everything comes from SLURM_* variables and
 * slurm.ini.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../basic/log.h"
#include "../settings/profile.h"
#include "../slurm/slurm-node.h"
#include "cli.h"
#include "slurm-ctx.h"
#include "slurm-hooks.h"

static void slurm_help(FILE *f) {
        fprintf(f,
                "Usage: leash slurm prolog        Prolog= (root): job cgroup, limits, per-job supervisor\n"
                "       leash slurm epilog        Epilog= (root): kill leftovers, report, remove the cgroups\n"
                "       leash slurm task-prolog   TaskProlog= (the user): place the task in its step cgroup\n"
                "       leash slurm status [--config-dir DIR] [-o json|text] [JOBID]\n"
                "       leash slurm sweep [--dry-run] [--orphans]  remove what dead supervisors left behind\n"
                "       leash slurm check-profile NAME  may a user ask for NAME (--leash-profile)?\n"
                "       leash slurm check [--slurm-conf=FILE]  which mode the node is in (own or nest)\n"
                "\n"
                "Slurm passes no arguments and no PATH: point slurm.conf at the wrappers\n"
                "  Prolog=%s/leash/slurm-prolog\n"
                "  Epilog=%s/leash/slurm-epilog\n"
                "  TaskProlog=%s/leash/slurm-task-prolog\n"
                "Configuration: slurm.ini in leash's configuration directory, section [slurm].\n"
                "See leash-slurm(8).\n",
                LEASH_LIBEXECDIR, LEASH_LIBEXECDIR, LEASH_LIBEXECDIR);
}

/* For the SPANK plugin's option callback (sbatch/srun, as the user): 0 when
 * the user may ask for NAME, 1 with the reason on stderr when not. */
static int check_profile(int argc, char **argv) {
        struct slurm_ctx x = {0};
        char why[1024];
        int rc = 0;

        if (argc != 2)
                return usage_error("slurm check-profile: expected one profile name");
        slurm_ctx_load_conf(&x);
        if (!leash_profile_name_is_valid(argv[1])) {
                log_error("--leash-profile='%s': not a profile name", argv[1]); /* escaped by log_error */
                rc = 1;
        } else if (!slurm_user_profile_allowed(&x.conf, argv[1])) {
                log_error("--leash-profile=%s: not allowed on this cluster (allowed: %s%s)", argv[1],
                          x.conf.n_user_profiles ? x.conf.user_profiles[0] : "none",
                          x.conf.n_user_profiles > 1 ? ", ..." : "");
                rc = 1;
        } else if (strcmp(argv[1], SLURM_PROFILE_NONE) != 0 && cli_profile_check(argv[1], why, sizeof why) < 0) {
                /* what the Prolog would refuse, refused at submission */
                log_error("--leash-profile=%s", why);
                rc = 1;
        }
        slurm_ctx_done(&x);
        return rc;
}

/* --- check: which mode the node is in --------------------------------------- */

/* slurm.conf (--slurm-conf=FILE, else $SLURM_CONF, else /etc/slurm/slurm.conf)
 * and its plugstack.conf against slurm.ini's mode: 0 when the node is in one
 * mode, 1 (with why) when leash and Slurm would both place tasks or nest
 * lacks what it needs, 125 when slurm.conf cannot be read. */
static int node_check(int argc, char **argv) {
        struct slurm_ctx x = {0};
        struct slurm_node n;
        const char *path = getenv("SLURM_CONF");
        char why[1400], stack_path[SLURM_NODE_VALUE_MAX + 32];
        int r;

        if (!path || !*path)
                path = "/etc/slurm/slurm.conf";
        for (int i = 1; i < argc; i++) {
                if (strncmp(argv[i], "--slurm-conf=", 13) == 0 && argv[i][13])
                        path = argv[i] + 13;
                else
                        return usage_error("slurm check: '%s': expected --slurm-conf=FILE", argv[i]);
        }
        r = slurm_node_read(path, &n, stack_path, sizeof stack_path);
        if (r < 0) {
                log_error("slurm check: read %s: %s", path, strerror(-r));
                return EXIT_LEASH_FAILED;
        }
        slurm_ctx_load_conf(&x);
        printf("slurm.conf: %s: ProctrackType=%s TaskPlugin=%s\n", path, n.proctrack[0] ? n.proctrack : "(default)",
               n.task_plugin[0] ? n.task_plugin : "(default)");
        printf("Slurm places tasks in its cgroups: %s\n", n.slurm_places ? "yes" : "no");
        printf("leash hooks: Prolog %s, TaskProlog %s, spank_leash.so %s (%s)\n", n.leash_prolog ? "yes" : "no",
               n.leash_task_prolog ? "yes" : "no", n.leash_spank ? "yes" : "no", stack_path);
        printf("slurm.ini: mode = %s\n", slurm_mode_to_string(x.conf.mode));
        if (n.includes)
                printf("note: %s has Include lines, which this check does not follow\n", path);
        r = slurm_node_judge(&n, x.conf.mode, why, sizeof why);
        if (r < 0)
                log_error("slurm check: refused: %s", why);
        else
                printf("mode: %s\n", why);
        r = r < 0 || !x.conf_ok ? 1 : 0;
        slurm_ctx_done(&x);
        return r;
}

int cmd_slurm(int argc, char **argv) {
        const char *sub = argc > 1 ? argv[1] : NULL;
        bool env_ignored = false;

        if (!sub)
                return usage_error(
                        "slurm: expected prolog, epilog, task-prolog, status, sweep, check or check-profile");
        if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0) {
                slurm_help(stdout);
                return fflush(stdout) == 0 ? 0 : EXIT_LEASH_FAILED;
        }
        if (strcmp(sub, "prolog") == 0 || strcmp(sub, "epilog") == 0 || strcmp(sub, "task-prolog") == 0) {
                if (argc > 3 || (argc == 3 && strncmp(argv[2], "--config-dir=/", 14) != 0))
                        return usage_error(
                                "slurm %s: '%s': takes no arguments but --config-dir=DIR (Slurm passes none)", sub,
                                argv[2]);
                /* The TaskProlog runs as the user, in the job's own environment:
                 * nothing of it chooses leash's configuration (a LEASH_CONFIG_DIR
                 * of the job's would name a slurm.ini with another state-dir, and
                 * the task would run outside leash). The admin's wrapper may name
                 * one with --config-dir; else it is the built-in one. slurmd runs
                 * the Prolog and Epilog in its own environment, the admin's. */
                if (strcmp(sub, "task-prolog") == 0) {
                        env_ignored = argc < 3 && getenv("LEASH_CONFIG_DIR");
                        (void) unsetenv("LEASH_CONFIG_DIR");
                }
                if (argc == 3 && setenv("LEASH_CONFIG_DIR", argv[2] + 13, 1) < 0)
                        return usage_error("slurm %s: %s", sub, strerror(errno));
                if (strcmp(sub, "prolog") == 0)
                        return slurm_prolog();
                if (strcmp(sub, "epilog") == 0)
                        return slurm_epilog();
                return slurm_task_prolog(env_ignored);
        }
        if (strcmp(sub, "status") == 0)
                return slurm_status(argc - 1, argv + 1);
        if (strcmp(sub, "sweep") == 0)
                return slurm_sweep(argc - 1, argv + 1);
        if (strcmp(sub, "check-profile") == 0)
                return check_profile(argc - 1, argv + 1);
        if (strcmp(sub, "check") == 0)
                return node_check(argc - 1, argv + 1);
        return usage_error(
                "slurm: unknown subcommand '%s': expected prolog, epilog, task-prolog, status, sweep, check or "
                "check-profile",
                sub);
}
