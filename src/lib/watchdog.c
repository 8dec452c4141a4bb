/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The watchdog. If the process that holds a job is SIGKILLed, nothing of it
 * runs, yet the job must not run on: the main process has
 * PR_SET_PDEATHSIG(SIGKILL), but its descendants would survive. So each job
 * gets a tiny watchdog process. It sleeps in poll() on a pidfd of its owner
 * process (readable when the whole owner process has exited, whichever
 * thread made the job); woken, it writes cgroup.kill, waits (poll on
 * cgroup.events) for the cgroup to empty and removes it. On the normal path
 * the owner SIGKILLs it through its pidfd once the job is finished. If both
 * die at once (a kill of the whole process group), the next leash sweeps the
 * cgroup: its name holds the dead leash's pid.
 *
 * It must cost little and share nothing it could corrupt. On x86_64 it is
 * made with CLONE_VM | CLONE_FILES (no page-table copy; it sees the job's
 * fds) on a stack mapped for it alone with a guard page, and it runs only
 * raw system calls written here: no libc, so no errno, no thread-local
 * storage (it shares its creator's thread pointer), no heap, no locks.
 * Elsewhere it is a fork-like child (its own copy of memory), where the same
 * code's few libc system-call wrappers are safe. Either way its exit signal
 * is 0 and it is known by a pidfd, so an embedding program's waitpid(-1)
 * never reaps it, and two jobs (or two threads) each have their own.
 */
#include "watchdog.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../basic/macro.h"

/* Shares the thread pointer of the thread that made it, which may have exited
 * since (its TLS unmapped): so no stack-protector canary, no sanitizer
 * runtime, nothing that reads thread-local storage. */
#if defined(__has_attribute) && __has_attribute(no_stack_protector)
#define WD_NO_TLS __attribute__((no_stack_protector, no_sanitize_address, no_sanitize("undefined"), noinline))
#else
#define WD_NO_TLS __attribute__((optimize("no-stack-protector"), no_sanitize_address, noinline))
#endif

#if defined(__x86_64__)
#define WD_SHARED_VM 1
static inline __attribute__((always_inline)) long wd_sys(long n, long a, long b, long c, long d) {
        register long rax __asm__("rax") = n;
        register long r10 __asm__("r10") = d;
        __asm__ volatile("syscall" : "+r"(rax) : "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory");
        return rax; /* -errno on failure: no errno is written */
}
#else
#define WD_SHARED_VM 0
static long wd_sys(long n, long a, long b, long c, long d) {
        long r = syscall(n, a, b, c, d); /* our own copy of memory: errno is ours */
        return r < 0 ? -errno : r;
}
#endif

static inline __attribute__((always_inline)) long wd_openat(int dfd, const char *path, int flags) {
        return wd_sys(SYS_openat, dfd, (long) path, flags, 0);
}

WD_NO_TLS static void wd_write(int dfd, const char *file, const char *text, long len) {
        long fd = wd_openat(dfd, file, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return;
        (void) wd_sys(SYS_write, fd, (long) text, len, 0);
        (void) wd_sys(SYS_close, fd, 0, 0, 0);
}

/* "populated 0" in cgroup.events: 1 empty, 0 not, <0 unreadable */
WD_NO_TLS static int wd_empty(long fd) {
        char buf[256];
        long n = wd_sys(SYS_pread64, fd, (long) buf, sizeof buf - 1, 0);
        if (n < 0)
                return (int) n;
        for (long i = 0; i + 10 < n; i++)
                if (buf[i] == 'p' && (i == 0 || buf[i - 1] == '\n') && buf[i + 9] == ' ')
                        return buf[i + 10] == '0';
        return -1;
}

/* Old kernels without cgroup.kill: freeze, SIGKILL each pid, thaw. */
WD_NO_TLS static void wd_kill_each(int job_fd) {
        char buf[4096];
        long fd, n;

        wd_write(job_fd, "cgroup.freeze", "1", 1);
        for (int round = 0; round < 100; round++) {
                long killed = 0;
                fd = wd_openat(job_fd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        break;
                n = wd_sys(SYS_read, fd, (long) buf, sizeof buf - 1, 0);
                (void) wd_sys(SYS_close, fd, 0, 0, 0);
                if (n <= 0)
                        break;
                for (long i = 0, pid = 0; i < n; i++) {
                        if (buf[i] >= '0' && buf[i] <= '9')
                                pid = pid * 10 + (buf[i] - '0');
                        else {
                                if (pid > 0 && wd_sys(SYS_kill, pid, SIGKILL, 0, 0) == 0)
                                        killed++;
                                pid = 0;
                        }
                }
                if (!killed)
                        break;
        }
        wd_write(job_fd, "cgroup.freeze", "0", 1);
}

WD_NO_TLS static int watchdog_main(void *arg) {
        const struct watchdog *w = arg;
        struct pollfd pfd = {.fd = w->owner_fd, .events = POLLIN};
        long ev;

        /* the owner's death, whatever thread of it made the job */
        while (wd_sys(SYS_poll, (long) &pfd, 1, -1, 0) == -EINTR)
                ;
        if (wd_openat(w->job_fd, "cgroup.kill", O_WRONLY | O_CLOEXEC) == -ENOENT)
                wd_kill_each(w->job_fd);
        else
                wd_write(w->job_fd, "cgroup.kill", "1", 1);
        ev = wd_openat(w->job_fd, "cgroup.events", O_RDONLY | O_CLOEXEC);
        /* kernfs wakes pollers of cgroup.events with POLLPRI on a change; 10 s at most */
        for (int i = 0; ev >= 0 && i < 100 && wd_empty(ev) == 0; i++) {
                struct pollfd e = {.fd = (int) ev, .events = POLLPRI};
                (void) wd_sys(SYS_poll, (long) &e, 1, 100, 0);
        }
        if (w->remove)
                (void) wd_sys(SYS_unlinkat, w->parent_fd, (long) w->name, AT_REMOVEDIR, 0);
        (void) wd_sys(SYS_exit, 0, 0, 0, 0);
        return 0;
}

int watchdog_start(struct watchdog *w, int parent_fd, int job_fd, const char *name, bool remove) {
        size_t page = (size_t) sysconf(_SC_PAGESIZE);
        int flags = CLONE_PIDFD | (WD_SHARED_VM ? CLONE_VM | CLONE_FILES : 0);
        int r;

        memset(w, 0, sizeof *w);
        w->pidfd = -1;
        w->parent_fd = parent_fd;
        w->job_fd = job_fd;
        w->remove = remove;
        if (strlen(name) >= sizeof w->name)
                return -ENAMETOOLONG;
        strcpy(w->name, name);
        w->owner_fd = (int) syscall(SYS_pidfd_open, getpid(), 0);
        if (w->owner_fd < 0)
                return negative_errno();
        /* its stack: 16 KiB for a few frames of raw calls, a guard page below */
        w->stack_size = 16 * 1024 + page;
        w->stack = mmap(NULL, w->stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (w->stack == MAP_FAILED) {
                r = negative_errno();
                w->stack = NULL;
                goto fail;
        }
        if (mprotect(w->stack, page, PROT_NONE) < 0) {
                r = negative_errno();
                goto fail;
        }
        /* exit signal 0 (flags carry no signal): never a SIGCHLD, never reaped by waitpid(-1) */
        w->pid = clone(watchdog_main, (char *) w->stack + w->stack_size, flags, w, &w->pidfd);
        if (w->pid < 0) {
                r = negative_errno();
                goto fail;
        }
        return 0;
fail:
        if (w->stack)
                munmap(w->stack, w->stack_size);
        w->stack = NULL;
        close(w->owner_fd);
        w->owner_fd = w->pidfd = -1;
        w->pid = 0;
        return r;
}

void watchdog_stop(struct watchdog *w) {
        siginfo_t si;

        if (w->pid <= 0)
                return;
        (void) syscall(SYS_pidfd_send_signal, w->pidfd, SIGKILL, NULL, 0);
        while (waitid(P_PIDFD, (id_t) w->pidfd, &si, WEXITED | __WALL) < 0 && errno == EINTR)
                ;
        close(w->pidfd);
        close(w->owner_fd);
        /* reaped: it no longer runs on its stack */
        munmap(w->stack, w->stack_size);
        w->stack = NULL;
        w->pid = 0;
        w->pidfd = w->owner_fd = -1;
}
