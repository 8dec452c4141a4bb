/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The job cgroup's boundary crossed the wrong way (issue 9.4). A job that
 * keeps leash's uid may write any pid into any cgroup.procs (the "none"
 * isolation), and two things follow.
 *
 * Escapees. A process of the job that moved out of the job cgroup is no
 * longer reached by cgroup.kill. leash finds such processes through the
 * process tree, which a process cannot leave: its parent is fixed, and an
 * orphan is reparented to the nearest child subreaper above it. `leash run`
 * makes itself a subreaper (spec.reaper), so every process the job forked
 * stays below leash for as long as it lives, whatever its cgroup: the tree
 * walked from leash's own children (each thread's /proc/self/task/TID/children)
 * holds them all. A caller that is not a subreaper gets the main process's
 * descendants, and only while the main process lives (an orphan goes to init,
 * out of sight). Each process listed is opened as a pidfd, then judged from
 * its /proc files only if it is still the child of the process it was listed
 * under and still alive after they were read: a recycled pid is never named
 * or signalled. An escapee keeps its pidfd, so every signal reaches the
 * process the report names, and "killed" is written only once that pidfd
 * says the process ended after leash signalled it. The tree is walked when leash
 * signals the job (the soft signal, SIGKILL) and when the job has ended: then
 * every live escapee is killed, in rounds until a walk finds none (the
 * children an escapee forks meanwhile are reparented to leash and found by
 * the next round). Orphans that ended as leash's children are reaped here.
 *
 * leash inside the job cgroup. The job can write leash's pid into the job
 * cgroup (or into one it made below it): leash would then freeze itself with
 * cgroup.freeze and never thaw the job, or SIGKILL itself with cgroup.kill.
 * So leash opens its own cgroup (O_PATH) before the job starts, and before it
 * freezes, kills or waits for the job cgroup it reads /proc/self/cgroup:
 * inside, it writes itself back through that fd (else into the cgroup2 root),
 * and the report records it. A job that keeps leash's uid can still win a
 * race against this check, or freeze leash's own cgroup: that is the "none"
 * isolation, which only --isolate or another --user ends.
 */
#include "escape.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../basic/fileio.h"
#include "../../basic/macro.h"
#include "../../basic/procstat.h"
#include "../../basic/time-util.h"
#include "../heldfd.h"
#include "../placement/host.h"
#include "../process/job-object.h"
#include "../placement/placement.h"
#include "../process/proctree.h"

#define WALK_MAX (1u << 18)             /* entries one walk may hold: far above a tree the job can keep alive */
#define FINISH_NS (5ULL * NSEC_PER_SEC) /* walks that kill, at the end: for this long at most */

bool escape_in_job(const struct leash_job *j, const char *rel) {
        const char *job = j->r.cgroup + j->mount_len;
        size_t n = strlen(job);

        if (j->mount_len == 0) /* the job's path in the mount is unknown: no judgement */
                return true;
        return strncmp(rel, job, n) == 0 && (rel[n] == '\0' || rel[n] == '/');
}

/* The cgroup2 path of a process ("/a/b"); pid 0 is leash itself. */
static int proc_cgroup(pid_t pid, char *ret, size_t size) {
        char path[64], text[4096];
        int r;

        if (pid)
                snprintf(path, sizeof path, "/proc/%d/cgroup", (int) pid);
        else
                snprintf(path, sizeof path, "/proc/self/cgroup");
        r = read_file_at(AT_FDCWD, path, text, sizeof text, NULL);
        if (r < 0)
                return r;
        return host_parse_proc_cgroup(text, ret, size);
}

/* ---- leash pulled into the job cgroup ---- */

void escape_home_find(struct leash_job *j, struct placement_cache *cache) {
        if (j->home[0]) /* the placement's decision read it (job_place) */
                return;
        /* a config's jobs: read once per process (a call of a limited
         * function reads no /proc file for it: 40 us of a forked call) */
        if ((cache ? placement_cache_own(cache, j->home, sizeof j->home) : host_own_cgroup(j->home, sizeof j->home)) <
            0)
                j->home[0] = '\0';
}

