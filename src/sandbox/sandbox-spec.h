/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the sandbox is asked for and what it gave the job: the part of the
 * job spec (struct leash_sandbox) and of the result (struct
 * leash_sandbox_result) the sandbox adapters read and fill, and the filter
 * sets' bits. Here, below the engine, so the adapters need no engine header;
 * the engine's leash.h includes it. Types only: it declares no function of
 * its own but the names of filter.c's sets and actions.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <leash/leash.h>

/* Syscall filter sets (--seccomp), see docs/security.md for each list. */
enum {
        LEASH_FILTER_NO_NETWORK = 1 << 0,
        LEASH_FILTER_NO_PTRACE = 1 << 1,
        LEASH_FILTER_NO_NAMESPACES = 1 << 2,
        LEASH_FILTER_NO_KERNEL = 1 << 3,
};
#define LEASH_FILTER_COUNT 4

enum leash_seccomp_action { LEASH_SECCOMP_ERRNO, LEASH_SECCOMP_KILL, LEASH_SECCOMP_LOG };
enum leash_caps_mode { LEASH_CAPS_NONE, LEASH_CAPS_KEEP, LEASH_CAPS_LIST };

/* What the job may do and what it starts with (identity, capabilities,
 * no_new_privs, syscall filters, environment). Applied in the child in the
 * order: rlimits, groups/gid/uid, chdir, stdin, fds, capabilities,
 * no_new_privs, seccomp, exec. */
struct leash_sandbox {
        const char *user;  /* name or uid; NULL = leash's own */
        const char *group; /* name or gid; NULL = the user's primary group */
        bool no_supplementary_groups;
        bool allow_new_privs;
        enum leash_caps_mode caps_mode;
        uint64_t caps_keep; /* with LEASH_CAPS_LIST: bit N = capability N */
        unsigned seccomp;   /* LEASH_FILTER_* */
        enum leash_seccomp_action seccomp_action;
        bool clean_env;
        char *const *env_set; /* "K=V", applied after env_unset */
        size_t n_env_set;
        char *const *env_unset;
        size_t n_env_unset;
        char *const *env_first; /* "K=V" set before env_set (the engine's: --gpus) */
        size_t n_env_first;
        const char *chdir;
        bool no_stdin;
        bool keep_fds;
        bool isolate; /* own pid and mount namespaces under an init (isolate.c) */
};

#define LEASH_GROUPS_MAX 64

/* What the job was given, as leash set it just before exec. */
struct leash_sandbox_result {
        bool applied; /* false when the job never got that far */
        uid_t uid;
        gid_t gid;
        gid_t groups[LEASH_GROUPS_MAX];
        unsigned n_groups;
        bool identity_switched;
        bool no_new_privs;
        /* capability sets at exec, bit N = capability N */
        uint64_t cap_effective, cap_permitted, cap_inheritable, cap_bounding, cap_ambient;
        bool bounding_dropped; /* false: leash could not (no CAP_SETPCAP) */
        unsigned seccomp;      /* LEASH_FILTER_* loaded */
        unsigned filter_instructions;
};

/* "no-network", ...; NULL for a bit that is not one set */
const char *leash_filter_to_string(unsigned set);
const char *leash_seccomp_action_to_string(enum leash_seccomp_action a);
