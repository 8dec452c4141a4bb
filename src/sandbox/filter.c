/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The syscall-filter module: the only file that includes libseccomp.
 *
 * Theory of operation. Each named set is a short list of syscalls a job is
 * denied, some only for certain arguments. filter_build() turns the chosen
 * sets into one libseccomp context whose default is "allow", adds the compat
 * ABIs of the native architecture (on x86-64: x86 for int 0x80, and x32) so
 * that a 32-bit syscall number cannot walk around a 64-bit rule, and exports
 * the result as classic BPF into a memfd, read back into memory. That is all
 * done in the parent, before clone: the child only calls prctl(PR_SET_SECCOMP)
 * with the prepared program, as the very last step before exec.
 *
 * Arguments that live in memory cannot be inspected by seccomp. Two cases
 * matter here and are decided, not hoped about:
 *   - socketcall(2), the i386 multiplexer, carries socket()'s domain in
 *     memory: under no-network it is denied whole (i386 programs that use
 *     socketcall for AF_UNIX fail too; modern i386 libcs call socket(2)).
 *   - clone3(2) carries its flags in memory: under no-namespaces it fails
 *     with ENOSYS (whatever the action), so libc falls back to clone(2),
 *     whose flags are filtered. Threads keep working.
 * io_uring can open sockets without socket(2) (IORING_OP_SOCKET), so
 * no-network denies io_uring_setup/enter/register as well.
 *
 * Every set also denies ioctl(TIOCSTI) and ioctl(TIOCLINUX): pushing input
 * into a terminal (or a VT's selection) is how a sandboxed job runs commands
 * in the shell that started it (bubblewrap's CVE-2017-5226). The job has no
 * controlling terminal (its own session, spawn.c), but a job that keeps
 * CAP_SYS_ADMIN may use TIOCSTI on any terminal fd it holds. The request is
 * compared on its low 32 bits only, as the kernel reads it (an unsigned int):
 * garbage in the upper half of the register must not walk around the rule.
 */
#include "filter.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../basic/fileio.h"
#include "../basic/macro.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

enum {
        COND_ALWAYS,
        COND_DOMAIN_NOT_UNIX, /* arg0 != AF_UNIX */
        COND_CLONE_NS,        /* arg0 has any CLONE_NEW* flag clone(2) accepts */
        COND_UNSHARE_NS,      /* arg0 has any CLONE_NEW* flag, CLONE_NEWTIME too */
        COND_ENOSYS,          /* always, but fails with ENOSYS (clone3) */
        COND_TTY_INJECT,      /* ioctl: arg1 is TIOCSTI or TIOCLINUX (every set) */
};

struct rule {
        const char *syscall;
        int cond;
};

static const struct rule no_network[] = {
        {"socket", COND_DOMAIN_NOT_UNIX}, {"socketpair", COND_DOMAIN_NOT_UNIX},
        {"socketcall", COND_ALWAYS},      {"io_uring_setup", COND_ALWAYS},
        {"io_uring_enter", COND_ALWAYS},  {"io_uring_register", COND_ALWAYS},
        {"ioctl", COND_TTY_INJECT},       {NULL, 0},
};
static const struct rule no_ptrace[] = {
        {"ptrace", COND_ALWAYS},
        {"process_vm_readv", COND_ALWAYS},
        {"process_vm_writev", COND_ALWAYS},
        {"process_madvise", COND_ALWAYS},
        {"pidfd_getfd", COND_ALWAYS},
        {"kcmp", COND_ALWAYS},
        {"ioctl", COND_TTY_INJECT},
        {NULL, 0},
};
static const struct rule no_namespaces[] = {
        {"unshare", COND_UNSHARE_NS},
        {"clone", COND_CLONE_NS},
        {"clone3", COND_ENOSYS},
        {"setns", COND_ALWAYS},
        {"mount", COND_ALWAYS},
        {"umount", COND_ALWAYS},
        {"umount2", COND_ALWAYS},
        {"pivot_root", COND_ALWAYS},
        {"fsopen", COND_ALWAYS},
        {"fsconfig", COND_ALWAYS},
        {"fsmount", COND_ALWAYS},
        {"fspick", COND_ALWAYS},
        {"move_mount", COND_ALWAYS},
        {"open_tree", COND_ALWAYS},
        {"mount_setattr", COND_ALWAYS},
        {"ioctl", COND_TTY_INJECT},
        {NULL, 0},
};
static const struct rule no_kernel[] = {
        {"init_module", COND_ALWAYS},
        {"finit_module", COND_ALWAYS},
        {"delete_module", COND_ALWAYS},
        {"kexec_load", COND_ALWAYS},
        {"kexec_file_load", COND_ALWAYS},
        {"bpf", COND_ALWAYS},
        {"perf_event_open", COND_ALWAYS},
        {"reboot", COND_ALWAYS},
        {"swapon", COND_ALWAYS},
        {"swapoff", COND_ALWAYS},
        {"acct", COND_ALWAYS},
        {"iopl", COND_ALWAYS},
        {"ioperm", COND_ALWAYS},
        {"syslog", COND_ALWAYS},
        {"userfaultfd", COND_ALWAYS},
        {"add_key", COND_ALWAYS},
        {"request_key", COND_ALWAYS},
        {"keyctl", COND_ALWAYS},
        {"ioctl", COND_TTY_INJECT},
        {NULL, 0},
};

static const struct {
        unsigned bit;
        const char *name;
        const struct rule *rules;
} sets[LEASH_FILTER_COUNT] = {
        {LEASH_FILTER_NO_NETWORK, "no-network", no_network},
        {LEASH_FILTER_NO_PTRACE, "no-ptrace", no_ptrace},
        {LEASH_FILTER_NO_NAMESPACES, "no-namespaces", no_namespaces},
        {LEASH_FILTER_NO_KERNEL, "no-kernel", no_kernel},
};

static const char *cond_text(int cond) {
        switch (cond) {
        case COND_DOMAIN_NOT_UNIX:
                return "domain is not AF_UNIX";
        case COND_CLONE_NS:
                return "flags include a CLONE_NEW* namespace flag";
        case COND_UNSHARE_NS:
                return "flags include a CLONE_NEW* namespace flag";
        case COND_ENOSYS:
                return "always, with ENOSYS (flags are in memory; libc falls back to clone)";
        case COND_TTY_INJECT:
                return "request is TIOCSTI or TIOCLINUX (terminal input injection; in every set)";
        }
        return NULL;
}

const char *leash_filter_to_string(unsigned set) {
        for (size_t i = 0; i < ELEMENTSOF(sets); i++)
                if (sets[i].bit == set)
                        return sets[i].name;
        return NULL;
}

const char *leash_seccomp_action_to_string(enum leash_seccomp_action a) {
        switch (a) {
        case LEASH_SECCOMP_ERRNO:
                return "errno";
        case LEASH_SECCOMP_KILL:
                return "kill";
        case LEASH_SECCOMP_LOG:
                return "log";
        }
        return "unknown";
}

const struct filter_rule *filter_set_rules(unsigned set) {
        /* built once from the internal table, with the conditions in words */
        static struct filter_rule out[LEASH_FILTER_COUNT][24];
        for (size_t i = 0; i < ELEMENTSOF(sets); i++) {
                if (sets[i].bit != set)
                        continue;
                for (size_t j = 0; sets[i].rules[j].syscall; j++)
                        out[i][j] = (struct filter_rule){sets[i].rules[j].syscall, cond_text(sets[i].rules[j].cond)};
                return out[i];
        }
        return NULL;
}

int filter_parse_sets(const char *list, unsigned *ret_sets, char *ret_bad, size_t bad_size) {
        unsigned mask = 0;
        const char *p = list;

        if (!list || !*list)
                goto bad;
        if (strcmp(list, "none") == 0) {
                *ret_sets = 0;
                return 0;
        }
        while (*p) {
                size_t n = strcspn(p, ",");
                bool found = false;
                for (size_t i = 0; i < ELEMENTSOF(sets); i++)
                        if (strlen(sets[i].name) == n && strncmp(p, sets[i].name, n) == 0) {
                                mask |= sets[i].bit;
                                found = true;
                        }
                if (!found) {
                        if (ret_bad)
                                snprintf(ret_bad, bad_size, "%.*s", (int) n, p);
                        return -EINVAL;
                }
                p += n;
                if (*p == ',' && *++p == '\0')
                        goto bad; /* trailing comma */
        }
        *ret_sets = mask;
        return 0;
bad:
        if (ret_bad)
                snprintf(ret_bad, bad_size, "%s", list ? list : "");
        return -EINVAL;
}

int filter_parse_action(const char *s, enum leash_seccomp_action *ret) {
        if (!s)
                return -EINVAL;
        if (strcmp(s, "errno") == 0)
                *ret = LEASH_SECCOMP_ERRNO;
        else if (strcmp(s, "kill") == 0)
                *ret = LEASH_SECCOMP_KILL;
        else if (strcmp(s, "log") == 0)
                *ret = LEASH_SECCOMP_LOG;
        else
                return -EINVAL;
        return 0;
}

static void ctx_releasep(scmp_filter_ctx *ctx) {
        if (*ctx)
                seccomp_release(*ctx);
}

static int add_compat_arches(scmp_filter_ctx ctx) {
        int r = 0;
#if defined(__x86_64__)
        r = seccomp_arch_add(ctx, SCMP_ARCH_X86);
        if (r < 0 && r != -EEXIST)
                return r;
        r = seccomp_arch_add(ctx, SCMP_ARCH_X32);
#elif defined(__aarch64__)
        r = seccomp_arch_add(ctx, SCMP_ARCH_ARM);
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        r = seccomp_arch_add(ctx, SCMP_ARCH_PPC);
#elif defined(__s390x__)
        r = seccomp_arch_add(ctx, SCMP_ARCH_S390);
#endif
        return r == -EEXIST ? 0 : r;
}

const char *filter_arch_names(void) {
#if defined(__x86_64__)
        return "x86_64 x86 x32";
#elif defined(__aarch64__)
        return "aarch64 arm";
#else
        return "native";
#endif
}

static int add_rule(scmp_filter_ctx ctx, uint32_t action, const struct rule *rule) {
        static const uint64_t ns_flags[] = {CLONE_NEWNS,   CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
                                            CLONE_NEWUSER, CLONE_NEWPID,    CLONE_NEWNET, CLONE_NEWTIME};
        int nr = seccomp_syscall_resolve_name(rule->syscall);
        size_t n_flags = ELEMENTSOF(ns_flags);
        int r;

        if (nr == __NR_SCMP_ERROR)
                return -ENOSYS; /* a name this libseccomp does not know: a defect, say so */
        switch (rule->cond) {
        case COND_ALWAYS:
                return seccomp_rule_add(ctx, action, nr, 0);
        case COND_ENOSYS:
                return seccomp_rule_add(ctx, action == SCMP_ACT_LOG ? action : SCMP_ACT_ERRNO(ENOSYS), nr, 0);
        case COND_DOMAIN_NOT_UNIX:
                return seccomp_rule_add(ctx, action, nr, 1, SCMP_A0(SCMP_CMP_NE, AF_UNIX));
        case COND_TTY_INJECT:
                r = seccomp_rule_add(ctx, action, nr, 1, SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffU, TIOCSTI));
                if (r < 0)
                        return r;
                return seccomp_rule_add(ctx, action, nr, 1, SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffU, TIOCLINUX));
        case COND_CLONE_NS:
                n_flags--; /* CLONE_NEWTIME's bit is CSIGNAL's in clone(2): clone3/unshare only */
                _fallthrough_;
        case COND_UNSHARE_NS:
                /* one rule per flag: seccomp can test "all of mask", not "any of mask" */
                for (size_t i = 0; i < n_flags; i++) {
                        r = seccomp_rule_add(ctx, action, nr, 1, SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]));
                        if (r < 0)
                                return r;
                }
                return 0;
        }
        return -EINVAL;
}

