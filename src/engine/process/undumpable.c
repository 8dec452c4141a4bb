/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A job runs with leash's uid unless --user says otherwise (always, for an
 * ordinary user), and the kernel lets a process ptrace, or open
 * /proc/PID/mem of, any dumpable process of its uid whose capabilities it
 * has (Yama, where it is on, narrows that to descendants; a job is leash's
 * descendant, not its ancestor, but Yama is often off). Issue 38 measured
 * it: a job seized leash with PTRACE_SEIZE and rewrote its memory through
 * /proc/<leash>/mem, and its wall-time kill was reported as `reason: ok`;
 * a function of leash.limit could write its caller's memory the same way.
 *
 * So the process that supervises a job is undumpable (PR_SET_DUMPABLE 0)
 * from just before the job's first process exists until the job has
 * finished: then only a ptracer with CAP_SYS_PTRACE may attach, and /proc/PID
 * files that need ptrace access (mem, environ, fd, maps...) are closed to
 * every other process of the uid. The job itself is not affected: exec
 * makes a process dumpable again (for an ordinary binary, as the kernel
 * decides at every exec), and a forked function that runs on without exec
 * is given back the caller's state (undumpable_child) before its
 * credentials change. The watchdog and the holder share or copy leash's
 * memory, and its state with it.
 *
 * Dumpability is the whole process's (an attribute of its memory map), and
 * a library caller may run jobs in several threads: a count under a lock,
 * the state before the first hold saved and restored by the last release.
 * A fork copies the lock and the count as they are: glibc's fork() runs
 * the handlers below (the lock taken before, so that the copy is whole, and
 * made anew in the child); a raw clone (leash_job_fork of a one-threaded
 * caller, libcfork.c) has no other thread that could hold it, and
 * undumpable_child makes it anew too.
 * While any job runs, the caller cannot be core-dumped nor attached to by a
 * debugger of its own uid (root's, with CAP_SYS_PTRACE, still can): the
 * price of a supervisor its job cannot rewrite. HACKING.md says why.
 */
#include "undumpable.h"

#include <pthread.h>
#include <sys/prctl.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static unsigned holds;
static int before = -1; /* PR_GET_DUMPABLE before the first hold */

/* The caller's own fork (os.fork, a multiprocessing worker) while a job of
 * another thread runs, and leash_job_fork of a caller with threads: the
 * child runs no job of this process, so it is not held undumpable by one.
 * The lock is held across the fork, so that the count is not copied half
 * written. */
static void atfork_prepare(void) {
        pthread_mutex_lock(&lock);
}

static void atfork_parent(void) {
        pthread_mutex_unlock(&lock);
}

static void register_atfork(void) {
        (void) pthread_atfork(atfork_prepare, atfork_parent, undumpable_child);
}

void undumpable_hold(void) {
        (void) pthread_once(&once, register_atfork);
        pthread_mutex_lock(&lock);
        if (holds++ == 0) {
                before = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
                if (before != 0)
                        (void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        }
        pthread_mutex_unlock(&lock);
}

void undumpable_hold_to_exit(void) {
        (void) pthread_once(&once, register_atfork);
        pthread_mutex_lock(&lock);
        holds++;
        before = 0; /* nothing to give back */
        (void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        pthread_mutex_unlock(&lock);
}

void undumpable_release(void) {
        pthread_mutex_lock(&lock);
        /* 1 is the only state PR_SET_DUMPABLE can give back (2, suid_dumpable's
         * "root only", cannot be set): anything else stays undumpable */
        if (holds > 0 && --holds == 0 && before == 1)
                (void) prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
        pthread_mutex_unlock(&lock);
}

void undumpable_child(void) {
        if (holds > 0 && before == 1)
                (void) prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
        holds = 0;
        /* the copy was held by the forking thread (glibc's fork, through
         * atfork_prepare), which the child is: made anew, not unlocked */
        lock = (pthread_mutex_t) PTHREAD_MUTEX_INITIALIZER;
}
