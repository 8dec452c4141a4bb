/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The job without a cgroup (placement none, issue 23): where no cgroup can
 * be had (an ordinary user on a host with nothing delegated, a container
 * with a read-only cgroupfs), the job is its process tree, as pynisher
 * treats it, but found the way escape.c finds escapees:
 *
 *  - `leash run` is a child subreaper (spec.reaper): every orphan of the job
 *    is reparented to leash, so the tree walked from leash's own children
 *    holds every process of the job, double forks and setsid included;
 *  - a library caller that is not a subreaper gets the main process's
 *    descendants while it lives, plus every process of the job's session
 *    (the main process starts one of its own: its pid is the session id,
 *    and the kernel keeps a pid from reuse while a session carries it). A
 *    process that is orphaned and changes its session is lost to it.
 *
 * Every process is opened as a pidfd and believed only if it is still the
 * child of the process it was listed under (or in the job's session) once
 * its /proc/PID/stat was read: a recycled pid is never signalled. It has
 * ended when its pidfd says so, never by its state Z, which a process whose
 * main thread ended shows while its other threads run. Whether the job has
 * emptied is not a walk's to say (a process whose parent ends as it is
 * walked moves to a list already read): see tree_empty. A signal
 * goes to a stopped tree: each process gets SIGSTOP through its pidfd and
 * the walk is repeated until it finds no process it has not stopped (a
 * stopped process cannot fork, and a fork in flight when SIGSTOP arrives is
 * restarted by the kernel after the stop), so a fork bomb cannot outrun the
 * kill; then the signal; then SIGCONT unless it was SIGKILL.
 *
 * CPU time: the live processes' utime+stime with the times of the children
 * they reaped (cutime, cstime), plus the rusage of the processes leash
 * reaped (the main process, orphans). A process whose parent is not leash
 * and that was reaped by an init is not counted: only a library caller that
 * is not a subreaper has those.
 */
#include "tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../basic/macro.h"
#include "../../basic/procstat.h"
#include "../../basic/time-util.h"
#include "job-object.h"
#include "proctree.h"

#define TREE_MAX 4096
#define STOP_ROUNDS 64
#define KILL_ROUNDS 100
#define HOLDER_SETTLE_MS 20 /* a round that saw nothing while the holder lives: the next after this wait */

typedef void (*tree_visit_fn)(struct leash_job *j, pid_t pid, int pidfd, const struct procstat *ps, void *ud);

static uint64_t tv_us(const struct timeval *tv) {
        return (uint64_t) tv->tv_sec * USEC_PER_SEC + (uint64_t) tv->tv_usec;
}

/* An orphan of the job that ended as leash's child: reaped, its CPU kept. */
static void reap_orphan(struct leash_job *j, int pidfd) {
        struct rusage ru;
        siginfo_t si = {0};

        if (syscall(SYS_waitid, P_PIDFD, pidfd, &si, WEXITED | WNOHANG | __WALL, &ru) == 0 && si.si_pid > 0) {
                j->tree_reaped_user_us += tv_us(&ru.ru_utime);
                j->tree_reaped_system_us += tv_us(&ru.ru_stime);
        }
}

static bool listed(const pid_t *list, size_t n, pid_t pid) {
        for (size_t i = 0; i < n; i++)
                if (list[i] == pid)
                        return true;
        return false;
}

/* One process found: opened, checked, then visited (live) or reaped. */
static void visit_one(struct leash_job *j, pid_t pid, pid_t want_parent, pid_t want_session, tree_visit_fn fn, void *ud,
                      bool *ret_descend) {
        _cleanup_close_ int pfd = (int) syscall(SYS_pidfd_open, pid, 0);
        struct procstat ps;

        *ret_descend = false;
        if (pfd < 0 || procstat_read(AT_FDCWD, pid, &ps) < 0)
                return;
        if (want_parent ? ps.ppid != want_parent : ps.session != want_session)
                return; /* gone, or another process by now */
        if (proctree_pidfd_ended(pfd)) {
                /* leash's own zombie child (not the main process: supervise reaps it) */
                if (j->spec.reaper && want_parent == getpid() && pid != j->r.pid)
                        reap_orphan(j, pfd);
                return;
        }
        *ret_descend = true;
        fn(j, pid, pfd, &ps, ud);
}

/* Processes of the job's session that the walk did not reach (a library
 * caller that is not a subreaper: orphans went to init). */
static void scan_session(struct leash_job *j, pid_t *list, size_t n, tree_visit_fn fn, void *ud) {
        DIR *d = opendir("/proc");
        struct dirent *de;

        if (!d)
                return;
        while ((de = readdir(d))) {
                char *end;
                long pid = strtol(de->d_name, &end, 10);
                bool descend;
                if (*end || pid <= 0 || pid == j->r.pid || listed(list, n, (pid_t) pid))
                        continue;
                visit_one(j, (pid_t) pid, 0, j->r.pid, fn, ud, &descend);
        }
        closedir(d);
}