int filter_build(unsigned sets_mask, enum leash_seccomp_action action, struct filter_program *ret) {
        _cleanup_(ctx_releasep) scmp_filter_ctx ctx = NULL;
        _cleanup_close_ int fd = -1;
        uint32_t act;
        struct stat st;
        void *buf;
        ssize_t n;
        int r;

        switch (action) {
        case LEASH_SECCOMP_KILL:
                act = SCMP_ACT_KILL_PROCESS;
                break;
        case LEASH_SECCOMP_LOG:
                act = SCMP_ACT_LOG;
                break;
        default:
                act = SCMP_ACT_ERRNO(EPERM);
        }
        ctx = seccomp_init(SCMP_ACT_ALLOW);
        if (!ctx)
                return -ENOMEM;
        r = add_compat_arches(ctx);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(sets); i++) {
                if (!(sets_mask & sets[i].bit))
                        continue;
                for (const struct rule *rule = sets[i].rules; rule->syscall; rule++) {
                        r = add_rule(ctx, act, rule);
                        if (r < 0)
                                return r;
                }
        }
        fd = memfd_create("leash-seccomp", MFD_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        r = seccomp_export_bpf(ctx, fd);
        if (r < 0)
                return r;
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (st.st_size <= 0 || st.st_size % (off_t) sizeof(struct sock_filter) != 0 ||
            st.st_size / (off_t) sizeof(struct sock_filter) > BPF_MAXINSNS)
                return -E2BIG;
        buf = malloc((size_t) st.st_size);
        if (!buf)
                return -ENOMEM;
        n = pread(fd, buf, (size_t) st.st_size, 0);
        if (n != (ssize_t) st.st_size) {
                r = n < 0 ? negative_errno() : -EIO;
                free(buf);
                return r;
        }
        ret->insns = buf;
        ret->len = (unsigned short) (st.st_size / (off_t) sizeof(struct sock_filter));
        return 0;
}

void filter_program_done(struct filter_program *p) {
        free(p->insns);
        p->insns = NULL;
        p->len = 0;
}

int filter_load(const struct filter_program *p) {
        struct sock_fprog prog = {.len = p->len, .filter = p->insns};
        if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0)
                return negative_errno();
        return 0;
}

int filter_available(char *ret_actions, size_t size) {
        size_t len = 0;
        int fd;

        if (ret_actions && size)
                ret_actions[0] = '\0';
        if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0 && errno == EINVAL)
                return -EOPNOTSUPP; /* kernel built without CONFIG_SECCOMP */
        fd = open("/proc/sys/kernel/seccomp/actions_avail", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return 0; /* before 4.14: filter mode may still exist */
        if (ret_actions && size && read_fd_at0(fd, ret_actions, size, &len) >= 0)
                while (len && (ret_actions[len - 1] == '\n' || ret_actions[len - 1] == ' '))
                        ret_actions[--len] = '\0';
        close(fd);
        return 0;
}
