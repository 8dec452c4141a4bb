/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The capabilities module: the only file that includes libcap.
 *
 * Theory of operation. A job keeps only the capabilities it asked for
 * (--caps LIST; none by default; "keep" leaves leash's own untouched). The
 * parent reads what leash holds and computes the five sets the job will have:
 *
 *   bounding     reduced to LIST first, while leash still has CAP_SETPCAP
 *                (skipped, and reported, when it does not: a non-root leash)
 *   permitted, effective, inheritable   = LIST
 *   ambient      = LIST, so that a non-root job keeps them across exec
 *
 * With --user, PR_SET_KEEPCAPS carries LIST across setresuid(); without it a
 * uid change clears permitted and effective anyway. A root-uid job with an
 * empty bounding set regains nothing at exec: exec gives uid 0 the bounding
 * set, not the full set. no_new_privs (set after this) stops setuid and
 * file-capability binaries from adding anything.
 */
#include "caps.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>

#include "../basic/macro.h"

#define BIT(c) (UINT64_C(1) << (c))

_Static_assert(CAP_SETPCAP_NUMBER == CAP_SETPCAP && CAP_SYS_ADMIN_NUMBER == CAP_SYS_ADMIN, "capability numbers");

static void cap_freep(cap_t *c) {
        if (*c)
                cap_free(*c);
}

static unsigned last_cap(void) {
        cap_value_t n = cap_max_bits();
        if (n <= 0 || n > 64)
                n = CAP_LAST_CAP + 1;
        return (unsigned) n - 1;
}

int caps_parse(const char *s, enum leash_caps_mode *ret_mode, uint64_t *ret_mask, char *ret_bad, size_t bad_size) {
        uint64_t mask = 0;
        const char *p = s;

        if (!s || !*s) {
                if (ret_bad)
                        snprintf(ret_bad, bad_size, "%s", "");
                return -EINVAL;
        }
        if (strcmp(s, "none") == 0 || strcmp(s, "keep") == 0) {
                *ret_mode = s[0] == 'n' ? LEASH_CAPS_NONE : LEASH_CAPS_KEEP;
                *ret_mask = 0;
                return 0;
        }
        while (*p) {
                size_t n = strcspn(p, ",");
                char word[64];
                cap_value_t v;
                bool bad = n == 0 || n + 5 > sizeof word;

                if (!bad) {
                        size_t off = strncasecmp(p, "cap_", 4) == 0 ? 0 : 4;
                        memcpy(word, "cap_", 4);
                        for (size_t i = 0; i < n; i++)
                                word[off + i] = (char) tolower((unsigned char) p[i]);
                        word[off + n] = '\0';
                        /* libcap also takes numbers; a user list takes names only */
                        bad = isdigit((unsigned char) word[4]) || cap_from_name(word, &v) < 0 || v < 0 || v >= 64;
                        if (!bad)
                                mask |= BIT(v);
                }
                if (bad) {
                        if (ret_bad)
                                snprintf(ret_bad, bad_size, "%.*s", (int) n, p);
                        return -EINVAL;
                }
                p += n;
                if (*p == ',' && *++p == '\0') {
                        if (ret_bad)
                                snprintf(ret_bad, bad_size, "%s", s);
                        return -EINVAL;
                }
        }
        *ret_mode = LEASH_CAPS_LIST;
        *ret_mask = mask;
        return 0;
}

void caps_name(unsigned cap, char *buf, size_t size) {
        char *n = cap_to_name((cap_value_t) cap);
        if (n && strncmp(n, "cap_", 4) == 0 && !isdigit((unsigned char) n[4]))
                snprintf(buf, size, "%s", n + 4);
        else
                snprintf(buf, size, "cap_%u", cap);
        cap_free(n);
}

void caps_format_mask(uint64_t mask, char *buf, size_t size) {
        size_t len = 0;
        buf[0] = '\0';
        for (unsigned c = 0; c < 64; c++) {
                char name[64];
                if (!(mask & BIT(c)))
                        continue;
                caps_name(c, name, sizeof name);
                len += (size_t) snprintf(buf + len, len < size ? size - len : 0, "%s%s", len ? "," : "", name);
                if (len >= size)
                        return;
        }
}

static uint64_t flag_mask(cap_t c, cap_flag_t flag, unsigned last) {
        uint64_t m = 0;
        for (unsigned i = 0; i <= last; i++) {
                cap_flag_value_t v = CAP_CLEAR;
                if (cap_get_flag(c, (cap_value_t) i, flag, &v) == 0 && v == CAP_SET)
                        m |= BIT(i);
        }
        return m;
}

bool caps_have(unsigned cap) {
        _cleanup_(cap_freep) cap_t c = cap_get_proc();
        cap_flag_value_t v = CAP_CLEAR;
        return c && cap_get_flag(c, (cap_value_t) cap, CAP_EFFECTIVE, &v) == 0 && v == CAP_SET;
}

/* PR_CAPBSET_READ for the capabilities in want only: one system call each,
 * and the sets are read on every launch. */
static uint64_t bound_mask(uint64_t want, unsigned last) {
        uint64_t m = 0;
        for (unsigned i = 0; i <= last; i++)
                if ((want & BIT(i)) && cap_get_bound((cap_value_t) i) > 0)
                        m |= BIT(i);
        return m;
}

/* The bounding set's capabilities that may be present: every one but those
 * PR_CAPBSET_READ says are absent. Each PR_CAPBSET_DROP makes and commits a
 * new set of credentials, present or not (1.2 us each on a KVM guest, a read
 * 0.18 us: bench/NOTES.md, 2026-11-29), so a reduced set (a container's:
 * docker keeps 14 of 41) is worth reading to skip the drops of the absent
 * ones. A set that still holds CAP_SYS_ADMIN (a host's root) is taken as
 * full without reading the rest: its drops are all due, or nearly. */
static uint64_t bound_present(unsigned last, uint64_t all) {
        uint64_t m = 0;

        if (cap_get_bound((cap_value_t) CAP_SYS_ADMIN) != 0)
                return all;
        for (unsigned i = 0; i <= last; i++)
                if (cap_get_bound((cap_value_t) i) != 0) /* present, or unreadable: dropped */
                        m |= BIT(i);
        return m;
}

int caps_prepare(enum leash_caps_mode mode, uint64_t mask, bool switch_uid, struct caps_plan *ret,
                 struct leash_sandbox_result *res, unsigned *ret_missing) {
        _cleanup_(cap_freep) cap_t cur = cap_get_proc();
        uint64_t eff, prm, inh, bnd, amb = 0, keep, all;
        unsigned last = last_cap();
        bool may_drop;

        if (!cur)
                return negative_errno();
        all = last >= 63 ? UINT64_MAX : BIT(last + 1) - 1;
        eff = flag_mask(cur, CAP_EFFECTIVE, last);
        prm = flag_mask(cur, CAP_PERMITTED, last);
        inh = flag_mask(cur, CAP_INHERITABLE, last);
        /* The kernel keeps ambient within permitted and inheritable (usually
         * empty: no call at all). */
        for (unsigned i = 0; i <= last; i++)
                if ((prm & inh & BIT(i)) && cap_get_ambient((cap_value_t) i) > 0)
                        amb |= BIT(i);
        /* Dropping the bounding set needs CAP_SETPCAP. When it will be dropped
         * to LIST, only LIST's part of it is worth reading: the rest goes
         * whether it is there or not (dropping an absent capability is a
         * no-op), so the default plan reads none of it, one call per
         * capability saved on every launch. */
        may_drop = mode != LEASH_CAPS_KEEP && (eff & BIT(CAP_SETPCAP));
        keep = mode == LEASH_CAPS_KEEP ? prm : mode == LEASH_CAPS_LIST ? mask : 0;
        bnd = bound_mask(may_drop ? keep & all : all, last);

        memset(ret, 0, sizeof *ret);
        ret->last_cap = last;
        if (mode == LEASH_CAPS_KEEP && !switch_uid) {
                /* untouched */
                res->cap_effective = eff;
                res->cap_permitted = prm;
                res->cap_inheritable = inh;
                res->cap_bounding = bnd;
                res->cap_ambient = amb;
                res->bounding_dropped = false;
                return 0;
        }
        if (mode == LEASH_CAPS_LIST && (mask & ~prm)) {
                for (unsigned i = 0; i < 64; i++)
                        if (mask & ~prm & BIT(i)) {
                                *ret_missing = i;
                                break;
                        }
                return -EPERM;
        }
        ret->keep = keep;
        ret->drop_bounding = may_drop;
        ret->bset = may_drop ? bound_present(last, all) : 0;
        ret->keepcaps = switch_uid && keep;
        /* Nothing held, nothing to drop (a non-root leash, the usual case):
         * the child does nothing at all. */
        ret->act = eff || prm || inh || amb || ret->drop_bounding;

        if (ret->act) {
                /* the current sets, read above, cleared into the target: a
                 * cap_init() would ask the kernel's version again (capget) */
                if (cap_clear(cur) < 0)
                        return negative_errno();
                for (unsigned i = 0; i <= last; i++) {
                        cap_value_t v = (cap_value_t) i;
                        if (!(keep & BIT(i)))
                                continue;
                        if (cap_set_flag(cur, CAP_EFFECTIVE, 1, &v, CAP_SET) < 0 ||
                            cap_set_flag(cur, CAP_PERMITTED, 1, &v, CAP_SET) < 0 ||
                            cap_set_flag(cur, CAP_INHERITABLE, 1, &v, CAP_SET) < 0)
                                return negative_errno();
                }
                ret->target = TAKE_PTR(cur);
        }
        res->cap_effective = res->cap_permitted = res->cap_inheritable = res->cap_ambient = keep;
        /* bnd is LIST's part only when dropping, the whole set otherwise */
        res->cap_bounding = ret->drop_bounding ? (bnd & keep) : bnd;
        res->bounding_dropped = ret->drop_bounding || !(bnd & ~keep);
        return 0;
}

void caps_plan_done(struct caps_plan *p) {
        if (p->target)
                cap_free(p->target);
        p->target = NULL;
}

int caps_child_bounding(const struct caps_plan *p) {
        if (!p->act)
                return 0;
        if (p->drop_bounding)
                for (unsigned i = 0; i <= p->last_cap; i++)
                        if ((p->bset & ~p->keep & BIT(i)) && cap_drop_bound((cap_value_t) i) < 0)
                                return negative_errno();
        if (p->keepcaps && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
                return negative_errno();
        return 0;
}

int caps_child_apply(const struct caps_plan *p) {
        if (!p->act)
                return 0;
        if (cap_set_proc(p->target) < 0)
                return negative_errno();
        /* One call (libcap's cap_reset_ambient reads every capability's
         * ambient bit first); EINVAL: a kernel without ambient sets (< 4.3). */
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
                return negative_errno();
        for (unsigned i = 0; i <= p->last_cap; i++)
                if ((p->keep & BIT(i)) && cap_set_ambient((cap_value_t) i, CAP_SET) < 0)
                        return negative_errno();
        if (p->keepcaps && prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
                return negative_errno();
        return 0;
}
