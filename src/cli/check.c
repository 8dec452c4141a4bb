/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * leash check: what this host gives a job, in plain words. Exit 0 when every
 * limit can be enforced by a cgroup controller (or by leash itself for the
 * time limits), 1 when some would be degraded or not enforced, 125 when
 * leash cannot run jobs here at all.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../basic/log.h"
#include "../basic/parse.h"
#include "../engine/placement/host.h"
#include "../engine/leash.h"
#include "../engine/placement/placement.h"
#include "cli.h"
#include "remote.h"

static const char *yes_no(bool b) {
        return b ? "yes" : "no";
}

/* What the kernel has, then what this user's jobs get of it: an ordinary
 * user with no cgroup (or none with the controller) gets less than the host
 * has, and must not read the one as the other. */
static void print_features(const struct leash_host *h) {
        bool none = h->placement.kind == PLACEMENT_NONE || h->parent_error;

        printf("kernel features:    clone3 into cgroup=%s, cgroup.kill=%s, memory.peak=%s, pids.peak=%s, pressure=%s\n",
               yes_no(h->clone_into_cgroup), yes_no(h->kernel.cgroup_kill),
               h->kernel.memory_unseen ? "?" : yes_no(h->kernel.memory_peak),
               h->kernel.pids_unseen ? "?" : yes_no(h->kernel.pids_peak), yes_no(h->kernel.pressure));
        if (h->kernel.memory_unseen || h->kernel.pids_unseen)
                printf("  ?: no cgroup on this host has that controller on, to show its file\n");
        if (none)
                printf("  this user's jobs: none of them (no job cgroup: placement none)\n");
        else
                printf("  this user's jobs: cgroup.kill=%s, memory.peak=%s, pids.peak=%s, pressure=%s (under %s)\n",
                       yes_no(h->cgroup_kill), yes_no(h->memory_peak), yes_no(h->pids_peak), yes_no(h->pressure),
                       h->parent);
}

/* leash check's options: 0 with the cgroup parent asked for (or NULL) and
 * whether --help was, or the exit code of a usage error. */
static int check_options(int argc, char **argv, const char **ret_parent, bool *ret_help) {
        static const struct option longopts[] = {
                {"cgroup-parent", required_argument, NULL, 'p'},
                {"help", no_argument, NULL, 'h'},
                {0},
        };
        const char *parent = NULL;
        int c;

        opterr = 0;
        optind = 1;
        *ret_help = false;
        while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
                if (c == 'p') {
                        path_simplify_slashes(optarg); /* printed as the kernel names it */
                        parent = optarg;
                } else if (c == 'h') {
                        *ret_help = true;
                        return 0;
                } else if (optopt == 'p')
                        return usage_error("check: option '--cgroup-parent' needs a value (PATH)");
                else
                        return usage_error("check: unknown option '%s'", argv[optind - 1]);
        }
        if (optind < argc)
                return usage_error("check: unexpected argument '%s'", argv[optind]);
        if (parent && (!*parent || path_has_dotdot(parent)))
                return usage_error("check: --cgroup-parent: '%s': expected a path without '..'", parent);
        *ret_parent = parent;
        return 0;
}

/* Where this user's jobs go: the placement, why, and the job cgroups'
 * parent (err: the probe's, naming what failed there). */
static void print_placement(const struct leash_host *h, const struct leash_error *err) {
        printf("cgroup2 mount:      %s\n", h->cgroup2_mount);
        printf("leash's cgroup:     %s\n", h->own_cgroup[0] ? h->own_cgroup : "(unknown)");
        printf("placement:          %s%s%s\n", placement_kind_to_string(h->placement.kind),
               h->placement.parent[0] ? " " : "", h->placement.parent);
        printf("  why: %s\n", h->placement.why[0] ? h->placement.why : "(no reason given)");
        if (h->placement.kind == PLACEMENT_NONE) {
                printf("  jobs run without a cgroup, as their process tree: leash is its subreaper; wall and CPU\n"
                       "  time over the whole tree, memory by RLIMIT_AS per process; --strict refuses to run\n");
                printf("  remedy: %s\n", h->placement.remedy);
        } else if (h->placement.moved)
                printf("  a run first moves leash's processes into %s/%s (no internal processes)\n",
                       h->placement.parent, PLACEMENT_LEAF);
        {
                char line[512];
                if (remote_describe(line, sizeof line))
                        printf("  launcher: %s\n", line);
        }
        printf("job cgroups under:  %s\n", h->parent[0] ? h->parent : "(none)");
        if (h->parent_error && h->placement.kind == PLACEMENT_NONE)
                printf("  no job cgroups (placement none)\n");
        else if (h->parent_error)
                printf("  cannot create job cgroups there: %s%s%s\n",
                       err->step && err->error == h->parent_error ? err->step : "",
                       err->step && err->error == h->parent_error ? ": " : "", strerror(h->parent_error));
        else
                printf("  may create job cgroups: yes%s\n",
                       h->parent_missing ? " (the directory is made by the first run)" : "");
        printf("controllers a job gets:");
        for (int i = 0; i < CTL_COUNT; i++)
                printf(" %s=%s", cgroupfs_controller_names[i], h->ctl_available[i] ? "yes" : "no");
        printf("\n");
}

