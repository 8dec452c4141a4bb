/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Capabilities: the libcap adapter. The parent decides every set the job
 * will have (caps_prepare); the child applies them in two steps around the
 * identity switch (caps_child_bounding before, caps_child_apply after).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sandbox-spec.h"

/* "none", "keep", or a comma-separated list of names with or without the
 * cap_ prefix, any case ("net_bind_service,CAP_CHOWN"). On -EINVAL,
 * ret_bad holds the word that is not a capability. */
int caps_parse(const char *s, enum leash_caps_mode *ret_mode, uint64_t *ret_mask, char *ret_bad, size_t bad_size);

/* "net_bind_service"; "cap_42" for a number libcap does not name. */
void caps_name(unsigned cap, char *buf, size_t size);
/* "chown,net_bind_service" or "" for an empty mask */
void caps_format_mask(uint64_t mask, char *buf, size_t size);

struct caps_plan {
        bool act;           /* false: leave every set as it is */
        bool drop_bounding; /* leash holds CAP_SETPCAP */
        bool keepcaps;      /* keep permitted caps across setresuid */
        uint64_t keep;
        uint64_t bset; /* drop_bounding: the bounding set's capabilities not known absent (what the child drops) */
        unsigned last_cap;
        void *target; /* cap_t: E = P = I = keep */
};

/* In the parent. switch_uid: the child will setresuid away from root.
 * Fills the capability fields of res with what the job gets at exec.
 * -EPERM with ret_missing set when LIST asks for a capability leash does not
 * hold (its number in *ret_missing). */
int caps_prepare(enum leash_caps_mode mode, uint64_t mask, bool switch_uid, struct caps_plan *ret,
                 struct leash_sandbox_result *res, unsigned *ret_missing);
void caps_plan_done(struct caps_plan *p);

/* In the child, before the identity switch: bounding set, keepcaps. */
int caps_child_bounding(const struct caps_plan *p);
/* In the child, after it: effective, permitted, inheritable, ambient. */
int caps_child_apply(const struct caps_plan *p);

/* Capability numbers are ABI; named here so callers need no libcap header. */
#define CAP_SETPCAP_NUMBER 8
#define CAP_SYS_ADMIN_NUMBER 21

/* Whether leash holds cap in its effective set (for `leash check`). */
bool caps_have(unsigned cap);