void escape_home_open(struct leash_job *j) {
        _cleanup_free_ char *path = NULL;

        if (!j->home[0] || j->home_fd >= 0)
                return;
        /* the cgroup2 mount is r.cgroup's first mount_len bytes; the path is
         * on the heap, not in a frame of pages (bench/NOTES.md, row 10) */
        if (asprintf(&path, "%.*s%s", (int) j->mount_len, j->r.cgroup, strcmp(j->home, "/") == 0 ? "" : j->home) < 0) {
                path = NULL;
                return;
        }
        j->home_fd = HELD_FD(open(path, O_PATH | O_DIRECTORY | O_CLOEXEC));
}

/* Writes pid (0: leash) into dfd's cgroup.procs. */
static int move_to(int dfd, pid_t pid) {
        char v[32];
        snprintf(v, sizeof v, "%d", (int) pid);
        return dfd >= 0 ? write_string_at(dfd, "cgroup.procs", v) : -EBADF;
}

/* Moves pid (0: leash) out of the job cgroup: home, else the cgroup2 root. */
static void move_back(struct leash_job *j, pid_t pid, const char *where) {
        struct leash_result *r = &j->r;
        struct leash_moved *m;
        char root[4096];
        int e;

        if (r->n_moved >= ELEMENTSOF(r->moved)) {
                r->moved_unnamed++;
                m = NULL;
        } else {
                m = &r->moved[r->n_moved++];
                memset(m, 0, sizeof *m);
                snprintf(m->cgroup, sizeof m->cgroup, "%s", where);
                m->at_ns = now_ns(CLOCK_MONOTONIC) - j->start_ns;
                m->watchdog = pid != 0;
        }
        e = move_to(j->home_fd, pid);
        if (e >= 0) {
                if (m)
                        snprintf(m->back_to, sizeof m->back_to, "%s", j->home);
                return;
        }
        /* home is gone (the job removed it once leash was out of it) or refuses */
        if (j->mount_len && j->mount_len < sizeof root) {
                _cleanup_close_ int fd = -1;
                memcpy(root, j->r.cgroup, j->mount_len);
                root[j->mount_len] = '\0';
                fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (move_to(fd, pid) >= 0) {
                        if (m)
                                snprintf(m->back_to, sizeof m->back_to, "/");
                        return;
                }
        }
        if (m)
                m->error = -e;
}

int escape_guard(struct leash_job *j) {
        pid_t wd = watchdog_pid(&j->wd);
        char rel[4096];

        if (wd > 0 && proc_cgroup(wd, rel, sizeof rel) >= 0 && escape_in_job(j, rel))
                move_back(j, wd, rel);
        if (proc_cgroup(0, rel, sizeof rel) < 0 || !escape_in_job(j, rel))
                return 0;
        move_back(j, 0, rel);
        if (proc_cgroup(0, rel, sizeof rel) >= 0 && escape_in_job(j, rel)) {
                j->stuck = true;
                return -EBUSY;
        }
        j->stuck = false;
        return 0;
}

/* ---- escapees ---- */

/* One walk of the tree: each entry a pid and the parent it was listed under. */
struct walk {
        pid_t *pid, *parent;
        size_t n, cap;
        bool truncated; /* a list did not fit: the walk may have missed some */
};

static void walk_done(struct walk *w) {
        free(w->pid);
        free(w->parent);
}

static bool walk_push(struct walk *w, pid_t pid, pid_t parent) {
        if (w->n == w->cap) {
                size_t cap = w->cap ? w->cap * 2 : 256;
                pid_t *a, *b;
                if (cap > WALK_MAX)
                        cap = WALK_MAX;
                if (w->n >= cap) {
                        w->truncated = true;
                        return false;
                }
                a = realloc(w->pid, cap * sizeof *a);
                if (a)
                        w->pid = a;
                b = a ? realloc(w->parent, cap * sizeof *b) : NULL;
                if (!b) {
                        w->truncated = true;
                        return false;
                }
                w->parent = b;
                w->cap = cap;
        }
        w->pid[w->n] = pid;
        w->parent[w->n] = parent;
        w->n++;
        return true;
}