/* Each limit and what enforces it here: true when one is degraded (a
 * cgroup limit without its controller, or a limit nothing enforces). */
static bool print_limits(const struct leash_host *h) {
        bool degraded = false;

        printf("limits:\n");
        for (int l = 0; l < _LEASH_LIMIT_MAX; l++) {
                enum leash_enforcer e = h->enforced[l];
                bool cg_kind = l == LEASH_LIMIT_MEMORY || l == LEASH_LIMIT_MEMORY_HIGH || l == LEASH_LIMIT_SWAP ||
                               l == LEASH_LIMIT_PIDS || l == LEASH_LIMIT_CPUS;
                bool ok = cg_kind ? e == LEASH_BY_CGROUP : e != LEASH_BY_NONE;
                if (!ok)
                        degraded = true;
                printf("  %-12s %-7s %s%s\n", leash_limit_to_string((enum leash_limit) l), leash_enforcer_to_string(e),
                       ok ? "ok" : "DEGRADED", h->enforce_note[l] ? "" : "");
                if (h->enforce_note[l])
                        printf("               %s\n", h->enforce_note[l]);
        }
        return degraded;
}

/* The last line and the exit code: 0 ok, 1 degraded, 125 nothing can run. */
static int print_verdict(const struct leash_host *h, bool degraded) {
        if (h->placement.kind == PLACEMENT_NONE) {
                printf("verdict:            DEGRADED: no cgroup: jobs run with the limits leash enforces itself\n");
                return 1;
        }
        if (h->parent_error) {
                /* not a degraded run: no run at all */
                printf("verdict:            NOTHING CAN RUN: leash cannot create job cgroups under %s (%s)\n",
                       h->parent[0] ? h->parent : "any cgroup", strerror(h->parent_error));
                return EXIT_LEASH_FAILED;
        }
        printf("verdict:            %s\n",
               degraded ? "DEGRADED: some limits cannot be enforced by cgroup here (see above)"
                        : "ok: every limit is enforceable");
        return degraded ? 1 : 0;
}

int cmd_check(int argc, char **argv) {
        static const char *const modes[] = {"none", "v1 only", "hybrid (v1 controllers + a cgroup2 tree)",
                                            "v2 (unified)"};
        const char *parent = NULL;
        struct leash_host h;
        struct leash_error err = {0};
        bool help, degraded;
        int r;

        r = check_options(argc, argv, &parent, &help);
        if (r != 0)
                return r;
        if (help) {
                printf("Usage: leash check [--cgroup-parent PATH]\n");
                return 0;
        }
        r = leash_host_probe(parent, &h, &err);
        if (r >= 0 && h.parent_error && err.step && strcmp(err.step, "--cgroup-parent") == 0)
                return usage_error("check: %s: %s", err.step, err.detail);
        printf("cgroup mode:        %s\n", modes[h.mode]);
        for (int i = 0; i < CTL_COUNT; i++)
                if (h.v1_mount[i][0])
                        printf("  v1 %-6s         %s (not usable by leash)\n", cgroupfs_controller_names[i],
                               h.v1_mount[i]);
        if (r < 0) {
                printf("cgroup2 mount:      none\n");
                log_error("%s: %s", err.step, strerror(err.error));
                return EXIT_LEASH_FAILED;
        }
        print_placement(&h, &err);
        print_features(&h);
        degraded = print_limits(&h);
        print_sandbox_check();
        print_gpu_check();
        if (!h.clone_into_cgroup)
                printf("note: no clone3(CLONE_INTO_CGROUP): jobs start with fork and move themselves in\n");
        return print_verdict(&h, degraded);
}
