/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cgroup device program (--devices, --gpus): an ordered list of rules
 * compiled into a BPF_PROG_TYPE_CGROUP_DEVICE program, loaded with raw
 * bpf(2) and attached to the job cgroup (devfilter.c). No libbpf: the
 * program is a handful of compares, built here instruction by instruction.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DEVFILTER_ANY UINT32_MAX /* a major or minor that matches every number */

/* the kernel's BPF_DEVCG_ACC_* bits */
enum { DEVFILTER_MKNOD = 1, DEVFILTER_READ = 2, DEVFILTER_WRITE = 4, DEVFILTER_ALL = 7 };
/* the kernel's BPF_DEVCG_DEV_* values; 0 = both */
enum { DEVFILTER_ANY_TYPE = 0, DEVFILTER_BLOCK = 1, DEVFILTER_CHAR = 2 };

struct devfilter_rule {
        uint8_t type;   /* DEVFILTER_CHAR, DEVFILTER_BLOCK or DEVFILTER_ANY_TYPE */
        uint8_t access; /* DEVFILTER_* bits the rule covers: an access asking for more does not match */
        bool allow;     /* the verdict when the rule matches */
        uint32_t major, minor;
};

/* The first matching rule decides; no rule matching: default_allow. */
struct devfilter {
        const struct devfilter_rule *rules;
        size_t n;
        bool default_allow;
};

/* Builds the program: a malloc'd array of struct bpf_insn (as uint64_t
 * pairs: the caller never looks inside) and its length. */
int devfilter_build(const struct devfilter *f, void **ret_insns, size_t *ret_len);

/* The verdict the program gives (for the unit tests: the same walk as the
 * program, in C). */
bool devfilter_verdict(const struct devfilter *f, uint8_t type, uint32_t major, uint32_t minor, uint8_t access);

/* Loads the program and attaches it to the cgroup (a directory fd) with
 * BPF_F_ALLOW_MULTI, so that a sub-cgroup's programs only add refusals.
 * Returns the number of instructions, or -errno (EPERM: no CAP_BPF and
 * CAP_SYS_ADMIN; EINVAL/ENOSYS: no cgroup device programs here). */
int devfilter_attach(int cgroup_fd, const struct devfilter *f);

/* Whether this process could load a device program here: 0, or -errno. */
int devfilter_probe(void);
