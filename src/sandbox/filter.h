/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Syscall filters: the libseccomp adapter. The named sets are built in the
 * parent into a classic-BPF program (exported from libseccomp), so the child
 * only has to hand that program to the kernel, with no library call between
 * clone and exec.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "sandbox-spec.h"

/* One forbidden call of a set, as documented. */
struct filter_rule {
        const char *syscall;
        const char *when; /* NULL = always, else the argument condition in words */
};

/* The rules of one set (LEASH_FILTER_*), terminated by {NULL}. */
const struct filter_rule *filter_set_rules(unsigned set);

/* "no-network,no-ptrace" -> LEASH_FILTER_* mask. "none" (alone) is 0. On
 * -EINVAL, ret_bad (if given) holds the word that is not a set. */
int filter_parse_sets(const char *list, unsigned *ret_sets, char *ret_bad, size_t bad_size);
/* "errno", "kill", "log" */
int filter_parse_action(const char *s, enum leash_seccomp_action *ret);

struct filter_program {
        void *insns; /* struct sock_filter[] */
        unsigned short len;
};

/* Builds the filter for sets and action for the native ABI and its compat
 * ABIs (on x86-64: x86 (int 0x80) and x32). -errno, libseccomp's included. */
int filter_build(unsigned sets, enum leash_seccomp_action action, struct filter_program *ret);
void filter_program_done(struct filter_program *p);

/* In the child: load the prepared program (needs no_new_privs or
 * CAP_SYS_ADMIN). Async-signal-safe. */
int filter_load(const struct filter_program *p);

/* Whether this kernel has seccomp filter mode, and which actions it offers
 * (the text of /proc/sys/kernel/seccomp/actions_avail, "" if unknown). */
int filter_available(char *ret_actions, size_t size);

/* "x86_64 x86 x32": the ABIs filter_build covers here. */
const char *filter_arch_names(void);
