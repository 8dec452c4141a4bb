/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lh-floor: the physical floor of a cgroup launcher, for bench/run.
 *
 *   lh-floor CMD...              mkdir a cgroup under $LH_BENCH_CGROUP (default
 *                                <cgroup2 root>/leash), clone3 CMD straight
 *                                into it, wait, read its cpu.stat, rmdir.
 *   lh-floor --no-cgroup CMD...  the same without the cgroup: vfork, exec, wait.
 *   lh-floor --with=LIST CMD...  the floor plus, each at its least cost, the
 *                                mechanisms behind leash's guarantees (LIST:
 *                                comma-separated, or "all"), so that bench/run
 *                                can say what each one costs a launch:
 *     watchdog  a process (CLONE_VM, its own stack) asleep in poll on a pidfd
 *               of the launcher, there to kill the job if the launcher dies;
 *               SIGKILLed and reaped at the end
 *     caps      the child, before exec: its own session, a parent-death
 *               signal, capset to none, ambient cleared, no_new_privs
 *     bounding  the child, before exec: every capability dropped from the
 *               bounding set, one prctl each (leash does it under
 *               no_new_privs too: measured apart, see bench/NOTES.md)
 *     escape    the launcher a subreaper; after the job: where its main
 *               process ended (PIDFD_GET_INFO, else /proc/PID/cgroup), the
 *               walk of the launcher's children (/proc/self/task/TID/children),
 *               and cgroup.events read twice (the leftovers, then empty)
 *     psi       cpu/memory/io.pressure read beside cpu.stat
 *     mark      the cgroup marked (xattr trusted.leash) and the parent's
 *               entries listed (the sweep of dead launchers' cgroups)
 *
 * Nothing else: no options, no watchdog, no report, no sweep, no signal
 * handling (unless --with asks). And linked the least costly way (Makemodule.am): -static-pie
 * with its relocations packed (DT_RELR, as leash),
 * no library but the static libc, so that the loader does no work either.
 * A launcher cannot do less and still put its job in a fresh cgroup and
 * account for it; leash's figures are judged against this.
 */
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char *what) {
        perror(what);
        _exit(2);
}

enum { W_WATCHDOG = 1, W_CAPS = 2, W_ESCAPE = 4, W_PSI = 8, W_MARK = 16, W_BOUNDING = 32, W_ALL = 63 };

static unsigned parse_with(const char *list) {
        static const char *const names[] = {"watchdog", "caps", "escape", "psi", "mark", "bounding"};
        unsigned w = 0;
        char *copy = strdup(list), *save = NULL;

        for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                unsigned i;
                if (strcmp(t, "all") == 0) {
                        w |= W_ALL;
                        continue;
                }
                for (i = 0; i < sizeof names / sizeof names[0] && strcmp(t, names[i]) != 0; i++)
                        ;
                if (i == sizeof names / sizeof names[0]) {
                        fprintf(stderr, "lh-floor: --with: unknown mechanism '%s'\n", t);
                        exit(2);
                }
                w |= 1u << i;
        }
        free(copy);
        return w;
}

/* --with=watchdog: sleeps until the launcher (its pidfd) exits. Shares the
 * launcher's memory: raw system calls only, errno untouched. */
static int watchdog_fn(void *arg) {
        struct pollfd p = {.fd = *(int *) arg, .events = POLLIN};
        (void) syscall(SYS_poll, &p, 1, -1);
        return 0;
}

struct wd {
        int self_fd, pidfd;
        void *stack;
};

static void watchdog_start(struct wd *w) {
        const size_t size = 64 * 1024;
        w->self_fd = (int) syscall(SYS_pidfd_open, getpid(), 0);
        w->stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (w->self_fd < 0 || w->stack == MAP_FAILED)
                die("watchdog");
        if (clone(watchdog_fn, (char *) w->stack + size, CLONE_VM | CLONE_FILES | CLONE_PIDFD, &w->self_fd, &w->pidfd) <
            0)
                die("clone watchdog");
}

static void watchdog_stop(struct wd *w) {
        siginfo_t si;
        (void) syscall(SYS_pidfd_send_signal, w->pidfd, SIGKILL, NULL, 0);
        (void) waitid(P_PIDFD, (id_t) w->pidfd, &si, WEXITED | __WALL);
        munmap(w->stack, 64 * 1024);
        close(w->pidfd);
        close(w->self_fd);
}

/* --with=caps, in the child before its exec */
static void drop_caps(unsigned with) {
        struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
        struct __user_cap_data_struct d[2] = {{0}};
        if (with & W_BOUNDING)
                for (int c = 0; c <= CAP_LAST_CAP; c++)
                        (void) prctl(PR_CAPBSET_DROP, c, 0, 0, 0);
        if (!(with & W_CAPS))
                return;
        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        (void) setsid();
        (void) syscall(SYS_capset, &h, d);
        (void) prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
        (void) prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
}

