/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The job object's data, below the modules that work on it: job.c (its
 * life: create or adopt, start or fork, finish, results), supervise.c (its
 * events: deadlines, the grace ladder, the main process's exit, an adopted
 * cgroup emptying; supervise.h), escape.c and tree.c. It declares no
 * function, so none of them includes another's header through it.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>

#include "../cgroup/account.h"
#include "holder.h"
#include "isolate.h"
#include "../leash.h"
#include "../../sandbox/sandbox.h"
#include "watchdog.h"

enum job_state {
        JOB_CREATED,  /* cgroup made, nothing started */
        JOB_RUNNING,  /* started, forked into, or adopted */
        JOB_ENDED,    /* the main process was reaped (or an adopted cgroup emptied) */
        JOB_FINISHED, /* accounted, cgroup removed */
};

/* Every deadline of the event loop; one timerfd is armed for the earliest.
 * A new kind of deadline (a sampling interval) is one more entry and one
 * case in supervise_due(). */
enum job_deadline {
        DEADLINE_WALL,   /* the wall-time limit */
        DEADLINE_CPU,    /* the next CPU-time check */
        DEADLINE_GRACE,  /* the end of the grace: SIGKILL */
        DEADLINE_SAMPLE, /* the next sample (only with sampling asked for) */
        DEADLINE_DRAIN,  /* no cgroup, the main process ended in the grace: the next look at the tree */
        _DEADLINE_MAX,
};
#define DEADLINE_NEVER UINT64_MAX

struct leash_job {
        struct leash_spec spec;        /* shallow: strings live in settings, or the caller's */
        void *settings;                /* owned (job_new_owning): freed with the job by settings_free */
        void (*settings_free)(void *); /* (the settings layer's, when made from a leash_config) */
        char **argv;                   /* owned copy for the report */
        struct sandbox_plan plan;
        struct isolate_plan iso; /* --isolate: the status pipe from the init */
        enum job_state state;
        bool adopted, remove_cgroup, has_main;
        bool forked; /* leash_job_fork: the main process began as a copy of the caller */
        bool owned;  /* LEASH_ADOPT_OWNED: never ends by itself, its owner ends it */
        /* owned: the owner's way to the job's processes (leash_job_set_signal_fn),
         * NULL: every process of the cgroup */
        int (*signal_fn)(void *userdata, int sig);
        void *signal_userdata;
        int parent_fd, job_fd, pidfd, timer_fd, events_fd, epoll_fd;
        int setup_fd; /* a forked main process's setup pipe, read once it ended (supervise.c) */
        char dirname[256];
        size_t mount_len; /* r.cgroup = the cgroup2 mount (this long) + the job's path in it */
        struct watchdog wd;
        uint64_t start_ns;
        uint64_t deadline[_DEADLINE_MAX];
        double cores; /* CPUs the job can use at once: the CPU-time checks' pace */
        bool soft_sent, killed;
        /* the main process was reaped in the grace while the rest of the job
         * still ran: the job ends when its cgroup empties (events_fd) or at the
         * grace's SIGKILL (supervise.c, drain_grace) */
        bool main_ended;
        enum leash_reason cause; /* a time limit, an interrupt or the caller: OK when none */
        struct rusage ru;
        struct leash_error start_error; /* why start/fork failed in the child */
        struct sampler *sampler;        /* NULL: no sampling, no wake-ups for it */
        /* escape.c: pidfds of the escapees named in r.escaped (-1: none, or the
         * main process, known by pidfd) */
        int esc_fd[LEASH_ESCAPED_MAX];
        unsigned long long esc_start[LEASH_ESCAPED_MAX]; /* start time: with the pid, who it is */
        bool esc_signalled[LEASH_ESCAPED_MAX];           /* leash sent it a signal that was delivered */
        int home_fd;               /* O_PATH: leash's own cgroup when the job was made, to go back to */
        char home[256];            /* its path, relative to the cgroup2 root */
        bool stuck;                /* leash is in the job cgroup and could not leave it */
        bool timer_set;            /* timer_fd was ever armed: until then it is neither read nor disarmed */
        bool sweep;                /* its start sweeps dead leashes' cgroups (once per config and process) */
        unsigned long long pidns;  /* leash's pid namespace (its inode), for the record and the sweep; 0 unknown */
        unsigned controllers;      /* the job cgroup's, as it was made or adopted (CTL_* bits) */
        struct account_files acct; /* what finish reads, opened as the job starts */
        char name[80];             /* its name, for the record */
        bool no_cgroup;            /* placement none: the job is its process tree (tree.c) */
        bool joined;               /* the parent is a unit leash is not in (placement.joined) */
        bool attaching;            /* leash's move into the parent's leaf may be in flight (placement.attaching) */
        bool undumpable;           /* holds the process undumpable until it finished (undumpable.c) */
        struct holder holder;      /* no cgroup and a caller that is no subreaper: the tree's holder */
        uint64_t tree_reaped_user_us, tree_reaped_system_us; /* CPU of the orphans tree.c reaped */
        uint64_t tree_seen_user_us, tree_seen_system_us;     /* the largest CPU-time check (supervise.c) */
        /* --gpus/--devices (devices.c): the device program's rules, and the
         * GPU variables of the job's environment; the arrays, not zeroed
         * (job_alloc), are read only up to n_dev_rule and gpu_envp's */
        size_t n_dev_rule;
        bool dev_default_allow;
        char *gpu_envp[3];
        struct devfilter_rule dev_rule[256];
        char gpu_env[2][1024];
        struct leash_result r; /* last: its own tail is not zeroed (job_alloc) */
};
