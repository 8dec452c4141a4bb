/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * spank_leash.so: leash's SPANK plugin for Slurm (built against the spank.h
 * of the Slurm it is loaded by: a plugin is tied to a Slurm major release).
 *
 *   plugstack.conf:  required /usr/lib/.../leash/spank_leash.so state-dir=/run/leash/slurm
 *
 * It does three things, and leaves everything else to `leash slurm prolog`
 * (the job cgroup, the limits, the per-job supervisor) and `leash slurm
 * epilog` (the report, the cleanup):
 *
 *   --leash-profile=NAME  for sbatch/srun/salloc. In the submitting command
 *       (local/allocator context, as the user) NAME is checked with `leash
 *       slurm check-profile`, so a profile the cluster does not offer to
 *       users (user-profiles in slurm.ini) is refused at submission. Slurm
 *       hands the option to the Prolog as SPANK__SLURM_SPANK_OPTION_leash_...
 *       where the Prolog checks it again (the submit host is not trusted).
 *   task_init_privileged (in the task, as root, before exec): asks the job's
 *       supervisor to place this task in step_<STEP> of the job cgroup, and
 *       passes the task's stderr along so that the supervisor can print its
 *       verdict ("leash: job 3: wall_time limit 3s reached ...") into it. A
 *       failure here fails the job without draining the node: with on-error
 *       = fail-job a job whose setup failed is refused this way.
 *   exit (slurmstepd, at the end of a step): asks the supervisor to kill what
 *       the step left behind (a daemon that double-forked out of Slurm's
 *       process tracking is still in the step cgroup).
 *
 * The plugin links only src/basic/seqpacket.c and src/basic/kvfile.c of
 * leash: it speaks the supervisor's socket protocol (one SOCK_SEQPACKET
 * message each way) and reads the Prolog's state file, owned by root, in the
 * format no user's value can forge (and refuses one that is not).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "../basic/kvfile.h"
#include "../basic/seqpacket.h"

SPANK_PLUGIN(leash, 1);

#ifndef LEASH_BINDIR
#define LEASH_BINDIR "/usr/bin"
#endif

static char state_dir[1024] = "/run/leash/slurm";
static char leash_bin[1024] = LEASH_BINDIR "/leash";

static int profile_option(int val, const char *value, int remote);

static struct spank_option profile_opt = {
        (char *) "leash-profile",
        (char *) "NAME",
        (char *) "run the job under the leash profile NAME (when the cluster lets users choose it)",
        1,
        0,
        profile_option,
};

static bool name_ok(const char *s) {
        size_t n = strlen(s);
        if (n == 0 || n > 48 || s[0] == '.')
                return false;
        for (; *s; s++)
                if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_' ||
                      *s == '.' || *s == '-'))
                        return false;
        return true;
}

static int profile_option(int val, const char *value, int remote) {
        pid_t pid;
        int status;

        if (!value || !name_ok(value)) {
                char e[4 * 256];
                kv_escape(value ? value : "", e, sizeof e); /* slurmd's and srun's log: one line */
                slurm_error("leash: --leash-profile='%s': expected a profile name", e);
                return -1;
        }
        if (remote)
                return 0; /* the Prolog judges it again on the node */
        /* in sbatch/srun/salloc, as the user: refuse early what the Prolog would refuse */
        pid = fork();
        if (pid < 0)
                return 0;
        if (pid == 0) {
                execl(leash_bin, "leash", "slurm", "check-profile", value, (char *) NULL);
                _exit(127);
        }
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        if (WIFEXITED(status) && WEXITSTATUS(status) == 1)
                return -1; /* leash said why on stderr */
        return 0;
}

int slurm_spank_init(spank_t sp, int ac, char **av) {
        if (spank_option_register(sp, &profile_opt) != ESPANK_SUCCESS) {
                slurm_error("leash: cannot register --leash-profile");
                return -1;
        }
        for (int i = 0; i < ac; i++) {
                if (strncmp(av[i], "state-dir=", 10) == 0 && av[i][10] == '/')
                        snprintf(state_dir, sizeof state_dir, "%s", av[i] + 10);
                else if (strncmp(av[i], "leash=", 6) == 0 && av[i][6] == '/')
                        snprintf(leash_bin, sizeof leash_bin, "%s", av[i] + 6);
                else {
                        slurm_error("leash: plugstack.conf: unknown argument '%s' (expected state-dir=DIR, leash=PATH)",
                                    av[i]);
                        return -1;
                }
        }
        return 0;
}

static void step_name(uint32_t step, char *buf, size_t size) {
        if (step == SLURM_BATCH_SCRIPT)
                snprintf(buf, size, "batch");
        else if (step == SLURM_EXTERN_CONT)
                snprintf(buf, size, "extern");
        else if (step == SLURM_INTERACTIVE_STEP)
                snprintf(buf, size, "interactive");
        else
                snprintf(buf, size, "%" PRIu32, step);
}

/* The Prolog's state for the job: 0 and "" when there is none, 0 and the
 * text for root's well-formed file, -1 for one leash cannot trust (a value
 * that forged a line, a key given twice: see src/basic/kvfile.h). */
/* The job's state file into buf ("" when there is none): 0, -errno when it
 * cannot be opened or read, -EBADMSG when it is not a regular file of root's
 * that no one else may write, too long, or not key=value lines. */
