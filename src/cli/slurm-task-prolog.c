/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * leash slurm task-prolog: Slurm's TaskProlog= (as the user). Asks the job's
 * supervisor to place the task in its step cgroup; fails closed: a task
 * leash was asked to confine and could not place never runs.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../basic/kvfile.h"
#include "../basic/log.h"
#include "../basic/macro.h"
#include "../basic/parse.h"
#include "slurm-ctx.h"
#include "slurm-hooks.h"
#include "slurm-supervise.h"

static bool stderr_is_file(void) {
        struct stat st;
        return fstat(STDERR_FILENO, &st) == 0 && (S_ISREG(st.st_mode) || S_ISCHR(st.st_mode));
}

/* No state for the job in the state directory: no Prolog of leash's ran for
 * it (0: nothing to do), unless the job cgroup leash's Prolog makes is there,
 * which means it ran with another configuration: the task is refused (1),
 * saying why, never run outside the cgroup meant for it. env_ignored: the
 * TaskProlog was run without --config-dir and its environment named one
 * (LEASH_CONFIG_DIR, the way of the hooks before issue 22): ignored, and said
 * so where that leaves the task unplaced. */
static int task_prolog_no_state(struct slurm_ctx *x, bool env_ignored) {
        _cleanup_close_ int root_fd = -1, job_fd = -1;
        char root[4096];

        if (slurm_cgroup_root(false, root, sizeof root, &root_fd, NULL) < 0 ||
            slurm_job_cgroup_open(root_fd, x->job.id, &job_fd) < 0)
                return 0;
        log_error("job %" PRIu32 ": task refused: leash's Prolog made the job cgroup %s/job_%" PRIu32
                  " but its state is not in %s: the TaskProlog reads the configuration its wrapper names with "
                  "--config-dir=DIR, the Prolog's%s",
                  x->job.id, root, x->job.id, x->conf.state_dir,
                  env_ignored ? " (LEASH_CONFIG_DIR is ignored by the TaskProlog)" : "");
        return 1;
}

int slurm_task_prolog(bool env_ignored) {
        struct slurm_ctx x = {0};
        _cleanup_close_ int state_fd = -1;
        _cleanup_free_ char *state = NULL;
        char why[4400], step[40], req[128], reply[512];
        uint64_t pid;
        int r;

        if (slurm_ctx_load_job(&x) < 0)
                return 1;
        slurm_ctx_load_conf(&x);
        if (slurm_step_name(getenv("SLURM_STEP_ID"), step, sizeof step) < 0 ||
            parse_u64(slurm_env("SLURM_TASK_PID"), &pid) < 0 || pid == 0 || pid > INT32_MAX) {
                log_error("job %" PRIu32 ": SLURM_STEP_ID='%s' SLURM_TASK_PID='%s': not a task of a step", x.job.id,
                          slurm_env("SLURM_STEP_ID"), slurm_env("SLURM_TASK_PID"));
                slurm_ctx_done(&x);
                return 1;
        }
        r = slurm_ctx_state_open(&x, false, &state_fd, why, sizeof why);
        if (r < 0 && r != -ENOENT) { /* fail closed: a 0 here runs the task unconfined */
                log_error("job %" PRIu32 ": task refused: its state: %s", x.job.id, why);
                slurm_ctx_done(&x);
                return 1;
        }
        if (r == 0)
                r = slurm_state_read(state_fd, "state", &state);
        if (r == -ENOENT) {
                r = task_prolog_no_state(&x, env_ignored);
                slurm_ctx_done(&x);
                return r;
        }
        if (r < 0) { /* never run unconfined on a state leash cannot trust */
                log_error("job %" PRIu32 ": task refused: its state: %s", x.job.id,
                          r == -EBADMSG ? "malformed" : strerror(-r));
                slurm_ctx_done(&x);
                return 1;
        }
        if (slurm_kv_u64(state, "refuse", 0)) {
                char e[1024] = "setup failed";
                (void) kv_get(state, "setup_error", e, sizeof e);
                log_error("job %" PRIu32 ": task refused: %s (on-error = fail-job)", x.job.id, e);
                slurm_ctx_done(&x);
                return 1;
        }
        if (!slurm_kv_u64(state, "supervisor_pid", 0)) { /* profile none, or continue after trouble */
                slurm_ctx_done(&x);
                return 0;
        }
        snprintf(req, sizeof req, "adopt %s %" PRIu64, step, pid);
        /* The TaskProlog's stderr goes along for the verdict only when it is a
         * file or a terminal: a pipe may be slurmstepd's, read to EOF before
         * the task starts, and a copy held by the supervisor would hang it. */
        r = slurm_request(state_fd, req, stderr_is_file() ? STDERR_FILENO : -1, 5000, reply, sizeof reply);
        if (r == 0 && strncmp(reply, "ok", 2) == 0) {
                slurm_ctx_done(&x);
                return 0;
        }
        if (r < 0)
                snprintf(reply, sizeof reply, "error the supervisor did not answer: %s", strerror(-r));
        /* fail closed: a task leash was asked to confine and could not place
         * never runs outside the job cgroup, whatever on-error says */
        log_error("job %" PRIu32 ": task refused: place it in step_%s: %s", x.job.id, step,
                  strchr(reply, ' ') ? strchr(reply, ' ') + 1 : reply);
        slurm_ctx_done(&x);
        return 1;
}