static bool walk_child(pid_t child, pid_t parent, void *userdata) {
        return walk_push(userdata, child, parent);
}

/* Appends the children of every thread of pid (0: leash) to the walk. */
static void add_children(pid_t pid, struct walk *w) {
        if (proctree_for_children(pid, walk_child, w) == -ENOMEM)
                w->truncated = true;
}

/* The entry naming this process (pid and start time), or a new one that
 * takes *pidfd; -ENOSPC when escaped[] is full. */
static int entry_for(struct leash_job *j, pid_t pid, unsigned long long start, int *pidfd, bool *ret_new) {
        struct leash_result *r = &j->r;
        unsigned i;

        *ret_new = false;
        for (i = 0; i < r->n_escaped; i++)
                if (r->escaped[i].pid == pid && j->esc_fd[i] >= 0 && j->esc_start[i] == start)
                        return (int) i;
        if (r->n_escaped >= LEASH_ESCAPED_MAX)
                return -ENOSPC;
        i = r->n_escaped++;
        memset(&r->escaped[i], 0, sizeof r->escaped[i]);
        r->escaped[i].pid = pid;
        j->esc_fd[i] = heldfd_take(TAKE_FD(*pidfd));
        j->esc_start[i] = start;
        j->esc_signalled[i] = false;
        *ret_new = true;
        return (int) i;
}

/* A live escapee and escaped[] full: the first entry of one that had ended
 * by itself (a link of a fork-exit chain) gives way, so that the process
 * leash signals is named and not the links before it; the one dropped is
 * counted unnamed. -ENOSPC when every entry is live or signalled. */
static int entry_for_live(struct leash_job *j, pid_t pid, unsigned long long start, int *pidfd, bool *ret_new,
                          size_t *unnamed) {
        struct leash_result *r = &j->r;
        int e = entry_for(j, pid, start, pidfd, ret_new);

        if (e != -ENOSPC)
                return e;
        for (unsigned i = 0; i < r->n_escaped; i++) {
                unsigned rest = r->n_escaped - i - 1;
                if (r->escaped[i].end != LEASH_ESCAPE_ENDED || j->esc_fd[i] < 0 || j->esc_signalled[i])
                        continue;
                heldfd_close(j->esc_fd[i]);
                memmove(&r->escaped[i], &r->escaped[i + 1], rest * sizeof r->escaped[0]);
                memmove(&j->esc_fd[i], &j->esc_fd[i + 1], rest * sizeof j->esc_fd[0]);
                memmove(&j->esc_start[i], &j->esc_start[i + 1], rest * sizeof j->esc_start[0]);
                memmove(&j->esc_signalled[i], &j->esc_signalled[i + 1], rest * sizeof j->esc_signalled[0]);
                j->esc_fd[--r->n_escaped] = -1;
                (*unnamed)++;
                return entry_for(j, pid, start, pidfd, ret_new);
        }
        return -ENOSPC;
}

/* Reaps an orphan of the job that ended as leash's child (reaper mode). */
static void reap_orphan(int pidfd) {
        siginfo_t si;
        (void) syscall(SYS_waitid, P_PIDFD, pidfd, &si, WEXITED | WNOHANG | __WALL, NULL);
}

/* One walk: names and signals the live escapees; *ret_reaped counts the
 * ended orphans reaped (a link of a fork-exit chain that ended: its child,
 * reparented to leash after the walk read leash's children, is only found by
 * the next walk). Returns how many live escapees were found. */
