/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The isolation mode (--isolate, profile key isolate = true).
 *
 * Why. A job that keeps leash's uid (root without --user, or any job of a
 * delegated subtree) owns leash's cgroups and leash itself: it can write
 * itself into another cgroup's cgroup.procs and outlive leash, SIGSTOP or
 * freeze leash, pull leash into its own cgroup, set the parent's
 * cgroup.max.descendants to 0, make child cgroups. Dropping capabilities does
 * not help: uid 0 owns those root-owned files. What helps is that the job can
 * neither name leash nor write the cgroup tree.
 *
 * How (the shape isolate(1), bubblewrap and nsjail share; written from their
 * documentation and the kernel's, not their code):
 *
 *   leash --clone3(NEWPID|NEWNS|INTO_CGROUP|PIDFD)--> init (pid 1 inside)
 *   init: mount propagation to slave (nothing leaks back), a fresh /proc for
 *         the new pid namespace (leash and every host process are gone from
 *         it; kill(2) cannot name them), /proc/sys, /proc/sysrq-trigger and
 *         friends bound read-only, every cgroup, cgroup2, sysfs and other
 *         kernel-interface mount remounted read-only (cgroup.procs,
 *         cgroup.freeze, cgroup.max.descendants, mkdir: EROFS), a session of
 *         its own, not dumpable (the job cannot ptrace it or open
 *         /proc/1/fd), every fd but the status pipe closed;
 *   init --fork--> the job (pid 2): the usual child setup (rlimits, identity,
 *         capabilities, no_new_privs, seccomp), exec.
 *
 * The init is needed because a pid 1 ignores every signal it has no handler
 * for, even from the job's own supervisor: the job as pid 1 would shrug off
 * SIGXCPU. The init blocks every signal and takes them with sigwaitinfo:
 * SIGCHLD means reap (the job, and orphans reparented to it); anything else
 * is forwarded with kill(-1, sig), to every process of the namespace, which
 * is every process of the job (it cannot leave the namespace, nor, with the
 * cgroup filesystem read-only, the cgroup). leash therefore sends its soft
 * signal to the init alone (supervise.c), and SIGKILL through cgroup.kill as
 * always. When the job (pid 2) ends, the init writes its wait status and the
 * number of processes still alive into the status pipe and exits; the kernel
 * kills the rest of the namespace before the init's exit is seen, and leash
 * reports the job's own status, not the init's.
 *
 * Limits. Root only (a user namespace for unprivileged leashes is not done:
 * an unprivileged --isolate is refused, exit 125). A job that keeps
 * CAP_SYS_ADMIN (--caps keep) can undo the mounts: the report says so. The
 * init is a fork of leash (no exec), so a command is isolated, a forked
 * function is not (refused: its memory holds leash's open fds).
 */
#include "isolate.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../basic/dirread.h"
#include "../../basic/macro.h"

#define STATUS_MAGIC 0x4c534831u /* "LSH1" */

struct status_msg {
        uint32_t magic;
        int32_t wstatus;
        uint32_t leftovers;
};

static int fail(struct leash_error *err, const char *detail, int r) {
        if (err) {
                err->step = "isolate the job (--isolate)";
                snprintf(err->detail, sizeof err->detail, "%s", detail);
                err->error = -r;
        }
        return r;
}

int isolate_prepare(bool isolate, bool fork_mode, struct isolate_plan *p, struct leash_error *err) {
        int fds[2];

        *p = (struct isolate_plan) ISOLATE_PLAN_INIT;
        if (!isolate)
                return 0;
        if (geteuid() != 0)
                return fail(err, "needs root: new pid and mount namespaces (no user namespace is made)", -EPERM);
        if (fork_mode)
                return fail(err, "isolates a command, not a forked function", -EOPNOTSUPP);
        if (pipe2(fds, O_CLOEXEC) < 0)
                return fail(err, "status pipe", negative_errno());
        if (fcntl(fds[0], F_SETFL, O_NONBLOCK) < 0) {
                int r = negative_errno();
                close(fds[0]);
                close(fds[1]);
                return fail(err, "status pipe", r);
        }
        p->on = true;
        p->status_rfd = fds[0];
        p->status_wfd = fds[1];
        return 0;
}

void isolate_plan_done(struct isolate_plan *p) {
        if (p->status_rfd >= 0)
                close(p->status_rfd);
        if (p->status_wfd >= 0)
                close(p->status_wfd);
        *p = (struct isolate_plan) ISOLATE_PLAN_INIT;
}

pid_t isolate_clone(int cgroup_fd, int *ret_pidfd) {
        struct clone_args args = {
                .flags = CLONE_PIDFD | (cgroup_fd >= 0 ? CLONE_INTO_CGROUP : 0) | CLONE_NEWPID | CLONE_NEWNS,
                .pidfd = (uint64_t) (uintptr_t) ret_pidfd,
                .exit_signal = 0,
                .cgroup = cgroup_fd >= 0 ? (uint64_t) cgroup_fd : 0,
        };
        return (pid_t) syscall(SYS_clone3, &args, sizeof args);
}

/* ---- in the init: async-signal-safe calls only, no allocation ------------- */

static bool streq(const char *a, const char *b) {
        return strcmp(a, b) == 0;
}

/* Kernel interfaces a uid-0 job without capabilities could still write
 * through their file modes. */
static bool kernel_fs(const char *type) {
        static const char *const types[] = {"cgroup", "cgroup2",  "sysfs", "securityfs", "debugfs", "tracefs",
                                            "pstore", "efivarfs", "bpf",   "configfs",   "fusectl", NULL};
        for (size_t i = 0; types[i]; i++)
                if (streq(type, types[i]))
                        return true;
        return false;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo */
static void unescape(char *s) {
        char *w = s;
        for (char *r = s; *r; r++) {
                if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' &&
                    r[3] <= '7') {
                        *w++ = (char) ((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
                        r += 3;
                } else
                        *w++ = *r;
        }
        *w = '\0';
}

static int remount_ro(const char *path) {
        if (mount(NULL, path, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0)
                return 0;
        /* not a mount point any more: shadowed by a later mount (the old
         * /proc's submounts under the new /proc), so out of reach */
        if (errno == EINVAL || errno == ENOENT)
                return 0;
        return negative_errno();
}

/* One line of mountinfo: "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPT...] - TYPE SRC SUPER" */
static int mountinfo_line(char *line) {
        char *field[5], *sep, *type, *p = line;

        for (int i = 0; i < 5; i++) {
                while (*p == ' ')
                        p++;
                field[i] = p;
                p = strchr(p, ' ');
                if (!p)
                        return 0;
                *p++ = '\0';
        }
        sep = strstr(p, " - ");
        if (!sep)
                return 0;
        type = sep + 3;
        p = strchr(type, ' ');
        if (p)
                *p = '\0';
        if (!kernel_fs(type))
                return 0;
        unescape(field[4]);
        return remount_ro(field[4]);
}

static int protect_kernel_mounts(void) {
        char buf[8192];
        size_t have = 0;
        int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC), r = 0;

        if (fd < 0)
                return negative_errno();
        for (;;) {
                ssize_t n = read(fd, buf + have, sizeof buf - 1 - have);
                char *start = buf, *nl;
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        r = negative_errno();
                        break;
                }
                have += (size_t) n;
                buf[have] = '\0';
                while ((nl = strchr(start, '\n'))) {
                        *nl = '\0';
                        r = mountinfo_line(start);
                        if (r < 0)
                                break;
                        start = nl + 1;
                }
                if (r < 0)
                        break;
                if (n == 0)
                        break;
                have -= (size_t) (start - buf);
                memmove(buf, start, have);
                if (have == sizeof buf - 1) {
                        r = -E2BIG; /* one line longer than 8 KiB */
                        break;
                }
        }
        close(fd);
        return r;
}

/* /proc/sys and the few /proc files that act on the whole machine */
static int protect_proc(void) {
        static const char *const paths[] = {"/proc/sys",   "/proc/sysrq-trigger", "/proc/irq",
                                            "/proc/bus",   "/proc/acpi",          "/proc/fs",
                                            "/proc/kcore", "/proc/timer_list",    NULL};
        for (size_t i = 0; paths[i]; i++) {
                if (mount(paths[i], paths[i], NULL, MS_BIND | MS_REC, NULL) < 0) {
                        if (errno == ENOENT)
                                continue;
                        return negative_errno();
                }
                if (mount(NULL, paths[i], NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                          NULL) < 0)
                        return negative_errno();
        }
        return 0;
}

/* keep > 0: it is the status pipe, made after fds 0-2 */
static void close_all_but(int keep) {
        if (syscall(SYS_close_range, 0, keep - 1, 0) < 0)
                for (int fd = 0; fd < keep; fd++)
                        (void) close(fd);
        if (syscall(SYS_close_range, keep + 1, ~0U, 0) < 0)
                for (int fd = keep + 1; fd < 65536; fd++)
                        (void) close(fd);
}

/* processes of the namespace still alive, the init aside */
static unsigned count_others(void) {
        struct dirread d;
        const char *name;
        unsigned n = 0;
        int fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (fd < 0)
                return 0;
        dirread_init(&d, fd);
        while ((name = dirread_next(&d, NULL)))
                if (name[0] >= '1' && name[0] <= '9' && !streq(name, "1"))
                        n++;
        close(fd);
        return n;
}

static _Noreturn void init_loop(const struct isolate_plan *p, pid_t job) {
        struct status_msg m = {.magic = STATUS_MAGIC};
        sigset_t all;
        bool done = false;

        sigfillset(&all);
        while (!done) {
                siginfo_t si;
                int sig = sigwaitinfo(&all, &si);
                if (sig < 0)
                        continue;
                if (sig != SIGCHLD) {
                        (void) kill(-1, sig); /* every process of the namespace but us */
                        continue;
                }
                for (;;) {
                        int st;
                        pid_t pid = waitpid(-1, &st, WNOHANG | __WALL);
                        if (pid <= 0)
                                break;
                        if (pid == job) {
                                m.wstatus = st;
                                done = true;
                        }
                }
        }
        m.leftovers = count_others();
        { ssize_t n _unused_ = write(p->status_wfd, &m, sizeof m); }
        _exit(0); /* the kernel now kills what is left of the namespace */
}

int isolate_child(const struct isolate_plan *p, int errfd) {
        sigset_t all, old;
        pid_t job;

        /* the init goes with leash; the watchdog takes the cgroup */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
                return negative_errno();
        if (setsid() < 0)
                return negative_errno();
        if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
                return negative_errno();
        if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
                return negative_errno();
        {
                int r = protect_kernel_mounts();
                if (r < 0)
                        return r;
                r = protect_proc();
                if (r < 0)
                        return r;
        }
        if (prctl(PR_SET_DUMPABLE, 0) < 0)
                return negative_errno();
        sigfillset(&all);
        if (sigprocmask(SIG_SETMASK, &all, &old) < 0)
                return negative_errno();
        job = fork();
        if (job < 0) {
                int r = negative_errno();
                (void) sigprocmask(SIG_SETMASK, &old, NULL);
                return r;
        }
        if (job == 0) {
                (void) close(p->status_wfd);
                (void) sigprocmask(SIG_SETMASK, &old, NULL);
                return 0;
        }
        (void) errfd; /* closed with the rest: the job holds its copy until exec */
        close_all_but(p->status_wfd);
        init_loop(p, job);
}

/* ---- in leash -------------------------------------------------------------- */

int isolate_probe(void) {
        int st;
        pid_t pid = (pid_t) syscall(SYS_clone, CLONE_NEWPID | CLONE_NEWNS | SIGCHLD, 0, 0, 0, 0);
        if (pid < 0)
                return negative_errno();
        if (pid == 0)
                _exit(0);
        if (waitpid(pid, &st, 0) < 0)
                return negative_errno();
        return 0;
}

void isolate_collect(const struct isolate_plan *p, struct leash_result *r) {
        struct status_msg m;

        if (!p->on || p->status_rfd < 0)
                return;
        if (read(p->status_rfd, &m, sizeof m) != (ssize_t) sizeof m || m.magic != STATUS_MAGIC)
                return; /* the init was killed (cgroup.kill): its SIGKILL is the job's too */
        if (WIFEXITED(m.wstatus)) {
                r->status_code = WEXITSTATUS(m.wstatus);
                r->term_signal = 0;
        } else if (WIFSIGNALED(m.wstatus)) {
                r->status_code = -1;
                r->term_signal = WTERMSIG(m.wstatus);
        }
        if (m.leftovers > r->leftovers_killed)
                r->leftovers_killed = m.leftovers;
}

const char *isolate_describe(const struct leash_spec *spec, const struct leash_result *r, bool isolated) {
        const struct leash_sandbox *s = &spec->sandbox;
        bool keeps_admin = s->caps_mode == LEASH_CAPS_KEEP ||
                           (s->caps_mode == LEASH_CAPS_LIST && (s->caps_keep & (1ULL << 21))); /* CAP_SYS_ADMIN */

        if (isolated)
                return keeps_admin ? "namespaces, weakened: the job keeps CAP_SYS_ADMIN and can undo the read-only "
                                     "mounts"
                                   : "namespaces: own pid and mount namespaces under an init, cgroup filesystem and "
                                     "kernel tunables read-only, own session";
        if (r->sandbox.uid != geteuid())
                return "identity: the job runs as another user, who cannot write leash's cgroups or signal leash";
        return "none: the job shares leash's uid and can leave its cgroup or stop leash";
}