/* leash's own children (a subreaper): every ended one is reaped with its
 * rusage, however many (a fork bomb leaves thousands of zombies ahead of the
 * live processes in the list, where TREE_MAX would leave those unseen and
 * their CPU uncounted); the live ones go on the walk's list. */
struct root_list {
        struct leash_job *j;
        pid_t *list, *parent, self, watchdog;
        size_t *n;
};

/* leash's own child c, not the main process or the watchdog (both reaped
 * by their own waits): true while it runs; one that ended is reaped here,
 * its CPU kept; false too for one gone or no longer leash's. */
static bool own_child_runs(struct root_list *a, pid_t c) {
        _cleanup_close_ int pfd = (int) syscall(SYS_pidfd_open, c, 0);
        struct procstat ps;

        if (pfd < 0 || procstat_read(AT_FDCWD, c, &ps) < 0 || ps.ppid != a->self)
                return false;
        if (proctree_pidfd_ended(pfd)) {
                reap_orphan(a->j, pfd);
                return false;
        }
        return true;
}

static bool root_child(pid_t c, pid_t parent, void *ud) {
        struct root_list *a = ud;

        if (c != a->j->r.pid && c != a->watchdog && !own_child_runs(a, c))
                return true;
        if (*a->n < TREE_MAX) {
                a->list[*a->n] = c;
                a->parent[*a->n] = parent;
                (*a->n)++;
        }
        return true;
}

static void tree_walk(struct leash_job *j, tree_visit_fn fn, void *ud) {
        _cleanup_free_ pid_t *list = malloc(TREE_MAX * sizeof *list), *parent = malloc(TREE_MAX * sizeof *parent);
        bool main_alive = j->has_main && j->state == JOB_RUNNING && j->pidfd >= 0 && j->r.pid > 0;
        size_t n = 0;

        if (!list || !parent)
                return;
        if (j->holder.pid > 0) /* below it, every process of the job (holder.c) */
                proctree_children(j->holder.pid, list, parent, &n, TREE_MAX);
        else if (j->spec.reaper) {
                struct root_list a = {j, list, parent, getpid(), watchdog_pid(&j->wd), &n};
                (void) proctree_for_children(0, root_child, &a);
        } else if (main_alive) {
                struct procstat ps;
                if (procstat_read(AT_FDCWD, j->r.pid, &ps) == 0 && !proctree_pidfd_ended(j->pidfd))
                        fn(j, j->r.pid, j->pidfd, &ps, ud);
                proctree_children(j->r.pid, list, parent, &n, TREE_MAX);
        }
        for (size_t i = 0; i < n; i++) {
                bool descend;
                visit_one(j, list[i], parent[i], 0, fn, ud, &descend);
                if (descend) /* after the checks: its pid is its own */
                        proctree_children(list[i], list, parent, &n, TREE_MAX);
        }
        if (!j->spec.reaper && j->holder.pid <= 0 && j->r.pid > 0)
                scan_session(j, list, n, fn, ud);
}

/* ---- signals to a stopped tree ---- */

struct stopped {
        size_t n, unnamed;
        pid_t pid[TREE_MAX];
        int fd[TREE_MAX];
        int sig; /* for a process past TREE_MAX: signalled at once */
};

