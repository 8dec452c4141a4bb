/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A host with its own event loop (as a scheduler daemon or an asyncio
 * program has) running three jobs at once: each job's fd goes into the host's
 * epoll set, and leash_job_dispatch() is called when it is readable. Nothing
 * blocks on a job; the host could watch its own sockets in the same loop.
 *
 *   event-loop [CGROUP_PARENT]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <leash/leash.h>

static struct leash_job *make(const char *parent, const char *name, const char *wall) {
        struct leash_config *c = NULL;
        struct leash_job *j = NULL;
        struct leash_error err = {0};

        if (leash_config_new(&c) < 0)
                return NULL;
        if ((parent && leash_config_set(c, "cgroup-parent", parent, &err) < 0) ||
            leash_config_set(c, "name", name, &err) < 0 || leash_config_set(c, "wall-time", wall, &err) < 0 ||
            leash_config_set(c, "grace", "100ms", &err) < 0 || leash_job_new(c, &j, &err) < 0)
                fprintf(stderr, "event-loop: %s: %s: %s\n", err.step, err.detail, strerror(err.error));
        leash_config_free(c); /* the job keeps what it needs */
        return j;
}

int main(int argc, char **argv) {
        const char *parent = argc > 1 && argv[1][0] ? argv[1] : NULL;
        char sleep_[] = "sleep", secs[] = "0.3", sh[] = "sh", dash_c[] = "-c", script[] = "exit 3";
        char *sleeper[] = {sleep_, secs, NULL}, *exits[] = {sh, dash_c, script, NULL};
        struct leash_job *jobs[3];
        struct leash_error err = {0};
        int ep, running = 3;
        pid_t pid;

        jobs[0] = make(parent, "sleeper", "5s");
        jobs[1] = make(parent, "exits", "5s");
        jobs[2] = make(parent, "runaway", "1500ms");
        if (!jobs[0] || !jobs[1] || !jobs[2])
                return 1;
        if (leash_job_start(jobs[0], sleeper, &err) < 0 || leash_job_start(jobs[1], exits, &err) < 0) {
                fprintf(stderr, "event-loop: %s: %s\n", err.step, strerror(err.error));
                return 1;
        }
        fflush(stdout);
        pid = leash_job_fork(jobs[2], &err);
        if (pid == 0)
                for (;;) /* a function that never returns: the wall-time limit ends it */
                        ;
        if (pid < 0)
                return 1;

        ep = epoll_create1(EPOLL_CLOEXEC);
        for (int i = 0; i < 3; i++) {
                struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t) i};
                if (epoll_ctl(ep, EPOLL_CTL_ADD, leash_job_fd(jobs[i]), &ev) < 0)
                        return 1;
        }
        while (running > 0) {
                struct epoll_event evs[3];
                int n = epoll_wait(ep, evs, 3, -1);
                if (n < 0 && errno != EINTR)
                        return 1;
                for (int k = 0; k < n; k++) {
                        struct leash_job *j = jobs[evs[k].data.u32];
                        char *summary = NULL;
                        if (leash_job_dispatch(j) != 1)
                                continue;
                        (void) epoll_ctl(ep, EPOLL_CTL_DEL, leash_job_fd(j), NULL);
                        if (leash_job_finish(j, &err) < 0)
                                return 1;
                        (void) leash_job_summary(j, &summary);
                        printf("job %u ended: %s, exit %d, wall %.3f s%s%s\n", evs[k].data.u32,
                               leash_reason_to_string(leash_job_reason(j)), leash_job_exit_code(j),
                               (double) leash_job_usage(j, LEASH_USAGE_WALL_NS) / 1e9, summary ? "; " : "",
                               summary ? summary : "");
                        free(summary);
                        running--;
                }
        }
        for (int i = 0; i < 3; i++)
                leash_job_free(jobs[i]);
        close(ep);
        return 0;
}
