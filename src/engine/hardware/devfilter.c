/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cgroup device program.
 *
 * On cgroup v2 the only device control is a BPF_PROG_TYPE_CGROUP_DEVICE
 * program attached to the cgroup (attach type BPF_CGROUP_DEVICE): the
 * kernel runs it at every open(2) and mknod(2) of a device node by a
 * process of the cgroup, with struct bpf_cgroup_dev_ctx (access << 16 |
 * type, major, minor), and refuses with EPERM when it returns 0. The
 * program here loads the three fields once, then tests each rule in turn:
 * type, major, minor (each skipped when the rule matches any) and whether
 * the access asked for is inside the rule's; the first rule that matches
 * returns its verdict, and the end returns the default.
 *
 * Attached with BPF_F_ALLOW_MULTI: programs of a cgroup and of all its
 * ancestors attached that way all run, and an access passes only when every
 * one allows it. A job that makes sub-cgroups and moves into them therefore
 * stays under this program, and a program the job might attach there can
 * only refuse more (flags 0 would refuse any program below, which would
 * break a leash nested in the job).
 *
 * Loading needs CAP_BPF (or CAP_SYS_ADMIN) and attaching CAP_NET_ADMIN (or
 * CAP_SYS_ADMIN) over a cgroup fd: in practice, root. The program fd is
 * closed once attached; the cgroup keeps the program until it is removed.
 */
#include "devfilter.h"

#include <errno.h>
#include <linux/bpf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../basic/macro.h"

/* registers: r1 the context; r3 type, r4 access, r5 major, r6 minor; r7 scratch */
enum { R0, R1, R2, R3, R4, R5, R6, R7 };

static struct bpf_insn insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm) {
        return (struct bpf_insn){.code = code, .dst_reg = dst, .src_reg = src, .off = off, .imm = imm};
}

/* the preamble: the context's three fields into r3..r6 (32-bit loads and
 * ALU32 operations zero the upper halves, so 64-bit compares are exact) */
static size_t emit_preamble(struct bpf_insn *p) {
        size_t n = 0;
        p[n++] = insn(BPF_LDX | BPF_W | BPF_MEM, R2, R1, offsetof(struct bpf_cgroup_dev_ctx, access_type), 0);
        p[n++] = insn(BPF_ALU | BPF_MOV | BPF_X, R3, R2, 0, 0);
        p[n++] = insn(BPF_ALU | BPF_AND | BPF_K, R3, 0, 0, 0xffff);
        p[n++] = insn(BPF_ALU | BPF_MOV | BPF_X, R4, R2, 0, 0);
        p[n++] = insn(BPF_ALU | BPF_RSH | BPF_K, R4, 0, 0, 16);
        p[n++] = insn(BPF_LDX | BPF_W | BPF_MEM, R5, R1, offsetof(struct bpf_cgroup_dev_ctx, major), 0);
        p[n++] = insn(BPF_LDX | BPF_W | BPF_MEM, R6, R1, offsetof(struct bpf_cgroup_dev_ctx, minor), 0);
        return n;
}
#define PREAMBLE_LEN 7

static size_t rule_len(const struct devfilter_rule *r) {
        return (r->type != DEVFILTER_ANY_TYPE) + (r->major != DEVFILTER_ANY) + (r->minor != DEVFILTER_ANY) +
               ((r->access & DEVFILTER_ALL) != DEVFILTER_ALL ? 3 : 0) + 2;
}

/* One rule: each test jumps past the rest of the rule when it fails. */
static size_t emit_rule(const struct devfilter_rule *r, struct bpf_insn *p) {
        size_t len = rule_len(r), n = 0;
#define SKIP ((int16_t) (len - n - 1))
        if (r->type != DEVFILTER_ANY_TYPE) {
                p[n] = insn(BPF_JMP | BPF_JNE | BPF_K, R3, 0, SKIP, r->type);
                n++;
        }
        if (r->major != DEVFILTER_ANY) {
                p[n] = insn(BPF_JMP | BPF_JNE | BPF_K, R5, 0, SKIP, (int32_t) r->major);
                n++;
        }
        if (r->minor != DEVFILTER_ANY) {
                p[n] = insn(BPF_JMP | BPF_JNE | BPF_K, R6, 0, SKIP, (int32_t) r->minor);
                n++;
        }
        if ((r->access & DEVFILTER_ALL) != DEVFILTER_ALL) {
                /* any bit asked for outside the rule's: no match */
                p[n++] = insn(BPF_ALU | BPF_MOV | BPF_X, R7, R4, 0, 0);
                p[n++] = insn(BPF_ALU | BPF_AND | BPF_K, R7, 0, 0, ~(int32_t) r->access);
                p[n] = insn(BPF_JMP | BPF_JNE | BPF_K, R7, 0, SKIP, 0);
                n++;
        }
#undef SKIP
        p[n++] = insn(BPF_ALU64 | BPF_MOV | BPF_K, R0, 0, 0, r->allow);
        p[n++] = insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
        return n;
}