static int read_state(uint32_t job, char *buf, size_t size) {
        char path[1200];
        struct stat st;
        ssize_t n = 0;
        int fd, r = 0;

        buf[0] = '\0';
        snprintf(path, sizeof path, "%s/job_%" PRIu32 "/state", state_dir, job);
        fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 0 : errno == ELOOP ? -EBADMSG : -errno;
        if (fstat(fd, &st) < 0)
                r = -errno;
        else if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022) || (size_t) st.st_size >= size)
                r = -EBADMSG;
        else {
                n = read(fd, buf, size - 1);
                if (n < 0)
                        r = -errno;
                buf[n > 0 ? n : 0] = '\0';
                if (r == 0 && (n != st.st_size || kv_check(buf) < 0))
                        r = -EBADMSG;
        }
        close(fd);
        if (r < 0)
                buf[0] = '\0';
        return r;
}

static bool state_get(const char *state, const char *key, char *buf, size_t size) {
        return kv_get(state, key, buf, size) == 0;
}

static int request(uint32_t job, const char *req, int fd_to_send, char *reply, size_t size) {
        char path[1100];

        if ((size_t) snprintf(path, sizeof path, "%s/job_%" PRIu32 "/sock", state_dir, job) >= sizeof path)
                return -ENAMETOOLONG;
        return seqpacket_request(path, req, fd_to_send, 5000, reply, size);
}

static int job_and_step(spank_t sp, uint32_t *job, char *step, size_t size) {
        uint32_t s;
        if (spank_get_item(sp, S_JOB_ID, job) != ESPANK_SUCCESS ||
            spank_get_item(sp, S_JOB_STEPID, &s) != ESPANK_SUCCESS)
                return -1;
        step_name(s, step, size);
        return 0;
}

/* In the task, as root, before exec: into its step cgroup. */
int slurm_spank_task_init_privileged(spank_t sp, int ac, char **av) {
        char state[32768], step[32], req[96], reply[512], why[1024] = "setup failed";
        uint32_t job;
        int r;

        if (job_and_step(sp, &job, step, sizeof step) < 0)
                return 0;
        r = read_state(job, state, sizeof state);
        if (r < 0) {
                /* never unconfined on a state that was tampered with or cannot be read */
                if (r == -EBADMSG)
                        snprintf(why, sizeof why, "its state file is malformed or not root's alone");
                else
                        snprintf(why, sizeof why, "its state file cannot be read: %s", strerror(-r));
                dprintf(STDERR_FILENO, "leash: job %" PRIu32 ": task refused: %s\n", job, why);
                slurm_error("leash: job %" PRIu32 ": task refused: %s", job, why);
                return -1;
        }
        if (!state[0])
                return 0; /* no leash Prolog for this job */
        if (state_get(state, "refuse", reply, sizeof reply)) {
                char e[sizeof why] = "setup failed";
                state_get(state, "setup_error", e, sizeof e);
                kv_escape(e, why, sizeof why); /* may hold the user's --leash-profile */
                dprintf(STDERR_FILENO, "leash: job %" PRIu32 ": task refused: %s (on-error = fail-job)\n", job, why);
                slurm_error("leash: job %" PRIu32 ": task refused: %s", job, why);
                return -1;
        }
        if (!state_get(state, "supervisor_pid", reply, sizeof reply))
                return 0; /* profile none, or on-error = continue after trouble */
        snprintf(req, sizeof req, "adopt %s %d", step, (int) getpid());
        r = request(job, req, STDERR_FILENO, reply, sizeof reply);
        if (r == 0 && strncmp(reply, "ok", 2) == 0)
                return 0;
        if (r < 0)
                snprintf(reply, sizeof reply, "error the supervisor did not answer: %s", strerror(-r));
        /* fail closed: the task never runs outside the job cgroup */
        kv_escape(strchr(reply, ' ') ? strchr(reply, ' ') + 1 : reply, why, sizeof why);
        slurm_error("leash: job %" PRIu32 ": task refused: place it in step_%s: %s", job, step, why);
        dprintf(STDERR_FILENO, "leash: job %" PRIu32 ": task refused: place it in step_%s: %s\n", job, step, why);
        return -1;
}

static void step_end(uint32_t job, const char *step) {
        char req[64], reply[128];

        snprintf(req, sizeof req, "step-end %s", step);
        if (request(job, req, -1, reply, sizeof reply) == 0 && strncmp(reply, "ok ", 3) == 0 && atoi(reply + 3) > 0)
                slurm_info("leash: job %" PRIu32 ": step %s: killed %s leftover process(es)", job, step, reply + 3);
}

/* slurmstepd, as each task of the step exits (mode nest): once the last
 * one has, before Slurm's proctrack kills the rest of the step, what is left
 * is what the step left behind; the supervisor counts it, kills it and reads
 * the step's cgroup while Slurm still has it. */
static uint32_t tasks_exited;

int slurm_spank_task_exit(spank_t sp, int ac, char **av) {
        char state[32768], step[32], mode[16];
        uint32_t job, local = 0;

        if (spank_context() != S_CTX_REMOTE || job_and_step(sp, &job, step, sizeof step) < 0)
                return 0;
        if (read_state(job, state, sizeof state) < 0 || !state_get(state, "mode", mode, sizeof mode) ||
            strcmp(mode, "nest") != 0 || !state_get(state, "supervisor_pid", mode, sizeof mode))
                return 0;
        if (spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &local) != ESPANK_SUCCESS || ++tasks_exited < local)
                return 0;
        step_end(job, step);
        return 0;
}

/* slurmstepd, at the end of a step: what the step left behind dies. */
int slurm_spank_exit(spank_t sp, int ac, char **av) {
        char state[32768], step[32], reply[128];
        uint32_t job;

        if (spank_context() != S_CTX_REMOTE || job_and_step(sp, &job, step, sizeof step) < 0)
                return 0;
        (void) read_state(job, state, sizeof state);
        if (!state_get(state, "supervisor_pid", reply, sizeof reply))
                return 0;
        step_end(job, step);
        return 0;
}
