/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The watchdog. If the process that holds a job is SIGKILLed, nothing of it
 * runs, yet the job must not run on: the main process has
 * PR_SET_PDEATHSIG(SIGKILL), but its descendants would survive. So every job
 * is watched by a tiny watchdog process. It sleeps in poll() on a pidfd of
 * its owner process (readable when the whole owner process has exited,
 * whichever thread made the job); woken, it writes cgroup.kill, waits (poll
 * on cgroup.events) for the cgroup to empty and removes it. If both die at
 * once (a kill of the whole process group), the next leash sweeps the
 * cgroup: its name holds the dead leash's pid.
 *
 * One watchdog watches many jobs. A pool holds it and the slots it reads
 * after the owner's death: {state, the job's fds, its name}. A leash_config
 * holds a pool, and the jobs made from it take a slot each: a function
 * limited call after call starts one watchdog, on its first call, not one per
 * call (a clone, a wake-up on the other CPU, a kill and a reap: 0.6-0.7 ms
 * of a forked Python call on the 2-CPU VM of bench/NOTES.md). A job takes a
 * slot with a compare-and-swap (FREE to FILLING), fills it and publishes it
 * ACTIVE last; a SIGKILL between two of those stores leaves a slot that is
 * not ACTIVE and is left alone (the sweep finds its cgroup). It frees the
 * slot, first thing, when it is finished. A job made from a bare spec, a
 * process that is a fork of the pool's owner, a job that finds every slot
 * taken: each gets a pool of one slot of its own, whose watchdog ends with
 * the job (SIGKILLed through its pidfd and reaped). It is told to end as
 * soon as the job cgroup is empty and what left it has ended (watchdog_retire),
 * so that its exit runs beside the job's last reads and the cgroup's
 * removal instead of after them: the reap at the end then finds it gone
 * (0.1 ms of a `leash run` launch here). The last reference to a
 * pool (the config's, or a job's) ends its watchdog.
 *
 * A SIGTERM to the watchdog goes to its owner when the owner is in another
 * cgroup. It starts with SIGTERM blocked and reads it from a signalfd its
 * owner made (term_fd): where the job and the watchdog are in a unit the
 * owner is not in (systemd's shared unit, placement.joined), a stop of that
 * unit signals only them, and the owner ends its jobs through the ladder
 * (leash run: reason interrupted) instead of the watchdog dying of it. In
 * the owner's own cgroup the same stop signals the owner itself: passed on,
 * it would be a second interrupt (leash run: no more grace).
 *
 * It must cost little and share nothing it could corrupt. On x86_64 it is
 * made with CLONE_VM | CLONE_FILES (no page-table copy; it sees the jobs'
 * fds and slots as they are filled) on a stack mapped for it alone with a
 * guard page, and it runs only raw system calls written here: no libc, so no
 * errno, no thread-local storage (it shares its creator's thread pointer), no
 * heap, no locks. Elsewhere it is a fork-like child (its own copy of memory,
 * so no pool is shared: every job has its own), where the same code's few
 * libc system-call wrappers are safe. Either way its exit signal is 0 and it
 * is known by a pidfd, so an embedding program's waitpid(-1) never reaps it.
 *
 * Nor is it the embedding program's child (x86_64): a launcher, cloned the
 * same way, clones the watchdog and exits at once, so init (or the nearest
 * subreaper) adopts it and a caller that counts its children
 * (psutil.Process().children(), pynisher's checks) finds none left after a
 * call. The owner still ends it through its pidfd and knows it is gone when
 * the pidfd polls readable (its memory is released before that). An owner
 * that is itself a subreaper would adopt it back, with SIGCHLD as its exit
 * signal: there the watchdog stays a direct child, as elsewhere.
 */
#include "watchdog.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../basic/macro.h"
#include "../heldfd.h"

enum { WD_FREE, WD_FILLING, WD_ACTIVE };
enum { WD_RUN_IDLE, WD_RUN_STARTING, WD_RUN_RUNNING };
#define WD_POOL_SLOTS 16

/* One job the watchdog is to kill and remove if the owner dies */
struct wd_slot {
        int state; /* WD_FREE, WD_FILLING, WD_ACTIVE: only ACTIVE is acted on */
        int parent_fd, job_fd;
        bool remove;
        char name[256];
};

struct watchdog_pool {
        int refs;    /* the config's, and one per job in a slot */
        int run;     /* WD_RUN_*: the watchdog is started once, by a first job */
        pid_t owner; /* the process it watches: the one that started it */
        pid_t pid;
        bool adopted; /* launched through a launcher: not our child, not ours to reap */
        bool told;    /* SIGKILLed already (watchdog_retire) */
        int pidfd, owner_fd;
        int term_fd;           /* a signalfd of SIGTERM, read by the watchdog (which has it blocked) */
        char owner_cgroup[32]; /* /proc/OWNER/cgroup */
        void *stack;           /* its own mapping, a guard page below */
        size_t stack_size;
        unsigned n_slots;
        struct wd_slot slot[];
};

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

/* The job in slot s is killed (cgroup.kill, or each process) */
WD_NO_TLS static void wd_kill_job(const struct wd_slot *s) {
        if (wd_openat(s->job_fd, "cgroup.kill", O_WRONLY | O_CLOEXEC) == -ENOENT)
                wd_kill_each(s->job_fd);
        else
                wd_write(s->job_fd, "cgroup.kill", "1", 1);
}

/* ... and once empty (10 s at most), removed when it is leash's to remove */
WD_NO_TLS static void wd_remove_job(const struct wd_slot *s) {
        long ev = wd_openat(s->job_fd, "cgroup.events", O_RDONLY | O_CLOEXEC);

        /* kernfs wakes pollers of cgroup.events with POLLPRI on a change */
        for (int i = 0; ev >= 0 && i < 100 && wd_empty(ev) == 0; i++) {
                struct pollfd e = {.fd = (int) ev, .events = POLLPRI};
                (void) wd_sys(SYS_poll, (long) &e, 1, 100, 0);
        }
        if (s->remove)
                (void) wd_sys(SYS_unlinkat, s->parent_fd, (long) s->name, AT_REMOVEDIR, 0);
}

/* The file's first bytes into buf: their number, or <0 */
WD_NO_TLS static long wd_read(const char *path, char *buf, long size) {
        long fd = wd_openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC), n;

        if (fd < 0)
                return fd;
        n = wd_sys(SYS_read, fd, (long) buf, size, 0);
        (void) wd_sys(SYS_close, fd, 0, 0, 0);
        return n;
}

/* The owner is in another cgroup than the watchdog: a stop of the unit the
 * watchdog is in did not signal the owner itself */
WD_NO_TLS static bool wd_owner_elsewhere(const struct watchdog_pool *p) {
        char mine[1024], its[1024];
        long a = wd_read("/proc/self/cgroup", mine, sizeof mine), b = wd_read(p->owner_cgroup, its, sizeof its);

        if (a <= 0 || b <= 0 || a != b)
                return true;
        for (long i = 0; i < a; i++)
                if (mine[i] != its[i])
                        return true;
        return false;
}

WD_NO_TLS static int watchdog_main(void *arg) {
        const struct watchdog_pool *p = arg;
        struct pollfd pfd[2] = {{.fd = p->owner_fd, .events = POLLIN}, {.fd = p->term_fd, .events = POLLIN}};
        char si[128]; /* a struct signalfd_siginfo */

        /* the owner's death, whatever thread of it made the jobs; a SIGTERM
         * to the watchdog (the stop of the unit it is in) goes to the owner */
        for (;;) {
                long n = wd_sys(SYS_poll, (long) pfd, 2, -1, 0);
                if ((n < 0 && n != -EINTR) || (n > 0 && pfd[0].revents))
                        break;
                if (n > 0 && (pfd[1].revents & POLLIN)) {
                        if (wd_sys(SYS_read, pfd[1].fd, (long) si, sizeof si, 0) == (long) sizeof si &&
                            wd_owner_elsewhere(p))
                                (void) wd_sys(SYS_pidfd_send_signal, p->owner_fd, SIGTERM, 0, 0);
                } else if (n > 0 && pfd[1].revents)
                        pfd[1].fd = -1; /* unreadable: the owner's death alone */
        }
        /* Nothing of the owner runs any more: the slots hold still. All the
         * jobs are killed first, then each is waited for and removed. */
        for (unsigned i = 0; i < p->n_slots; i++)
                if (__atomic_load_n(&p->slot[i].state, __ATOMIC_ACQUIRE) == WD_ACTIVE)
                        wd_kill_job(&p->slot[i]);
        for (unsigned i = 0; i < p->n_slots; i++)
                if (__atomic_load_n(&p->slot[i].state, __ATOMIC_ACQUIRE) == WD_ACTIVE)
                        wd_remove_job(&p->slot[i]);
        (void) wd_sys(SYS_exit, 0, 0, 0, 0);
        return 0;
}

#define WD_STACK (16 * 1024)
#define WD_LAUNCHER_STACK (8 * 1024)

#if WD_SHARED_VM
/* The launcher: clones the watchdog (its pid and pidfd land in the shared
 * pool and descriptor table) and exits, leaving it to be adopted. Runs on
 * its own small stack above the watchdog's, while the owner waits for it. */
WD_NO_TLS static int watchdog_launch(void *arg) {
        struct watchdog_pool *p = arg;
        size_t page = (size_t) p->stack_size - WD_STACK - WD_LAUNCHER_STACK;
        char *top = (char *) p->stack + page + WD_STACK;
        /* glibc's clone() is an assembly stub; on failure it writes errno,
         * which is the (waiting) owner thread's: the owner restores it */
        pid_t pid = clone(watchdog_main, top, CLONE_VM | CLONE_FILES | CLONE_PIDFD, p, &p->pidfd);

        __atomic_store_n(&p->pid, pid, __ATOMIC_RELEASE);
        (void) wd_sys(SYS_exit, 0, 0, 0, 0);
        return 0;
}
#endif

static int pool_alloc(unsigned n_slots, struct watchdog_pool **ret) {
        struct watchdog_pool *p = calloc(1, sizeof *p + n_slots * sizeof p->slot[0]);

        if (!p)
                return -ENOMEM;
        p->refs = 1;
        p->n_slots = n_slots;
        p->pidfd = p->owner_fd = p->term_fd = -1;
        *ret = p;
        return 0;
}

int watchdog_pool_new(struct watchdog_pool **ret) {
        *ret = NULL;
        /* a fork-like watchdog has a copy of memory: it sees no slot filled later */
        return WD_SHARED_VM ? pool_alloc(WD_POOL_SLOTS, ret) : 0;
}

/* Starts the pool's watchdog directly: our child (exit signal 0) */
static int pool_clone(struct watchdog_pool *p, int flags) {
        p->pid = clone(watchdog_main, (char *) p->stack + p->stack_size - WD_LAUNCHER_STACK, flags, p, &p->pidfd);
        return p->pid < 0 ? negative_errno() : 0;
}

#if WD_SHARED_VM
/* Starts it through the launcher, which the owner reaps */
static int pool_launch(struct watchdog_pool *p) {
        int lfd = -1, saved = errno, r;
        siginfo_t si;
        pid_t l;

        p->pid = 0;
        l = clone(watchdog_launch, (char *) p->stack + p->stack_size, CLONE_VM | CLONE_FILES | CLONE_PIDFD, p, &lfd);
        if (l < 0)
                return negative_errno();
        while (waitid(P_PIDFD, (id_t) lfd, &si, WEXITED | __WALL) < 0 && errno == EINTR)
                ;
        close(lfd);
        r = __atomic_load_n(&p->pid, __ATOMIC_ACQUIRE) > 0 ? 0 : -(errno ? errno : EAGAIN);
        errno = saved;
        if (r < 0) {
                p->pid = 0;
                return r;
        }
        p->adopted = true;
        return 0;
}
#endif

/* Starts the pool's watchdog, watching this process. */
static int pool_run(struct watchdog_pool *p) {
        size_t page = (size_t) sysconf(_SC_PAGESIZE);
        int flags = CLONE_PIDFD | (WD_SHARED_VM ? CLONE_VM | CLONE_FILES : 0), subreaper = 0;
        sigset_t term, all, old_mask;
        int r;

        p->owner = getpid();
        snprintf(p->owner_cgroup, sizeof p->owner_cgroup, "/proc/%d/cgroup", (int) p->owner);
        p->adopted = false;
        p->owner_fd = HELD_FD((int) syscall(SYS_pidfd_open, p->owner, 0));
        if (p->owner_fd < 0)
                return negative_errno();
        /* its stack: 16 KiB for a few frames of raw calls, a guard page below;
         * above it, the launcher's */
        p->stack_size = page + WD_STACK + WD_LAUNCHER_STACK;
        p->stack = mmap(NULL, p->stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (p->stack == MAP_FAILED) {
                r = negative_errno();
                p->stack = NULL;
                goto fail;
        }
        if (mprotect(p->stack, page, PROT_NONE) < 0) {
                r = negative_errno();
                goto fail;
        }
        /* the watchdog starts with SIGTERM blocked (a clone inherits the
         * mask) and reads it from term_fd: a stop of the unit it is in
         * (systemd's SIGTERM to each process there) is passed to the owner,
         * which ends its jobs through the ladder */
        sigemptyset(&term);
        sigaddset(&term, SIGTERM);
        p->term_fd = HELD_FD(signalfd(-1, &term, SFD_CLOEXEC | SFD_NONBLOCK));
        /* and every other signal blocked: it is in the owner's process
         * group, with the owner's handlers, and one run there (a ^C to a
         * library caller's group) would run libc on the owner's thread
         * pointer; a hangup of that group must not end it before its jobs */
        sigfillset(&all);
        (void) pthread_sigmask(SIG_BLOCK, &all, &old_mask);
        /* exit signal 0 (flags carry no signal): never a SIGCHLD, never reaped by waitpid(-1) */
        heldfd_lock();
        if (WD_SHARED_VM && prctl(PR_GET_CHILD_SUBREAPER, &subreaper) == 0 && !subreaper)
#if WD_SHARED_VM
                r = pool_launch(p);
#else
                r = -EINVAL;
#endif
        else
                r = pool_clone(p, flags);
        if (r == 0 && heldfd_mark_locked(p->pidfd) < 0) {
                heldfd_unlock();
                (void) syscall(SYS_pidfd_send_signal, p->pidfd, SIGKILL, NULL, 0);
                close(p->pidfd);
                p->pidfd = -1;
                p->pid = -1;
                r = -ENOMEM;
        } else
                heldfd_unlock();
        (void) pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
        if (r < 0)
                goto fail;
        return 0;
fail:
        if (p->stack)
                munmap(p->stack, p->stack_size);
        p->stack = NULL;
        heldfd_close(p->owner_fd);
        heldfd_close(p->term_fd);
        p->owner_fd = p->pidfd = p->term_fd = -1;
        p->pid = 0;
        return r;
}

/* Ends the pool's watchdog (SIGKILL through its pidfd, reaped). In a forked
 * copy of the owner it is not ours: only our copies of its descriptors and
 * stack go. */
static void pool_halt(struct watchdog_pool *p) {
        siginfo_t si;

        if (p->pid <= 0)
                return;
        if (p->owner == getpid()) {
                if (!p->told)
                        (void) syscall(SYS_pidfd_send_signal, p->pidfd, SIGKILL, NULL, 0);
                if (p->adopted) {
                        /* readable once it has exited: its memory (ours) released */
                        struct pollfd e = {.fd = p->pidfd, .events = POLLIN};
                        while (poll(&e, 1, -1) < 0 && errno == EINTR)
                                ;
                } else
                        while (waitid(P_PIDFD, (id_t) p->pidfd, &si, WEXITED | __WALL) < 0 && errno == EINTR)
                                ;
        }
        heldfd_close(p->pidfd);
        heldfd_close(p->owner_fd);
        heldfd_close(p->term_fd);
        /* reaped: it no longer runs on its stack */
        munmap(p->stack, p->stack_size);
        p->stack = NULL;
        p->pid = 0;
        p->pidfd = p->owner_fd = p->term_fd = -1;
}

void watchdog_pool_unref(struct watchdog_pool *p) {
        if (!p || __atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL) > 0)
                return;
        pool_halt(p);
        free(p);
}

/* A free slot of p filled with the job (its ACTIVE state published last), or -EBUSY */
static int pool_attach(struct watchdog_pool *p, int parent_fd, int job_fd, const char *name, bool remove) {
        for (unsigned i = 0; i < p->n_slots; i++) {
                struct wd_slot *s = &p->slot[i];
                int expected = WD_FREE;

                if (!__atomic_compare_exchange_n(&s->state, &expected, WD_FILLING, false, __ATOMIC_ACQUIRE,
                                                 __ATOMIC_RELAXED))
                        continue;
                s->parent_fd = parent_fd;
                s->job_fd = job_fd;
                s->remove = remove;
                strcpy(s->name, name);
                __atomic_store_n(&s->state, WD_ACTIVE, __ATOMIC_RELEASE);
                __atomic_add_fetch(&p->refs, 1, __ATOMIC_RELAXED);
                return (int) i;
        }
        return -EBUSY;
}

/* The shared pool, when this process may use it: its watchdog runs for this
 * process (started here by the first job), a slot is free. -EAGAIN: use one
 * of the job's own (a forked copy of the pool's owner, another thread
 * starting it, all slots taken). */
static int shared_attach(struct watchdog_pool *p, int parent_fd, int job_fd, const char *name, bool remove) {
        int run = __atomic_load_n(&p->run, __ATOMIC_ACQUIRE), slot, r;

        if (run == WD_RUN_IDLE &&
            __atomic_compare_exchange_n(&p->run, &run, WD_RUN_STARTING, false, __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE)) {
                slot = pool_attach(p, parent_fd, job_fd, name, remove);
                if (slot < 0) { /* all slots taken before the watchdog ran: not this time */
                        __atomic_store_n(&p->run, WD_RUN_IDLE, __ATOMIC_RELEASE);
                        return -EAGAIN;
                }
                r = pool_run(p);
                if (r < 0) {
                        __atomic_store_n(&p->slot[slot].state, WD_FREE, __ATOMIC_RELEASE);
                        __atomic_sub_fetch(&p->refs, 1, __ATOMIC_RELAXED);
                        __atomic_store_n(&p->run, WD_RUN_IDLE, __ATOMIC_RELEASE);
                        return r;
                }
                __atomic_store_n(&p->run, WD_RUN_RUNNING, __ATOMIC_RELEASE);
                return slot;
        }
        if (run != WD_RUN_RUNNING || p->owner != getpid())
                return -EAGAIN;
        slot = pool_attach(p, parent_fd, job_fd, name, remove);
        return slot < 0 ? -EAGAIN : slot;
}

int watchdog_start(struct watchdog *w, struct watchdog_pool *shared, int parent_fd, int job_fd, const char *name,
                   bool remove) {
        struct watchdog_pool *own;
        int r;

        w->pool = NULL;
        if (strlen(name) >= sizeof own->slot[0].name)
                return -ENAMETOOLONG;
        if (shared) {
                r = shared_attach(shared, parent_fd, job_fd, name, remove);
                if (r >= 0) {
                        w->pool = shared;
                        w->slot = (unsigned) r;
                        return 0;
                }
                if (r != -EAGAIN)
                        return r;
        }
        /* one of its own: a pool of one slot, filled before the watchdog is
         * made (a fork-like one sees only what was there) */
        r = pool_alloc(1, &own);
        if (r < 0)
                return r;
        w->slot = (unsigned) pool_attach(own, parent_fd, job_fd, name, remove);
        r = pool_run(own);
        if (r < 0) {
                free(own);
                return r;
        }
        watchdog_pool_unref(own); /* the job's reference is the one left */
        w->pool = own;
        return 0;
}

void watchdog_retire(struct watchdog *w) {
        struct watchdog_pool *p = w->pool;

        if (!p || p->n_slots != 1 || p->pid <= 0 || p->told || p->owner != getpid())
                return; /* none, a shared one, or not this process's to end */
        __atomic_store_n(&p->slot[w->slot].state, WD_FREE, __ATOMIC_RELEASE);
        p->told = syscall(SYS_pidfd_send_signal, p->pidfd, SIGKILL, NULL, 0) == 0;
}

void watchdog_stop(struct watchdog *w) {
        if (!w->pool)
                return;
        /* inactive first: from here on the watchdog leaves the job alone */
        __atomic_store_n(&w->pool->slot[w->slot].state, WD_FREE, __ATOMIC_RELEASE);
        watchdog_pool_unref(w->pool);
        w->pool = NULL;
}

pid_t watchdog_pid(const struct watchdog *w) {
        return w->pool ? w->pool->pid : 0;
}