int devfilter_build(const struct devfilter *f, void **ret_insns, size_t *ret_len) {
        size_t len = PREAMBLE_LEN + 2, n;
        struct bpf_insn *p;

        for (size_t i = 0; i < f->n; i++) {
                if (f->rules[i].major > 0xfffffff && f->rules[i].major != DEVFILTER_ANY)
                        return -EINVAL;
                if (f->rules[i].minor > 0xfffffff && f->rules[i].minor != DEVFILTER_ANY)
                        return -EINVAL;
                len += rule_len(&f->rules[i]);
        }
        if (len > BPF_MAXINSNS)
                return -E2BIG;
        p = calloc(len, sizeof *p);
        if (!p)
                return -ENOMEM;
        n = emit_preamble(p);
        for (size_t i = 0; i < f->n; i++) {
                n += emit_rule(&f->rules[i], p + n);
                /* a rule matching everything ends the program: the verifier
                 * refuses instructions that cannot be reached */
                if (rule_len(&f->rules[i]) == 2) {
                        *ret_insns = p;
                        *ret_len = n;
                        return 0;
                }
        }
        p[n++] = insn(BPF_ALU64 | BPF_MOV | BPF_K, R0, 0, 0, f->default_allow);
        p[n++] = insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
        *ret_insns = p;
        *ret_len = n;
        return 0;
}

bool devfilter_verdict(const struct devfilter *f, uint8_t type, uint32_t major, uint32_t minor, uint8_t access) {
        for (size_t i = 0; i < f->n; i++) {
                const struct devfilter_rule *r = &f->rules[i];
                if (r->type != DEVFILTER_ANY_TYPE && r->type != type)
                        continue;
                if ((r->major != DEVFILTER_ANY && r->major != major) ||
                    (r->minor != DEVFILTER_ANY && r->minor != minor))
                        continue;
                if (access & ~r->access & DEVFILTER_ALL)
                        continue;
                return r->allow;
        }
        return f->default_allow;
}

static int bpf_call(int cmd, union bpf_attr *attr) {
        long r = syscall(__NR_bpf, cmd, attr, sizeof *attr);
        return r < 0 ? negative_errno() : (int) r;
}

static int prog_load(const void *insns, size_t len) {
        union bpf_attr attr;

        memset(&attr, 0, sizeof attr);
        attr.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
        attr.insns = (uint64_t) (uintptr_t) insns;
        attr.insn_cnt = (uint32_t) len;
        attr.license = (uint64_t) (uintptr_t) "GPL"; /* no helper is called: the string is a formality */
        /* bpf(2) fds are O_CLOEXEC always */
        return bpf_call(BPF_PROG_LOAD, &attr);
}

int devfilter_attach(int cgroup_fd, const struct devfilter *f) {
        _cleanup_free_ void *insns = NULL;
        _cleanup_close_ int prog = -EBADF;
        union bpf_attr attr;
        size_t len;
        int r;

        r = devfilter_build(f, &insns, &len);
        if (r < 0)
                return r;
        prog = prog_load(insns, len);
        if (prog < 0)
                return prog;
        memset(&attr, 0, sizeof attr);
        attr.target_fd = (uint32_t) cgroup_fd;
        attr.attach_bpf_fd = (uint32_t) prog;
        attr.attach_type = BPF_CGROUP_DEVICE;
        attr.attach_flags = BPF_F_ALLOW_MULTI;
        r = bpf_call(BPF_PROG_ATTACH, &attr);
        return r < 0 ? r : (int) len;
}

int devfilter_probe(void) {
        static const struct devfilter allow_all = {.default_allow = true};
        _cleanup_free_ void *insns = NULL;
        size_t len;
        int r, prog;

        r = devfilter_build(&allow_all, &insns, &len);
        if (r < 0)
                return r;
        prog = prog_load(insns, len);
        if (prog < 0)
                return prog;
        close(prog);
        return 0;
}
