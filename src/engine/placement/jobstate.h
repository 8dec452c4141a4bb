/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The job's record: one extended attribute on the job cgroup, written by
 * leash right after mkdir, that is both the sweep's mark (sweep.c)
 * and what `leash ps`, `stat` and `top` know about a job beyond the cgroup's
 * own files: who started it, when, under which limits. It lives exactly as
 * long as the cgroup (nothing to clean up, nothing to go stale) and costs one
 * fsetxattr on the launch path.
 *
 * The value is one line of space-separated key=value fields. The first two
 * are the sweep's mark and keep its grammar; the rest are the record:
 *   pid=123 pidns=4026531836 v=1 uid=0 started_ns=1732350000123456789
 *   name=job memory=1073741824 wall_time=90000000000 sample_ns=100000000
 *   limit.disk=10485760
 * (limits in the units of enum leash_limit, measured limits in the figure's
 * unit; keys this version does not know are ignored, a malformed value makes
 * the whole record untrusted).
 *
 * Which attribute, and whom to believe: a leash with CAP_SYS_ADMIN writes
 * trusted.leash, which only CAP_SYS_ADMIN can write or read, so a job that
 * dropped it (the default for root jobs) cannot forge it, even as uid 0 on a
 * root-owned directory. An unprivileged leash (or root without CAP_SYS_ADMIN)
 * writes user.leash, which anyone who may write the directory can forge: it
 * is believed only on a directory owned by the reader's own uid, by a reader
 * that is not root. jobstate_read() is the one place that decides.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../leash.h"

#define JOBSTATE_XATTR_TRUSTED "trusted.leash"
#define JOBSTATE_XATTR_USER "user.leash"
#define JOBSTATE_MAX 2048 /* bytes of the value */

struct jobstate {
        pid_t pid;                /* the leash that made the cgroup (the sweep's mark) */
        unsigned long long pidns; /* inode of its pid namespace */
        bool record;              /* more than the mark: v=1 fields follow */
        uid_t uid;                /* who ran leash */
        uint64_t started_ns;      /* CLOCK_REALTIME when the cgroup was made */
        char name[80];            /* the job name */
        uint64_t limit[_LEASH_LIMIT_MAX];
        unsigned limit_set;              /* bit l: limit[l] was given */
        uint64_t mlimit[_LEASH_FIG_MAX]; /* measured limits (--limit), 0 = none */
        uint64_t sample_ns;              /* --sample interval, 0 = none */
        bool trusted;                    /* read from trusted.leash */
};

/* The value for a job of spec named name (the job name, not the directory),
 * made by pid in pid namespace pidns at started_ns. */
int jobstate_format(const struct leash_spec *spec, const char *name, pid_t pid, unsigned long long pidns, uid_t uid,
                    uint64_t started_ns, char *buf, size_t size);
int jobstate_parse(const char *text, struct jobstate *ret);
/* The inode of our own pid namespace. */
int jobstate_own_pidns(unsigned long long *ret);
/* Writes the record on a job cgroup just made (pidns: from
 * jobstate_own_pidns): trusted.leash when the kernel lets us, else
 * user.leash. A failure only means the job is never swept and `leash ps`
 * knows less about it. */
int jobstate_write(int job_fd, const struct leash_spec *spec, const char *name, unsigned long long pidns);
/* The record this reader may believe (see above); -ENODATA when none. */
int jobstate_read(int job_fd, struct jobstate *ret);