static void read_at(int dfd, const char *name) {
        char buf[1024];
        int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
                ssize_t n = pread(fd, buf, sizeof buf, 0);
                (void) n;
                close(fd);
        }
}

/* --with=escape, after the job: as leash's engine looks (src/engine/job/escape.c) */
static void escape_look(int pidfd, pid_t pid, int cgfd) {
        struct {
                uint64_t mask, cgroupid;
                uint32_t rest[12];
        } info = {.mask = 1u << 2};
        char path[64], buf[4096];
        int tfd;

        if (ioctl(pidfd, _IOWR(0xFF, 11, info), &info) < 0) {
                snprintf(path, sizeof path, "/proc/%d/cgroup", (int) pid);
                read_at(AT_FDCWD, path);
        }
        read_at(cgfd, "cgroup.events");
        tfd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        while (tfd >= 0 && syscall(SYS_getdents64, tfd, buf, sizeof buf) > 0)
                ;
        snprintf(path, sizeof path, "%d/children", (int) getpid());
        read_at(tfd, path);
        close(tfd);
        read_at(cgfd, "cgroup.events");
}

static void mark_and_sweep(int cgfd, const char *parent) {
        char v[64], buf[4096];
        int dfd;
        snprintf(v, sizeof v, "pid=%d v=1", (int) getpid());
        (void) fsetxattr(cgfd, "trusted.leash", v, strlen(v), 0);
        dfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        while (dfd >= 0 && syscall(SYS_getdents64, dfd, buf, sizeof buf) > 0)
                ;
        close(dfd);
}

/* fork-like (no CLONE_VM: no assembly needed), but CLONE_VFORK: the parent
 * sleeps until the exec instead of racing the child for the CPU */
static __attribute__((noinline)) pid_t launch(struct clone_args *args, char **cmd, unsigned with) {
        pid_t pid = (pid_t) syscall(SYS_clone3, args, sizeof *args);
        if (pid == 0) {
                if (with & (W_CAPS | W_BOUNDING))
                        drop_caps(with);
                execv(cmd[0], cmd);
                _exit(127);
        }
        return pid;
}

int main(int argc, char **argv) {
        const char *parent = getenv("LH_BENCH_CGROUP");
        struct clone_args args = {.flags = CLONE_INTO_CGROUP | CLONE_VFORK, .exit_signal = SIGCHLD};
        char cg[512], buf[1024];
        siginfo_t si;
        pid_t pid;
        int fd, sfd, pidfd = -1, first = 1;
        unsigned with = 0;
        struct wd wd;

        if (argc > 2 && strcmp(argv[1], "--no-cgroup") == 0) {
                pid = vfork();
                if (pid == 0) {
                        execv(argv[2], argv + 2);
                        _exit(127);
                }
                if (pid < 0 || waitid(P_PID, (id_t) pid, &si, WEXITED) < 0)
                        die("vfork");
                return si.si_code == CLD_EXITED ? si.si_status : 1;
        }
        if (argc > 2 && strncmp(argv[1], "--with=", 7) == 0) {
                with = parse_with(argv[1] + 7);
                first = 2;
        }
        if (argc < first + 1)
                return fprintf(stderr, "usage: lh-floor [--no-cgroup | --with=LIST] CMD...\n"), 2;
        if (!parent)
                parent = "/sys/fs/cgroup/unified/leash";
        snprintf(cg, sizeof cg, "%s/floor@%d", parent, (int) getpid());
        if (mkdir(cg, 0755) < 0)
                die(cg);
        fd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                die(cg);
        args.cgroup = (uint64_t) fd;
        if (with & W_MARK)
                mark_and_sweep(fd, parent);
        if (with & W_ESCAPE)
                (void) prctl(PR_SET_CHILD_SUBREAPER, 1);
        if (with & W_WATCHDOG)
                watchdog_start(&wd);
        if (with & W_ESCAPE) {
                args.flags |= CLONE_PIDFD;
                args.pidfd = (uint64_t) (uintptr_t) &pidfd;
        }
        pid = launch(&args, argv + first, with);
        if (pid < 0)
                die("clone3");
        if (with & W_ESCAPE) { /* where it ended, asked of its zombie */
                if (waitid(P_PID, (id_t) pid, &si, WEXITED | WNOWAIT) < 0)
                        die("waitid");
                escape_look(pidfd, pid, fd);
        }
        if (waitid(P_PID, (id_t) pid, &si, WEXITED) < 0)
                die("waitid");
        sfd = openat(fd, "cpu.stat", O_RDONLY | O_CLOEXEC);
        if (sfd < 0 || read(sfd, buf, sizeof buf) <= 0)
                die("cpu.stat");
        close(sfd);
        if (with & W_PSI) {
                read_at(fd, "cpu.pressure");
                read_at(fd, "memory.pressure");
                read_at(fd, "io.pressure");
        }
        close(fd);
        if (rmdir(cg) < 0)
                die(cg);
        if (with & W_WATCHDOG)
                watchdog_stop(&wd);
        return si.si_code == CLD_EXITED ? si.si_status : 1;
}
