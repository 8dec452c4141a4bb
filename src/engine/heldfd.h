/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The descriptors libleash holds, process-wide, so that a child made by
 * leash_job_fork() has none of them (heldfd.c).
 */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <unistd.h>

/* The lock that orders making, marking and closing held fds against a fork. */
void heldfd_lock(void);
void heldfd_unlock(void);

/* Marks fd (>= 0), the lock held: fd, or -ENOMEM (fd left as it is). */
int heldfd_mark_locked(int fd);

/* Marks fd made by a helper (the lock taken here); fd < 0 is passed
 * through. Returns fd, or -ENOMEM with fd closed. */
int heldfd_take(int fd);

/* Unmarks and closes fd (< 0: nothing), under the lock; an fd not marked is
 * left alone: in a forked child the library's copies are dropped already
 * (placeholders hold their numbers), and an unmarked number may be the
 * caller's own fd. */
void heldfd_close(int fd);

/* Unmarks fd without closing it (the caller closes it). */
void heldfd_forget(int fd);
bool heldfd_forget_locked(int fd); /* true when it was marked */

/* fd = expr made and marked under the lock: no fork in another thread
 * copies it unmarked. errno is expr's when it failed. */
#define HELD_FD(expr)                                                    \
        ({                                                               \
                int held_fd_;                                            \
                heldfd_lock();                                           \
                held_fd_ = (expr);                                       \
                if (held_fd_ >= 0 && heldfd_mark_locked(held_fd_) < 0) { \
                        close(held_fd_);                                 \
                        held_fd_ = -1;                                   \
                        errno = ENOMEM;                                  \
                }                                                        \
                heldfd_unlock();                                         \
                held_fd_;                                                \
        })

/* In the child of a fork made with the lock held: drops every marked fd
 * (its number kept by a close-on-exec placeholder, so that no fd the child
 * makes gets it while the library's copied objects still name it) and
 * starts an empty, unlocked registry. Async-signal-safe. */
void heldfd_child_close_all(void);