static int scan(struct leash_job *j, int sig, unsigned *ret_reaped) {
        struct walk w = {0};
        struct leash_result *r = &j->r;
        size_t unnamed = 0;
        unsigned reaped = 0;
        int live = 0;
        /* the root: leash (a subreaper), else the main process while it is not reaped */
        bool main_root = !j->spec.reaper && j->has_main && !j->main_ended && j->state == JOB_RUNNING && j->pidfd >= 0;

        if (ret_reaped)
                *ret_reaped = 0;
        if (!j->spec.reaper && !main_root)
                return 0;
        add_children(main_root ? r->pid : 0, &w);
        for (size_t i = 0; i < w.n; i++) {
                _cleanup_close_ int pfd = -1;
                pid_t pid = w.pid[i];
                struct procstat ps;
                char rel[4096];
                struct leash_escapee *x;
                bool fresh;
                int e;

                if (pid == watchdog_pid(&j->wd) || pid <= 0)
                        continue;
                pfd = (int) syscall(SYS_pidfd_open, pid, 0);
                if (pfd < 0 || procstat_read(AT_FDCWD, pid, &ps) < 0 || ps.ppid != w.parent[i] ||
                    proc_cgroup(pid, rel, sizeof rel) < 0)
                        continue; /* gone, or another process by now */
                if (proctree_pidfd_ended(pfd)) {
                        /* ended: judged only as leash's own child, whose zombie keeps its pid */
                        if (!j->spec.reaper || w.parent[i] != getpid() || pid == r->pid)
                                continue;
                        reaped++;
                        if (!escape_in_job(j, rel) && (e = entry_for(j, pid, ps.start, &pfd, &fresh)) >= 0) {
                                x = &r->escaped[e];
                                if (fresh) {
                                        snprintf(x->comm, sizeof x->comm, "%s", ps.comm);
                                        snprintf(x->cgroup, sizeof x->cgroup, "%s", rel);
                                        x->end = LEASH_ESCAPE_ENDED;
                                }
                                reap_orphan(j->esc_fd[e]);
                        } else if (pfd >= 0) {
                                unnamed += !escape_in_job(j, rel); /* found, no room to name it */
                                reap_orphan(pfd);
                        }
                        continue;
                }
                if (pid != r->pid && !escape_in_job(j, rel)) {
                        live++;
                        e = entry_for_live(j, pid, ps.start, &pfd, &fresh, &unnamed);
                        if (e < 0) {
                                unnamed++;
                                if (sig)
                                        (void) proctree_pidfd_signal(pfd, sig);
                        } else {
                                x = &r->escaped[e];
                                snprintf(x->comm, sizeof x->comm, "%s", ps.comm);
                                snprintf(x->cgroup, sizeof x->cgroup, "%s", rel);
                                if (sig && proctree_pidfd_signal(j->esc_fd[e], sig) == 0)
                                        j->esc_signalled[e] = true;
                        }
                }
                add_children(pid, &w); /* after the checks above: its pid is its own */
        }
        if (w.truncated)
                r->escaped_incomplete = true;
        if (unnamed > r->escaped_unnamed)
                r->escaped_unnamed = (unsigned) unnamed;
        walk_done(&w);
        if (ret_reaped)
                *ret_reaped = reaped;
        return live;
}

int escape_scan(struct leash_job *j, int sig) {
        return scan(j, sig, NULL);
}

/* The main process is in the job cgroup itself, said by its pidfd (one
 * ioctl; the cgroup's id is its directory's inode number): true. false: not
 * there, or not known so (an older kernel): its /proc/PID/cgroup says where. */
static bool main_in_job_cgroup(const struct leash_job *j) {
        struct stat st;
        uint64_t id;

        return j->pidfd >= 0 && j->job_fd >= 0 && proctree_pidfd_cgroup_id(j->pidfd, &id) == 0 &&
               fstat(j->job_fd, &st) == 0 && (uint64_t) st.st_ino == id;
}

