/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The nest mode's placement (slurm-nest.h): Slurm's own cgroups, adopted
 * read-only.
 *
 * With CgroupPlugin=cgroup/v2 slurmd (Delegate=yes in its unit) owns
 * system.slice/slurmstepd.scope (or <node>_slurmstepd.scope) and puts each
 * step at job_<ID>/step_<S>, with slurmstepd itself in step_<S>/slurm and the
 * tasks in step_<S>/user/task_<N>.  leash never writes a limit there and
 * never moves a process: what it signals and kills is the user/ subtree of a
 * step, never slurm/ (a SIGXCPU, whose default action is a core dump, or a
 * cgroup.kill there would end slurmstepd and Slurm would drain the node).
 */
#include "slurm-nest.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../basic/fileio.h"
#include "../basic/macro.h"
#include "../engine/cgroup/account.h"
#include "../engine/cgroup/cgroupfs.h"
#include "../engine/placement/host.h"
#include "slurm.h"

int slurm_nest_job_path(const char *cgroup_text, uint32_t job_id, const char *step, char *ret, size_t size) {
        const char *l = cgroup_text, *p;
        char job[32], want[96];
        size_t n, w;

        /* the cgroup2 line: "0::/system.slice/slurmstepd.scope/job_5/step_batch/user/task_0" */
        while (l && strncmp(l, "0::", 3) != 0)
                l = (l = strchr(l, '\n')) ? l + 1 : NULL;
        if (!l)
                return -ENOENT;
        l += 3;
        n = strcspn(l, "\n");
        snprintf(job, sizeof job, "/job_%" PRIu32 "/", job_id);
        w = (size_t) snprintf(want, sizeof want, "/job_%" PRIu32 "/step_%s", job_id, step);
        p = memmem(l, n, want, w);
        /* exactly one job_<ID> component, then the step (its user/ subtree, or
         * slurmstepd's leaf before the task is moved to user/task_N) */
        if (!p || p == l || (p + w < l + n && p[w] != '/') || memmem(p + 1, n - (size_t) (p + 1 - l), job, strlen(job)))
                return -EPERM;
        n = (size_t) (p - l) + strlen(job) - 1;
        if (n + 1 > size)
                return -ENAMETOOLONG;
        memcpy(ret, l, n);
        ret[n] = '\0';
        return 0;
}

int slurm_nest_open_job(pid_t pid, uint32_t job_id, const char *step, int *ret_fd, char *ret_path, size_t size) {
        char file[64], text[4096], rel[2048], mount[2048];
        int r, fd;

        snprintf(file, sizeof file, "/proc/%d/cgroup", (int) pid);
        r = read_file_at(AT_FDCWD, file, text, sizeof text, NULL);
        if (r < 0)
                return r;
        r = slurm_nest_job_path(text, job_id, step, rel, sizeof rel);
        if (r < 0) { /* where it is, for the refusal's message */
                const char *l = strstr(text, "0::");
                snprintf(ret_path, size, "%.*s", l ? (int) strcspn(l + 3, "\n") : 0, l ? l + 3 : "");
                return r;
        }
        r = host_cgroup2_mount(mount, sizeof mount, NULL);
        if (r < 0)
                return r;
        if ((size_t) snprintf(ret_path, size, "%s%s", mount, rel) >= size)
                return -ENAMETOOLONG;
        fd = open(ret_path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        *ret_fd = fd;
        return 0;
}

/* step_<S>/user, the tasks' subtree of a step. */
static int user_open(int step_fd, int *ret_fd) {
        int fd = openat(step_fd, "user", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        *ret_fd = fd;
        return 0;
}

/* Signals without freezing: cgroup.freeze is Slurm's (scontrol suspend), and
 * a thaw of leash's would resume a job Slurm suspended. */
static int user_signal(int user_fd, int sig) {
        int n = cgroupfs_signal_each(user_fd, sig, NULL, 0);
        return n > 0 ? n : 0;
}

struct nest_walk {
        int sig;
        bool kill; /* cgroup.kill after counting */
        int count;
};

static void walk_step(void *userdata, const char *dirname, int step_fd) {
        struct nest_walk *w = userdata;
        _cleanup_close_ int fd = -1;
        int n;

        (void) dirname;
        if (user_open(step_fd, &fd) < 0)
                return;
        n = user_signal(fd, w->sig);
        w->count += n;
        if (w->kill && n > 0)
                (void) cgroupfs_kill(fd);
}

int slurm_nest_signal(int job_fd, int sig) {
        struct nest_walk w = {.sig = sig};
        int r = slurm_for_each_step(job_fd, walk_step, &w);
        return r < 0 ? r : w.count;
}

int slurm_nest_kill(int job_fd) {
        struct nest_walk w = {.kill = true};
        int r = slurm_for_each_step(job_fd, walk_step, &w);
        return r < 0 ? r : w.count;
}

int slurm_nest_step_end(int job_fd, const char *step, bool killed, struct slurm_nest_step *ret) {
        _cleanup_close_ int step_fd = -1, user_fd = -1;
        char dirname[48];
        int n;

        if (!slurm_step_valid(step))
                return -EINVAL;
        snprintf(dirname, sizeof dirname, "step_%s", step);
        step_fd = openat(job_fd, dirname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (step_fd < 0)
                return negative_errno();
        memset(ret, 0, sizeof *ret);
        if (user_open(step_fd, &user_fd) == 0) {
                /* what is still there once the step's tasks are gone was left
                 * behind; after the job's SIGKILL (cgroup.kill, which lets no
                 * fork escape) what is there is dying: given its time first */
                if (killed)
                        (void) cgroupfs_wait_empty(user_fd, 2000);
                n = user_signal(user_fd, 0);
                if (n > 0) {
                        ret->leftovers = (unsigned) n;
                        (void) cgroupfs_kill(user_fd);
                        (void) cgroupfs_wait_empty(user_fd, 2000);
                }
        }
        account_usage_init(&ret->usage);
        account_read(step_fd, &ret->usage);
        return 0;
}
