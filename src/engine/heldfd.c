/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The descriptors libleash holds, process-wide.
 *
 * A child made by leash_job_fork() runs the caller's code with a copy of the
 * caller's fd table, and O_CLOEXEC does nothing for a fork that does not
 * exec. Every fd the library keeps past a call (the jobs' cgroup dirfds,
 * timerfds, pidfds, epoll and cgroup.events fds, setup pipes, the escapees'
 * pidfds, the watchdogs' pidfds, the sampler's dirfds, and what a caller
 * such as the Python binding marks with leash_fd_private()) is marked here,
 * in one bitmap for the process, and the fork's child drops every marked fd
 * before it returns to the caller's code: a function cannot disarm its
 * job's deadline (timerfd_settime needs no permission), steal another
 * job's events from its epoll set, read another call's result pipe or
 * signal through another job's pidfd.
 *
 * Dropped, not freed: each marked number becomes a copy of one placeholder
 * (an eventfd, close-on-exec) instead of being closed. The child's copies of
 * the library's objects (a parent's config or job that the child's garbage
 * collector frees, a watchdog pool) still name those numbers and close them
 * when freed; were the numbers free, the child's own fds made since (a
 * nested call's result pipe, marked in its turn) would have them, and a
 * stale close would close those (issue 41: pynisher's nested fork-then-spawn
 * calls failed with EBADF closing their pipe). Taken by a placeholder, a
 * number cannot be handed out again, and a stale close of it finds it
 * unmarked and leaves it alone. Where no placeholder can be made (no fd
 * left), the fds are closed as before.
 *
 * One mutex orders marking against the fork: an fd is made and marked under
 * it (HELD_FD: no window in which a fork in another thread copies an fd not
 * yet marked), unmarked and closed under it, and spawn_fork holds it across
 * the clone, so that the child's copy of the bitmap is exactly the library's
 * part of its fd table. The child re-initialises the mutex (its copy was
 * locked by the parent's thread), as glibc's atfork handlers do for malloc.
 *
 * A fork that is not the library's (the caller's own fork(), os.fork) copies
 * the lock as it is: were another thread inside the registry then, the
 * child's copy stayed locked by a thread the child does not have, and its
 * first library call waited forever. So the library registers fork handlers
 * once (pthread_atfork, at its first taking of the lock): before a fork the
 * forking thread takes the lock, unless it holds it already (spawn_fork's
 * own fork), and the child's copy is made anew, as in a child of its own.
 *
 * This is libleash's one piece of process-wide state, and it is so because
 * the fd table is process-wide. Not marked: fds opened and closed within
 * one call (a cgroup file read), which a fork in another thread may copy
 * for its lifetime: read-only files and directories, whose permissions the
 * child is checked against anyway.
 */
#include "heldfd.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <leash/leash.h>

#define WORD_BITS (sizeof(unsigned long) * CHAR_BIT)

static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long *held_bits; /* bit fd: fd is held */
static size_t held_words;
static bool atfork_registered;      /* under held_lock */
static __thread bool held_here;     /* this thread holds held_lock */
static __thread bool held_for_fork; /* ... taken by fork_prepare */

static void fork_prepare(void) {
        if (held_here)
                return;
        (void) pthread_mutex_lock(&held_lock);
        held_here = held_for_fork = true;
}

static void fork_parent(void) {
        if (!held_for_fork)
                return;
        held_here = held_for_fork = false;
        (void) pthread_mutex_unlock(&held_lock);
}

/* In a child: its copy of the lock was taken by a thread it does not have
 * (or by the fork's own, which is gone too), so it is made anew. */
static void fork_child(void) {
        held_here = held_for_fork = false;
        held_lock = (pthread_mutex_t) PTHREAD_MUTEX_INITIALIZER;
}

/* Registered under the lock itself, at its first taking: no pthread_once,
 * whose futex wake would be a system call on every launch. */
void heldfd_lock(void) {
        (void) pthread_mutex_lock(&held_lock);
        held_here = true;
        if (!atfork_registered)
                atfork_registered = pthread_atfork(fork_prepare, fork_parent, fork_child) == 0;
}

void heldfd_unlock(void) {
        held_here = false;
        (void) pthread_mutex_unlock(&held_lock);
}

int heldfd_mark_locked(int fd) {
        size_t w = (size_t) fd / WORD_BITS;

        if (w >= held_words) {
                size_t n = w + 1 > held_words * 2 ? w + 1 : held_words * 2;
                unsigned long *b = realloc(held_bits, n * sizeof *b);

                if (!b)
                        return -ENOMEM;
                memset(b + held_words, 0, (n - held_words) * sizeof *b);
                held_bits = b;
                held_words = n;
        }
        held_bits[w] |= 1UL << ((size_t) fd % WORD_BITS);
        return fd;
}

int heldfd_take(int fd) {
        int r;

        if (fd < 0)
                return fd;
        heldfd_lock();
        r = heldfd_mark_locked(fd);
        heldfd_unlock();
        if (r < 0)
                close(fd);
        return r;
}

/* true when fd was marked; unmarked now */
bool heldfd_forget_locked(int fd) {
        size_t w = (size_t) fd / WORD_BITS;
        unsigned long bit = 1UL << ((size_t) fd % WORD_BITS);
        bool was;

        if (fd < 0 || w >= held_words)
                return false;
        was = held_bits[w] & bit;
        held_bits[w] &= ~bit;
        return was;
}

void heldfd_close(int fd) {
        if (fd < 0)
                return;
        heldfd_lock();
        /* not marked: a forked child's copy, closed by heldfd_child_close_all
         * already, whose number may be the caller's own fd by now */
        if (heldfd_forget_locked(fd))
                close(fd);
        heldfd_unlock();
}

void heldfd_forget(int fd) {
        if (fd < 0)
                return;
        heldfd_lock();
        (void) heldfd_forget_locked(fd);
        heldfd_unlock();
}

void heldfd_child_close_all(void) {
        /* made while every marked fd is still open: not one of their numbers */
        int placeholder = eventfd(0, EFD_CLOEXEC);

        for (size_t w = 0; w < held_words; w++)
                for (unsigned long bits = held_bits[w]; bits; bits &= bits - 1) {
                        int fd = (int) (w * WORD_BITS + (size_t) __builtin_ctzl(bits));
                        if (placeholder < 0 || dup3(placeholder, fd, O_CLOEXEC) < 0)
                                close(fd);
                }
        if (placeholder >= 0)
                close(placeholder);
        /* the copy is the child's: it owns none of these fds any more */
        if (held_words)
                memset(held_bits, 0, held_words * sizeof *held_bits);
        fork_child(); /* and the lock, a copy held by the parent's thread */
}

int leash_fd_private(int fd, bool on) {
        if (fd < 0)
                return -EBADF;
        if (!on) {
                heldfd_forget(fd);
                return 0;
        }
        heldfd_lock();
        fd = heldfd_mark_locked(fd);
        heldfd_unlock();
        return fd < 0 ? fd : 0;
}

int leash_fd_close(int fd) {
        bool was;

        if (fd < 0)
                return -EBADF;
        heldfd_lock();
        was = heldfd_forget_locked(fd);
        heldfd_unlock();
        /* the caller's fd either way: closed once, by number */
        return close(fd) < 0 && !was ? -errno : 0;
}