void escape_check_main(struct leash_job *j, int code, int status) {
        struct leash_result *r = &j->r;
        struct leash_escapee *e;
        char rel[4096], path[64];
        bool by_leash;

        if (main_in_job_cgroup(j) || proc_cgroup(r->pid, rel, sizeof rel) < 0 || escape_in_job(j, rel))
                return;
        if (r->n_escaped >= LEASH_ESCAPED_MAX) {
                r->escaped_unnamed++;
                return;
        }
        e = &r->escaped[r->n_escaped];
        j->esc_fd[r->n_escaped++] = -1; /* its pidfd is the job's own */
        e->pid = r->pid;
        snprintf(e->cgroup, sizeof e->cgroup, "%s", rel);
        snprintf(path, sizeof path, "/proc/%d/comm", (int) r->pid);
        if (read_file_at(AT_FDCWD, path, e->comm, sizeof e->comm, NULL) >= 0)
                e->comm[strcspn(e->comm, "\n")] = '\0';
        by_leash = (code == CLD_KILLED || code == CLD_DUMPED) &&
                   ((status == SIGKILL && j->killed) || (status == j->spec.soft_signal && j->soft_sent));
        e->end = by_leash ? LEASH_ESCAPE_KILLED : LEASH_ESCAPE_ENDED;
}

/* Waits (bounded) until every escapee leash holds has ended. */
static void wait_ended(struct leash_job *j, int timeout_ms) {
        proctree_wait_ended(j->esc_fd, j->r.n_escaped, timeout_ms);
}

bool escape_finish(struct leash_job *j, unsigned *ret_killed) {
        struct leash_result *r = &j->r;
        uint64_t deadline = now_ns(CLOCK_MONOTONIC) + FINISH_NS;
        bool any = false, clean = false;
        int live;

        /* Walks until one finds nothing alive and reaps nothing: a job that
         * churns (a fork-exit chain) always leaves either a live process or
         * the zombie of the link that just forked the next one, whose child
         * the next walk finds reparented to leash. Bounded in time: a job
         * that outruns the walks is said to (escaped_incomplete), never
         * called ended. */
        for (;;) {
                unsigned reaped;
                live = scan(j, SIGKILL, &reaped);
                /* the ones named before, wherever they are now (back in the job cgroup too) */
                for (unsigned i = 0; i < r->n_escaped; i++)
                        if (j->esc_fd[i] >= 0 && !proctree_pidfd_ended(j->esc_fd[i]) &&
                            proctree_pidfd_signal(j->esc_fd[i], SIGKILL) == 0) {
                                j->esc_signalled[i] = true;
                                live++;
                        }
                *ret_killed += (unsigned) live;
                if (live == 0 && reaped == 0) {
                        clean = true;
                        break;
                }
                any = true;
                if (now_ns(CLOCK_MONOTONIC) >= deadline)
                        break; /* outrun: a link may be alive between two walks */
                if (live)
                        wait_ended(j, 200);
        }
        wait_ended(j, 1000);
        for (unsigned i = 0; i < r->n_escaped; i++) {
                if (j->esc_fd[i] < 0)
                        continue; /* the main process: settled when it was reaped */
                if (!proctree_pidfd_ended(j->esc_fd[i]))
                        r->escaped[i].end = LEASH_ESCAPE_RUNNING;
                else if (r->escaped[i].end != LEASH_ESCAPE_ENDED)
                        r->escaped[i].end = j->esc_signalled[i] ? LEASH_ESCAPE_KILLED : LEASH_ESCAPE_ENDED;
                if (j->spec.reaper)
                        reap_orphan(j->esc_fd[i]);
        }
        if (!clean)
                r->escaped_incomplete = true;
        if (any && j->spec.reaper) {
                unsigned reaped;
                /* reaps the orphans killed above (unnamed ones too); one still
                 * alive now outran every walk */
                if (scan(j, 0, &reaped) > 0)
                        r->escaped_incomplete = true;
        }
        return !any;
}

void escape_close(struct leash_job *j) {
        for (unsigned i = 0; i < LEASH_ESCAPED_MAX; i++)
                if (j->esc_fd[i] >= 0) {
                        heldfd_close(j->esc_fd[i]);
                        j->esc_fd[i] = -1;
                }
        if (j->home_fd >= 0) {
                heldfd_close(j->home_fd);
                j->home_fd = -1;
        }
}