static void stop_visit(struct leash_job *j, pid_t pid, int pidfd, const struct procstat *ps, void *ud) {
        struct stopped *s = ud;
        int fd;

        (void) j;
        (void) ps;
        if (listed(s->pid, s->n, pid))
                return;
        if (s->n >= TREE_MAX) {
                s->unnamed++;
                (void) proctree_pidfd_signal(pidfd, s->sig);
                return;
        }
        fd = fcntl(pidfd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return;
        if (proctree_pidfd_signal(fd, SIGSTOP) < 0) {
                close(fd);
                return;
        }
        s->pid[s->n] = pid;
        s->fd[s->n++] = fd;
}

int tree_signal(struct leash_job *j, int sig) {
        _cleanup_free_ struct stopped *s = calloc(1, sizeof *s);
        int n;

        if (!s)
                return -ENOMEM;
        s->sig = sig;
        for (int round = 0; round < STOP_ROUNDS; round++) {
                size_t before = s->n;
                tree_walk(j, stop_visit, s);
                if (s->n == before)
                        break;
        }
        for (size_t i = 0; i < s->n; i++)
                (void) proctree_pidfd_signal(s->fd[i], sig);
        if (sig != SIGKILL && sig != SIGSTOP)
                for (size_t i = 0; i < s->n; i++)
                        (void) proctree_pidfd_signal(s->fd[i], SIGCONT);
        if (sig == SIGKILL)
                proctree_wait_ended(s->fd, s->n, 2000);
        for (size_t i = 0; i < s->n; i++)
                close(s->fd[i]);
        n = (int) (s->n + s->unnamed);
        return n;
}

/* The holder has exited, waiting up to timeout_ms: it exits once it has no
 * child left, and every process of the job is below it. */
static bool holder_gone(const struct leash_job *j, int timeout_ms) {
        struct pollfd p = {.fd = j->holder.pidfd, .events = POLLIN};

        return j->holder.pidfd < 0 || poll(&p, 1, timeout_ms) == 1;
}

/* A child of leash that runs: counted, and the list read no further. */
static bool live_child(pid_t c, pid_t parent, void *ud) {
        struct root_list *a = ud;

        (void) parent;
        if (c == a->j->r.pid || c == a->watchdog || !own_child_runs(a, c))
                return true;
        *a->n = 1;
        return false;
}

/* A live process of the job has a live parent, up to a child of the
 * subreaper above it all: a parent that ended handed its children to that
 * subreaper first. So the job runs as long as a child of leash (or of the
 * holder) runs, and only that list is read: leash alone reaps from it, so
 * it is read whole, while a walk of the whole tree can miss a process
 * whose parent ends between the two reads (it moves to a list already
 * read). */
bool tree_empty(struct leash_job *j) {
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0;

        if (j->holder.pid > 0) /* the holder reaps as the caller reads: its exit */
                return holder_gone(j, 0);
        if (j->spec.reaper) {
                struct root_list a = {j, NULL, NULL, getpid(), watchdog_pid(&j->wd), &n};
                (void) proctree_for_children(0, live_child, &a);
                return n == 0;
        }
        return tree_pids(j, &pids, &n) == 0 && n == 0;
}

int tree_kill_all(struct leash_job *j) {
        int total = 0;

        for (int round = 0; round < KILL_ROUNDS; round++) {
                int n = tree_signal(j, SIGKILL);
                if (n > 0) {
                        total += n;
                        continue;
                }
                /* none seen: believed once tree_empty agrees (the walk may
                 * have missed one); below a holder, which reaps what was
                 * killed and then exits, after a short wait for that */
                if (j->holder.pid > 0 ? holder_gone(j, HOLDER_SETTLE_MS) : tree_empty(j))
                        break;
        }
        return total;
}

/* ---- figures ---- */

struct cpu_sum {
        unsigned long long user, system; /* clock ticks */
};

static void cpu_visit(struct leash_job *j, pid_t pid, int pidfd, const struct procstat *ps, void *ud) {
        struct cpu_sum *c = ud;

        (void) j;
        (void) pid;
        (void) pidfd;
        c->user += ps->utime + ps->cutime;
        c->system += ps->stime + ps->cstime;
}

void tree_cpu_us(struct leash_job *j, uint64_t *ret_user, uint64_t *ret_system) {
        struct cpu_sum c = {0};
        long hz = sysconf(_SC_CLK_TCK);
        uint64_t user, system;

        tree_walk(j, cpu_visit, &c);
        if (hz <= 0)
                hz = 100;
        user = (uint64_t) c.user * USEC_PER_SEC / (uint64_t) hz + j->tree_reaped_user_us;
        system = (uint64_t) c.system * USEC_PER_SEC / (uint64_t) hz + j->tree_reaped_system_us;
        if (j->holder.pid > 0) { /* what the holder reaped, the main process among it */
                struct procstat hs;
                if (procstat_read(AT_FDCWD, j->holder.pid, &hs) == 0) {
                        user += (uint64_t) (hs.utime + hs.cutime) * USEC_PER_SEC / (uint64_t) hz;
                        system += (uint64_t) (hs.stime + hs.cstime) * USEC_PER_SEC / (uint64_t) hz;
                }
        } else if (j->has_main && j->state >= JOB_ENDED) { /* the main process's rusage, its reaped children in it */
                user += tv_us(&j->ru.ru_utime);
                system += tv_us(&j->ru.ru_stime);
        }
        *ret_user = user;
        *ret_system = system;
}

struct pid_list {
        pid_t *pid;
        size_t n, cap;
};

static void pid_visit(struct leash_job *j, pid_t pid, int pidfd, const struct procstat *ps, void *ud) {
        struct pid_list *l = ud;

        (void) j;
        (void) pidfd;
        (void) ps;
        if (l->n == l->cap) {
                size_t cap = l->cap ? l->cap * 2 : 64;
                pid_t *p = realloc(l->pid, cap * sizeof *p);
                if (!p)
                        return;
                l->pid = p;
                l->cap = cap;
        }
        l->pid[l->n++] = pid;
}

int tree_pids(struct leash_job *j, pid_t **ret, size_t *ret_n) {
        struct pid_list l = {0};

        tree_walk(j, pid_visit, &l);
        *ret = l.pid;
        *ret_n = l.n;
        return 0;
}
