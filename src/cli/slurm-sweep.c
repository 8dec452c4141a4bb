/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * leash slurm sweep [--dry-run] [--orphans]: removes what dead supervisors
 * left behind, job cgroups and states (as root).
 */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../basic/log.h"
#include "../basic/macro.h"
#include "../basic/parse.h"
#include "cli.h"
#include "slurm-ctx.h"
#include "slurm-hooks.h"

/* A job is stale when its state says a supervisor ran and it is gone, or
 * when its cgroup has no state at all (the Epilog never came). */
static bool sweep_orphans;

static int sweep_one(struct slurm_ctx *x, uint32_t id, bool dry_run) {
        _cleanup_close_ int state_fd = -1, root_fd = -1;
        _cleanup_free_ char *state = NULL;
        char why[4400];
        bool have_state;

        x->job.id = id;
        have_state = slurm_ctx_state_open(x, false, &state_fd, why, sizeof why) == 0 &&
                     slurm_state_read(state_fd, "state", &state) == 0;
        if (have_state && (!slurm_kv_u64(state, "supervisor_pid", 0) || slurm_supervisor_alive(state)))
                return 0;
        /* A job cgroup without a state here may belong to a Prolog with another
         * state-dir (another configuration on the same host): only --orphans
         * removes those. */
        if (!have_state && !sweep_orphans) {
                printf("job %" PRIu32 ": a cgroup without state in %s: left alone (--orphans removes it)\n", id,
                       x->conf.state_dir);
                return 0;
        }
        printf("%s job %" PRIu32 "\n", dry_run ? "would remove" : "removing", id);
        if (dry_run)
                return 0;
        if (slurm_cgroup_root(false, NULL, 0, &root_fd, NULL) == 0 && slurm_job_cgroup_remove(root_fd, id) < 0) {
                log_error("job %" PRIu32 ": could not remove its cgroup", id);
                return 1;
        }
        slurm_ctx_state_remove(x);
        return 0;
}

int slurm_sweep(int argc, char **argv) {
        struct slurm_ctx x = {0};
        _cleanup_close_ int root_fd = -1;
        bool dry_run = false;
        int rc = 0;

        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--dry-run") == 0)
                        dry_run = true;
                else if (strcmp(argv[i], "--orphans") == 0)
                        sweep_orphans = true;
                else
                        return usage_error("slurm sweep: '%s': expected --dry-run or --orphans", argv[i]);
        }
        slurm_ctx_load_conf(&x);
        /* job cgroups first (those without state too), then states without cgroups */
        if (slurm_cgroup_root(false, NULL, 0, &root_fd, NULL) == 0) {
                int dfd = openat(root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
                struct dirent *de;
                while (d && (de = readdir(d))) {
                        uint64_t id;
                        if (strncmp(de->d_name, "job_", 4) == 0 && parse_u64(de->d_name + 4, &id) == 0 &&
                            id <= UINT32_MAX && sweep_one(&x, (uint32_t) id, dry_run) != 0)
                                rc = 1;
                }
                if (d)
                        closedir(d);
                else if (dfd >= 0)
                        close(dfd);
        }
        if (slurm_ctx_for_each_state(&x, sweep_one, dry_run) != 0)
                rc = 1;
        slurm_ctx_done(&x);
        return rc;
}
