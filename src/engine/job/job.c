/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The job object: the whole life of one job.
 *
 *   new     resolve and open the cgroup parent, enable controllers, plan how
 *           each limit is enforced (strict refuses here, before anything
 *           exists), mkdir the job cgroup, write its limits, start its
 *           watchdog (watchdog.c)
 *   adopt   the same on a cgroup the caller already has, which may hold no
 *           main process at all; owned (LEASH_ADOPT_OWNED): a cgroup its
 *           owner ends, empty between the tasks it places (Slurm's job), so
 *           its emptying ends nothing, finish kills nothing, no watchdog
 *   start   clone3 into the cgroup and exec (spawn.c), or
 *   fork    clone3 into the cgroup and return in the child; then, beside the
 *           job, sweep job cgroups of this parent whose leash died
 *   watch   the events (supervise.c): wait, or fd + dispatch
 *   finish  kill what the main process left behind, wait for the cgroup to
 *           empty, read the accounting (account.c), rmdir (depth-first),
 *           stop the watchdog
 *
 * Every failure after the cgroup exists kills what runs in it and removes
 * it: nothing is left behind on any path. Nothing here touches process-wide
 * state: no signal mask or disposition, no environment variable, no static
 * buffer; every process made has exit signal 0 and a pidfd.
 */
#include "../process/job-object.h"
#include "job.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../basic/fileio.h"
#include "../../basic/macro.h"
#include "../../basic/time-util.h"
#include "../cgroup/account.h"
#include "../cgroup/cgroupfs.h"
#include "escape.h"
#include "../heldfd.h"
#include "../placement/host.h"
#include "job-devices.h"
#include "../placement/jobstate.h"
#include "../placement/placement.h"
#include "../sample/sample.h"
#include "../process/spawn.h"
#include "supervise.h"
#include "../placement/sweep.h"
#include "../process/tree.h"
#include "../process/undumpable.h"

/* basename of the command, made safe for a cgroup name */
static void default_name(const char *argv0, char *buf, size_t size) {
        const char *b = strrchr(argv0, '/');
        size_t n = 0;

        b = b ? b + 1 : argv0;
        for (; *b && n + 1 < size && n < 64; b++) {
                bool keep = *b == '_' || *b == '-' || (*b == '.' && n > 0) || (*b >= '0' && *b <= '9') ||
                            (*b >= 'a' && *b <= 'z') || (*b >= 'A' && *b <= 'Z');
                buf[n++] = keep ? *b : '_';
        }
        buf[n] = '\0';
        if (n == 0)
                snprintf(buf, size, "job");
}

/* Zeroed but for the result's tail (its cgroup path and the escapee and
 * moved arrays, 15 KiB of 19: written before they are read). A job is made
 * per call of a limited function, and in a forked caller each page written
 * costs a fault (bench/NOTES.md, row 10). */
static struct leash_job *job_alloc(const struct leash_spec *spec) {
        struct leash_job *j = malloc(sizeof *j);

        if (!j)
                return NULL;
        /* zeroed up to the device rules, and the result's head: the arrays
         * between and the result's tail are written before they are read
         * (each page zeroed here is a fault in a forked caller) */
        memset(j, 0, offsetof(struct leash_job, dev_rule));
        memset(&j->r, 0, offsetof(struct leash_result, cgroup));
        j->r.cgroup[0] = '\0';
        j->spec = *spec;
        j->parent_fd = j->job_fd = j->pidfd = j->timer_fd = j->events_fd = j->epoll_fd = j->setup_fd = -1;
        j->home_fd = -1;
        account_files_init(&j->acct);
        for (unsigned i = 0; i < LEASH_ESCAPED_MAX; i++)
                j->esc_fd[i] = -1;
        j->iso = (struct isolate_plan) ISOLATE_PLAN_INIT;
        j->holder = (struct holder) HOLDER_INIT;
        j->r.status_code = -1;
        j->r.reason = LEASH_REASON_OK;
        account_usage_init(&j->r.usage);
        sampler_result(NULL, &j->r.sampling);
        for (int d = 0; d < _DEADLINE_MAX; d++)
                j->deadline[d] = DEADLINE_NEVER;
        return j;
}

static void job_close(struct leash_job *j) {
        int *fds[] = {&j->parent_fd, &j->job_fd, &j->pidfd, &j->timer_fd, &j->events_fd, &j->epoll_fd, &j->setup_fd};
        for (size_t i = 0; i < ELEMENTSOF(fds); i++)
                if (*fds[i] >= 0) {
                        heldfd_close(*fds[i]);
                        *fds[i] = -1;
                }
        account_files_close(&j->acct);
}

/* Its processes are about to exist: none of them may ptrace this one. */
static void job_hold_undumpable(struct leash_job *j) {
        if (!j->undumpable && j->spec.exit_after)
                undumpable_hold_to_exit();
        else if (!j->undumpable)
                undumpable_hold();
        j->undumpable = true;
}

static void job_release_undumpable(struct leash_job *j) {
        if (j->undumpable)
                undumpable_release();
        j->undumpable = false;
}

/* The job's descriptors closed and the caller's dumpability given back,
 * unless the caller's exit does both (spec.exit_after). */
static void job_let_go(struct leash_job *j) {
        if (j->spec.exit_after)
                return;
        job_release_undumpable(j);
        job_close(j);
        escape_close(j);
}

static void job_destroy(struct leash_job *j) {
        if (!j)
                return;
        watchdog_stop(&j->wd);
        if (j->holder.pid > 0) { /* never finished: the tree goes with it */
                (void) tree_kill_all(j);
                holder_release(&j->holder, NULL);
        }
        job_let_go(j);
        sampler_free(j->sampler);
        sandbox_plan_done(&j->plan);
        isolate_plan_done(&j->iso);
        for (char **a = j->argv; a && *a; a++)
                free(*a);
        free(j->argv);
        if (j->settings)
                j->settings_free(j->settings);
        free(j);
}

/* Refuses, before anything exists, what --strict forbids: every limit a
 * cgroup cannot enforce here is named in the detail (the caller can say why
 * and the remedy of each with leash_limit_weakness). */
static int check_strict(const struct leash_job *j, struct leash_error *err) {
        char names[128] = "";
        size_t n = 0;

        if (!j->spec.strict)
                return 0;
        for (int l = 0; l < _LEASH_LIMIT_MAX; l++) {
                char line[512];
                if (leash_limit_weakness(&j->spec, j->r.enforced, j->r.enforce_note, (enum leash_limit) l, true, line,
                                         sizeof line) > 0 &&
                    n < sizeof names)
                        n += (size_t) snprintf(names + n, sizeof names - n, "%s%s", n ? ", " : "",
                                               leash_limit_to_string((enum leash_limit) l));
        }
        if (n)
                return leash_error_set(err, "enforce every limit by cgroup (--strict)", names, -EOPNOTSUPP);
        return 0;
}

/* A job in a unit leash is not in (placement.joined): its watchdog leaves
 * leash's cgroup for the parent's leaf PLACEMENT_LEAF, so that the
 * final SIGKILL of a `systemctl stop` of the unit that started leash, which
 * reaches every process in that unit, kills leash and not its watchdog:
 * the job, outside that unit, then dies with leash. */
static int watch_outside(const struct leash_job *j) {
        _cleanup_close_ int leaf = -1;
        char v[32];

        if (mkdirat(j->parent_fd, PLACEMENT_LEAF, 0755) < 0 && errno != EEXIST)
                return negative_errno();
        leaf = openat(j->parent_fd, PLACEMENT_LEAF, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (leaf < 0)
                return negative_errno();
        snprintf(v, sizeof v, "%d", (int) watchdog_pid(&j->wd));
        return write_string_at(leaf, "cgroup.procs", v);
}

/* What both new and adopt do once the job cgroup is open: limits, timer,
 * watchdog. On failure the caller removes what it made. */
static int job_arm(struct leash_job *j, struct watchdog_pool *watch, struct leash_error *err) {
        int r = j->no_cgroup ? 0 : cgroupfs_apply_limits(j->job_fd, &j->spec, j->r.enforced, err);
        if (r < 0)
                return r;
        r = job_devices_attach(j, err);
        if (r < 0)
                return r;
        j->timer_fd = HELD_FD(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK));
        if (j->timer_fd < 0)
                return leash_error_set(err, "create a timerfd", "", negative_errno());
        if (j->no_cgroup) /* no cgroup to remove; the main process has a parent-death signal */
                return 0;
        if (j->owned) /* its owner removes it, whether or not this process lives */
                return 0;
        /* the manager moves leash into the parent's leaf meanwhile (the job
         * cgroup and its limits above did not need it there): the watchdog,
         * the job's first process, starts in the leaf */
        r = j->attaching ? placement_settle(err) : 0;
        if (r < 0)
                return r;
        r = watchdog_start(&j->wd, watch, j->parent_fd, j->job_fd, j->dirname, j->remove_cgroup);
        if (r < 0)
                return leash_error_set(err, "start the watchdog", "", r);
        if (j->joined) {
                r = watch_outside(j);
                if (r < 0)
                        return leash_error_set(err, "move the watchdog into " PLACEMENT_LEAF, j->r.cgroup, r);
        }
        return 0;
}

/*
 * What a new and an adopted job resolve before any cgroup or process exists:
 * identity, capabilities, filter and environment, the isolation mode, and
 * the sampler (which opens --sample-disk).
 */
static int job_prepare(struct leash_job *j, const struct leash_spec *spec, struct leash_error *err) {
        int r;

        r = job_devices_prepare(j, err);
        if (r < 0)
                return r;
        r = sandbox_prepare(&j->spec.sandbox, &j->plan, &j->r.sandbox, err);
        if (r < 0)
                return r;
        r = isolate_prepare(spec->sandbox.isolate, false, &j->iso, err);
        if (r < 0)
                return r;
        j->r.isolation = isolate_describe(spec, &j->r, j->iso.on);
        return sampler_new(&spec->sampling, &j->sampler, err);
}

/* Where the job cgroup goes (placement.c): the parent's path into r.cgroup,
 * the decision into the result. cache: the config's (NULL: decided now). */
static int job_place(struct leash_job *j, struct placement_cache *cache, struct leash_error *err) {
        _cleanup_free_ struct placement *p = malloc(sizeof *p);
        int r;

        if (!p)
                return leash_error_set(err, "decide the placement", "", -ENOMEM);
        r = cache ? placement_cached(cache, j->spec.cgroup_parent, p, err)
                  : placement_decide(j->spec.cgroup_parent, true, p, err);
        if (r < 0)
                return r;
        j->r.placement = p->kind;
        snprintf(j->r.placement_why, sizeof j->r.placement_why, "%s", p->why);
        snprintf(j->r.cgroup, sizeof j->r.cgroup, "%s", p->parent);
        j->mount_len = p->kind == PLACEMENT_NONE ? 0 : p->mount_len;
        /* the escape home as the decision read it: no second read of
         * /proc/self/cgroup (a config's jobs have it from their cache) */
        if (!cache && strlen(p->own) < sizeof j->home)
                strcpy(j->home, p->own);
        if (p->kind == PLACEMENT_NONE && j->spec.strict)
                return leash_error_set(err, PLACEMENT_STRICT_STEP, p->why, p->error ? -p->error : -EOPNOTSUPP);
        j->no_cgroup = p->kind == PLACEMENT_NONE;
        j->joined = p->joined;
        j->attaching = p->attaching;
        if (j->no_cgroup && j->r.isolation && strncmp(j->r.isolation, "none:", 5) == 0)
                j->r.isolation = "none: the job shares leash's uid and can stop leash (no cgroup: the job is leash's "
                                 "process tree)";
        return 0;
}

/* Placement none: no cgroup, the job is its process tree (tree.c). What is
 * enforced and by what: time limits by leash over the tree, memory by
 * RLIMIT_AS per process, nofile/fsize/core by rlimits; the rest by nothing. */
static int job_new_treeonly(struct leash_job *j, struct watchdog_pool *watch, struct leash_error *err) {
        static const char no_cg[] = "no cgroup (placement none): not enforced";

        cgroupfs_plan_enforcement(&j->spec, 0, j->r.enforced, j->r.enforce_note);
        for (int l = 0; l < _LEASH_LIMIT_MAX; l++) {
                if (!leash_spec_has(&j->spec, (enum leash_limit) l))
                        continue;
                if (l == LEASH_LIMIT_MEMORY)
                        j->r.enforce_note[l] = "no cgroup (placement none): RLIMIT_AS per process (address space, "
                                               "not the tree's memory)";
                else if (l == LEASH_LIMIT_CPU_TIME)
                        j->r.enforce_note[l] =
                                "no cgroup (placement none): by leash over the job's process tree, at checks paced by "
                                "what is left; usage.cpu_time_s is a lower bound: the live processes' times (clock "
                                "ticks) and the rusage of each process leash or a job process reaped";
                else if (l == LEASH_LIMIT_WALL_TIME)
                        j->r.enforce_note[l] = "no cgroup (placement none): by leash over the job's process tree";
                else if (j->r.enforced[l] == LEASH_BY_NONE)
                        j->r.enforce_note[l] = no_cg;
        }
        return job_arm(j, watch, err);
}

/* The sweep's mark and `leash ps`'s record on the job cgroup leash made,
 * written once its main process runs (beside the child's own start: a
 * forked Python call no longer waits for it). Its pid namespace is read once,
 * for the record and the sweep: unknown, no record (never swept) and no
 * sweep (namespaces not told apart). Until the record is there, the sweep of
 * another leash passes the cgroup by (it removes only what is marked). */
static void job_record(struct leash_job *j) {
        if (jobstate_own_pidns(&j->pidns) < 0)
                j->pidns = 0;
        else
                (void) jobstate_write(j->job_fd, &j->spec, j->name, j->pidns);
}

/* watch: the pool of the config the job is made from (NULL: its own
 * watchdog); place: its placement cache (NULL: decided for this job) */
static int job_new_once(const struct leash_spec *spec, struct watchdog_pool *watch, struct placement_cache *place,
                        struct leash_job **ret, struct leash_error *err) {
        struct leash_job *j;
        char name[80], *parent;
        unsigned available = 0;
        size_t plen;
        int r;

        r = leash_spec_validate(spec, err);
        if (r < 0)
                return r;
        j = job_alloc(spec);
        if (!j)
                return leash_error_set(err, "allocate the job", "", -ENOMEM);
        j->remove_cgroup = true;
        r = job_prepare(j, spec, err);
        if (r < 0)
                goto fail;
        /* the parent's path is built where the job's will be: r.cgroup */
        parent = j->r.cgroup;
        j->sweep = !place || placement_cache_sweep_due(place);
        r = job_place(j, place, err);
        if (r < 0)
                goto fail;
        if (j->no_cgroup) {
                r = job_new_treeonly(j, watch, err);
                if (r < 0)
                        goto fail;
                *ret = j;
                return 0;
        }
        j->parent_fd = HELD_FD(open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (j->parent_fd < 0) {
                r = leash_error_set(err, "open the cgroup parent", parent, negative_errno());
                goto fail;
        }
        r = cgroupfs_enable_controllers(j->parent_fd, CTL_MEMORY | CTL_PIDS | CTL_CPU | CTL_IO, &available);
        if (r < 0) {
                leash_error_set(err, "read the controllers of the cgroup parent", parent, r);
                goto fail;
        }
        cgroupfs_plan_enforcement(&j->spec, available, j->r.enforced, j->r.enforce_note);
        j->controllers = available;
        r = check_strict(j, err);
        if (r < 0)
                goto fail;

        if (spec->name)
                snprintf(name, sizeof name, "%s", spec->name);
        else
                default_name(spec->argv && spec->argv[0] ? spec->argv[0] : "job", name, sizeof name);
        r = cgroupfs_create_job(j->parent_fd, name, j->dirname, sizeof j->dirname, &j->job_fd);
        if (r >= 0 && (j->job_fd = heldfd_take(j->job_fd)) < 0)
                r = j->job_fd;
        if (r < 0) {
                leash_error_set(err, "create the job cgroup", parent, r);
                goto fail;
        }
        snprintf(j->name, sizeof j->name, "%s", name); /* recorded as the job starts: begin() */
        plen = strlen(parent);
        r = snprintf(parent + plen, sizeof j->r.cgroup - plen, "/%s", j->dirname);
        if (r < 0 || (size_t) r >= sizeof j->r.cgroup - plen) {
                parent[plen] = '\0';
                r = leash_error_set(err, "create the job cgroup (its path is too long)", parent, -ENAMETOOLONG);
                (void) cgroupfs_remove(j->parent_fd, j->dirname, j->job_fd);
                goto fail;
        }
        r = job_arm(j, watch, err);
        if (r < 0) {
                (void) cgroupfs_remove(j->parent_fd, j->dirname, j->job_fd);
                goto fail;
        }
        /* where leash goes back to if the job pulls it in (opened by begin()):
         * read once leash is where the placement put it (job_arm) */
        escape_home_find(j, place);
        *ret = j;
        return 0;
fail:
        job_destroy(j);
        return r;
}

/* A manager that refuses to move leash into the shared unit's leaf says so
 * after the job's cgroup was made (placement_settle; it is removed): the job
 * is made once more, and its decision goes on to a scope of its own. */
static int job_new(const struct leash_spec *spec, struct watchdog_pool *watch, struct placement_cache *place,
                   struct leash_job **ret, struct leash_error *err) {
        bool refused = placement_attach_refused();
        int r = job_new_once(spec, watch, place, ret, err);

        if (r < 0 && !refused && placement_attach_refused())
                r = job_new_once(spec, watch, place, ret, err);
        return r;
}

int leash_job_new_spec(const struct leash_spec *spec, struct leash_job **ret, struct leash_error *err) {
        return job_new(spec, NULL, NULL, ret, err);
}

/* An owned cgroup gets no main process: no sandbox to prepare, only the
 * device program's rules (--gpus/--devices hold its processes too: without
 * them the program would refuse every device) and the sampler. */
static int job_prepare_owned(struct leash_job *j, const struct leash_spec *spec, struct leash_error *err) {
        int r = job_devices_prepare(j, err);
        return r < 0 ? r : sampler_new(&spec->sampling, &j->sampler, err);
}

/* The adopted cgroup's absolute path (a path under the cgroup2 mount, or
 * one relative to it), normalised; not the root, which has no cgroup.procs.
 * *ret_slash: its last '/'. */
static int adopt_path(const char *cgroup, char *path, size_t size, char **ret_slash, size_t *ret_mount_len,
                      struct leash_error *err) {
        char mount[4096], *slash;
        size_t ml;
        int r;

        r = host_cgroup2_mount_fast(mount, sizeof mount);
        if (r < 0)
                return leash_error_set(err, "find the cgroup2 mount", "", r);
        ml = strlen(mount);
        if (strncmp(cgroup, mount, ml) == 0 && (cgroup[ml] == '/' || !cgroup[ml]))
                r = snprintf(path, size, "%s", cgroup);
        else
                r = snprintf(path, size, "%s/%s", mount, cgroup[0] == '/' ? cgroup + 1 : cgroup);
        if (r < 0 || (size_t) r >= size || strstr(path, "/../") || strstr(path, "/./"))
                return leash_error_set(err, "adopt a cgroup", cgroup, -EINVAL);
        while (strlen(path) > ml + 1 && path[strlen(path) - 1] == '/')
                path[strlen(path) - 1] = '\0';
        slash = strrchr(path, '/');
        if (!slash || slash <= path + ml - 1 || strlen(slash + 1) >= sizeof((struct leash_job *) 0)->dirname)
                return leash_error_set(err, "adopt a cgroup", cgroup, -EINVAL);
        *ret_slash = slash;
        *ret_mount_len = ml;
        return 0;
}

/* The adopted cgroup's fds (its parent, itself, its cgroup.events) and what
 * it has: its own controllers decide how each limit is enforced. */
static int adopt_open(struct leash_job *j, char *path, char *slash, struct leash_error *err) {
        char ctl[512];
        int r;

        *slash = '\0';
        j->parent_fd = HELD_FD(open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        *slash = '/';
        if (j->parent_fd < 0)
                return leash_error_set(err, "open the adopted cgroup's parent", path, negative_errno());
        j->job_fd = HELD_FD(openat(j->parent_fd, j->dirname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (j->job_fd < 0)
                return leash_error_set(err, "open the adopted cgroup", path, negative_errno());
        j->events_fd = HELD_FD(openat(j->job_fd, "cgroup.events", O_RDONLY | O_CLOEXEC));
        if (j->events_fd < 0)
                return leash_error_set(err, "open the adopted cgroup's cgroup.events", path, negative_errno());
        r = read_file_at(j->job_fd, "cgroup.controllers", ctl, sizeof ctl, NULL);
        if (r < 0)
                return leash_error_set(err, "read the controllers of the adopted cgroup", path, r);
        j->controllers = cgroupfs_parse_controllers(ctl);
        cgroupfs_plan_enforcement(&j->spec, j->controllers, j->r.enforced, j->r.enforce_note);
        return 0;
}

static int job_adopt(const struct leash_spec *spec, const char *cgroup, unsigned flags, struct watchdog_pool *watch,
                     struct leash_job **ret, struct leash_error *err) {
        struct leash_job *j;
        char path[4096], *slash = NULL;
        size_t mount_len = 0;
        int r;

        if (!cgroup || !cgroup[0] || (flags & ~(unsigned) (LEASH_ADOPT_REMOVE | LEASH_ADOPT_OWNED)))
                return leash_error_set(err, "adopt a cgroup", cgroup ? cgroup : "", -EINVAL);
        r = leash_spec_validate(spec, err);
        if (r < 0)
                return r;
        r = adopt_path(cgroup, path, sizeof path, &slash, &mount_len, err);
        if (r < 0)
                return r;
        j = job_alloc(spec);
        if (!j)
                return leash_error_set(err, "allocate the job", "", -ENOMEM);
        j->adopted = true;
        j->remove_cgroup = flags & LEASH_ADOPT_REMOVE;
        j->owned = flags & LEASH_ADOPT_OWNED;
        r = j->owned ? job_prepare_owned(j, spec, err) : job_prepare(j, spec, err);
        if (r < 0)
                goto fail;
        snprintf(j->dirname, sizeof j->dirname, "%s", slash + 1);
        snprintf(j->r.cgroup, sizeof j->r.cgroup, "%s", path);
        j->r.placement = PLACEMENT_ADOPTED;
        snprintf(j->r.placement_why, sizeof j->r.placement_why, "%s",
                 j->owned ? "adopted: a cgroup its owner made and places processes in; leash moved nothing"
                          : "adopted: a cgroup leash's caller made");
        j->mount_len = mount_len;
        escape_home_find(j, NULL);
        escape_home_open(j);
        r = adopt_open(j, path, slash, err);
        if (r < 0)
                goto fail;
        r = check_strict(j, err);
        if (r < 0)
                goto fail;
        r = job_arm(j, watch, err);
        if (r < 0)
                goto fail;
        /* supervised from now: the time limits count from the adoption */
        j->r.started_realtime_ns = now_ns(CLOCK_REALTIME);
        j->start_ns = now_ns(CLOCK_MONOTONIC);
        j->state = JOB_RUNNING;
        r = supervise_begin(j);
        if (r < 0) {
                leash_error_set(err, "supervise the adopted cgroup", path, r);
                goto fail;
        }
        *ret = j;
        return 0;
fail:
        job_destroy(j);
        return r;
}

int leash_job_adopt_spec(const struct leash_spec *spec, const char *cgroup, unsigned flags, struct leash_job **ret,
                         struct leash_error *err) {
        return job_adopt(spec, cgroup, flags, NULL, ret, err);
}

static void add_rlimit(struct spawn_params *sp, int resource, const struct leash_spec *c, enum leash_limit l) {
        uint64_t v = c->limit[l];

        if (!leash_spec_has(c, l))
                return;
        sp->rlimits[sp->n_rlimits].resource = resource;
        sp->rlimits[sp->n_rlimits].value = v == LEASH_MAX ? RLIM_INFINITY : (rlim_t) v;
        sp->n_rlimits++;
}

static void spawn_params_fill(struct leash_job *j, struct spawn_params *sp) {
        const struct leash_spec *c = &j->spec;

        memset(sp, 0, sizeof *sp);
        sp->argv = j->argv;
        sp->cgroup_fd = j->job_fd;
        sp->child_mask = c->child_sigmask;
        sp->force_fallback = c->spawn_fallback;
        sp->raw_fork = c->spawn_raw_fork;
        sp->sigchld_ignored = c->child_sigchld_ignore;
        sp->sandbox = &j->plan;
        sp->isolate = j->iso.on ? &j->iso : NULL;
        /* no cgroup, and a caller that is no subreaper: the tree needs a holder */
        sp->holder = j->no_cgroup && !c->reaper && !j->iso.on ? &j->holder : NULL;
        if (j->r.enforced[LEASH_LIMIT_MEMORY] == LEASH_BY_RLIMIT)
                add_rlimit(sp, RLIMIT_AS, c, LEASH_LIMIT_MEMORY);
        add_rlimit(sp, RLIMIT_NOFILE, c, LEASH_LIMIT_NOFILE);
        add_rlimit(sp, RLIMIT_FSIZE, c, LEASH_LIMIT_FSIZE);
        add_rlimit(sp, RLIMIT_CORE, c, LEASH_LIMIT_CORE);
}

static int begin(struct leash_job *j, struct leash_error *err) {
        int r;

        j->has_main = true;
        j->state = JOB_RUNNING;
        /* The sweep (sweep.c: only what leash made and marked) waits until the
         * job runs: it is housekeeping for cgroups of dead leashes, nothing the
         * job needs, so its directory walk runs beside the job's start instead
         * of before it (a forked Python call waited 0.1-0.2 ms for it). A
         * job starts once, and of a config's jobs only the first in a process
         * sweeps (a limited function called again and again walks once); an
         * adopted cgroup's parent is not leash's to sweep. */
        if (j->name[0])
                job_record(j);
        escape_home_open(j);
        if (!j->adopted && !j->no_cgroup && j->sweep && j->pidns)
                (void) sweep_stale(j->parent_fd, j->pidns);
        /* what finish reads, opened now that the child runs: only the reads
         * are left between the job's end and its report */
        if (!j->no_cgroup)
                account_files_open(j->job_fd, j->controllers, &j->acct);
        r = supervise_begin(j);
        if (r < 0) {
                supervise_kill_now(j, "leash_error");
                return leash_error_set(err, "supervise the job", "", r);
        }
        return 0;
}

static int may_start(const struct leash_job *j, struct leash_error *err) {
        if (j->has_main || j->state >= JOB_ENDED)
                return leash_error_set(err, "start the job", "the job already has a main process or has ended", -EBUSY);
        if (j->owned)
                return leash_error_set(err, "start the job", "an owned cgroup's processes are placed by its owner",
                                       -EBUSY);
        return 0;
}

/* The child could not be created in the job cgroup. Refused (EACCES): cgroup
 * v2 lets a process be moved only by a writer of the cgroup.procs of the
 * common ancestor of where it is and where it goes; an unprivileged leash
 * whose own cgroup is outside the delegated subtree cannot place its job. */
static int start_refused(const struct leash_job *j, const struct spawn_params *sp, int r, struct leash_error *err) {
        char own[256], detail[sizeof err->detail];

        if ((r != -EACCES && r != -EPERM) || sp->cgroup_fd < 0 || geteuid() == 0 ||
            host_own_cgroup(own, sizeof own) < 0)
                return leash_error_set(err, "start the job", "", r);
        snprintf(detail, sizeof detail,
                 "uid %u may not move it from %s into %s: cgroup v2 asks for write access to their common "
                 "ancestor's cgroup.procs; have root move your shell into the subtree (leash check's remedy)",
                 (unsigned) geteuid(), own, j->r.cgroup);
        return leash_error_set(err, "create the job in its cgroup", detail, r);
}

int leash_job_start(struct leash_job *j, char *const argv[], struct leash_error *err) {
        struct spawn_params sp;
        struct spawn_failure sf;
        bool used_clone3;
        size_t n = 0;
        int r;

        if (!j || !argv || !argv[0] || !argv[0][0])
                return leash_error_set(err, "parse", "no command given", -EINVAL);
        r = may_start(j, err);
        if (r < 0)
                return r;
        while (argv[n])
                n++;
        j->argv = calloc(n + 1, sizeof *j->argv);
        if (!j->argv)
                return leash_error_set(err, "start the job", "", -ENOMEM);
        for (size_t i = 0; i < n; i++)
                if (!(j->argv[i] = strdup(argv[i])))
                        return leash_error_set(err, "start the job", "", -ENOMEM);
        j->spec.argv = j->argv;
        spawn_params_fill(j, &sp);
        if (!j->adopted) {
                j->r.started_realtime_ns = now_ns(CLOCK_REALTIME);
                j->start_ns = now_ns(CLOCK_MONOTONIC);
        }
        job_hold_undumpable(j);
        r = spawn_job(&sp, &j->r.pid, &j->pidfd, &sf, &used_clone3);
        /* marked after the exec: a fork in another thread meanwhile may copy
         * this pidfd (a pidfd signals with kill(2)'s permission checks). On
         * failure the child runs in the cgroup, which finish kills and removes. */
        if (r >= 0 && (j->pidfd = heldfd_take(j->pidfd)) < 0 && sf.step == SPAWN_STEP_NONE)
                r = -ENOMEM;
        if (j->iso.status_wfd >= 0) { /* the init's end */
                close(j->iso.status_wfd);
                j->iso.status_wfd = -1;
        }
        if (r < 0)
                return start_refused(j, &sp, r, err);
        j->r.sandbox.applied = sf.step == SPAWN_STEP_NONE;
        if (sf.step != SPAWN_STEP_NONE)
                return supervise_start_failed(j, &sf, err);
        return begin(j, err);
}

pid_t leash_job_fork(struct leash_job *j, struct leash_error *err) {
        struct spawn_params sp;
        struct spawn_failure sf;
        int r;

        if (!j)
                return leash_error_set(err, "fork into the job", "", -EINVAL);
        r = may_start(j, err);
        if (r < 0)
                return r;
        if (j->iso.on)
                return leash_error_set(err, "fork into the job", "--isolate isolates a command, not a forked function",
                                       -EOPNOTSUPP);
        spawn_params_fill(j, &sp);
        if (!j->adopted) {
                j->r.started_realtime_ns = now_ns(CLOCK_REALTIME);
                j->start_ns = now_ns(CLOCK_MONOTONIC);
        }
        job_hold_undumpable(j);
        r = spawn_fork(&sp, &j->r.pid, &j->pidfd, &sf, &j->setup_fd);
        if (r < 0)
                return leash_error_set(err, "fork into the job", "", r);
        if (r > 0) {
                j->undumpable = false; /* the child's copy: spawn_fork gave it back the caller's state */
                return 0;              /* the child */
        }
        j->forked = true;
        sampler_set_forked(j->sampler);
        /* with a setup fd, known when the child has ended (supervise.c, setup_collect) */
        j->r.sandbox.applied = sf.step == SPAWN_STEP_NONE && j->setup_fd < 0;
        if (sf.step != SPAWN_STEP_NONE)
                return supervise_start_failed(j, &sf, err);
        r = begin(j, err);
        return r < 0 ? r : j->r.pid;
}

static enum leash_reason decide(const struct leash_result *r, enum leash_reason cause, int *ret_exit) {
        const struct leash_usage *u = &r->usage;
        bool failed = r->term_signal || r->status_code != 0;
        int own = r->term_signal ? 128 + r->term_signal : r->status_code < 0 ? 0 : r->status_code;

        if (cause == LEASH_REASON_WALL_TIME || cause == LEASH_REASON_CPU_TIME) {
                *ret_exit = 124;
                return cause;
        }
        if (cause == LEASH_REASON_MEASURED) {
                *ret_exit = own; /* like an OOM kill: what the job died of */
                return cause;
        }
        if (cause == LEASH_REASON_INTERRUPTED) {
                *ret_exit = 128 + r->interrupt_signal;
                return cause;
        }
        *ret_exit = own;
        if (u->mem_ev_oom_kill != LEASH_NULL && u->mem_ev_oom_kill > 0)
                return LEASH_REASON_MEMORY;
        if (failed && u->pids_events_max != LEASH_NULL && u->pids_events_max > 0)
                return LEASH_REASON_PIDS;
        if (cause == LEASH_REASON_KILLED)
                return cause;
        /* SIGXFSZ is what the kernel sends at a write past RLIMIT_FSIZE, which
         * leash set: the main process's own death says so. A shell's child
         * that died of it is only the shell's status 153: an exit (the
         * summary names the limit as a possible cause, report.c) */
        if (r->term_signal == SIGXFSZ && r->enforced[LEASH_LIMIT_FSIZE] == LEASH_BY_RLIMIT)
                return LEASH_REASON_FSIZE;
        if (r->term_signal)
                return LEASH_REASON_SIGNAL;
        return r->status_code > 0 ? LEASH_REASON_EXIT : LEASH_REASON_OK;
}

/* A forked main process's ru_maxrss is not its own: fork copies the caller's
 * page tables and high-water mark (a caller holding 400 MB made a call that
 * returns 1 read 429 MB), and exec keeps the larger of the old mm's mark and
 * the new. Resetting the mark in the child (clear_refs 5) only lowers it to
 * the current RSS, the inherited pages still in it; the peak minus what was
 * inherited is no bound either way (the child may unmap inherited pages and
 * allocate as much anew, or fault in the caller's file pages). So: null,
 * and memory_peak_note says why. */
static const char forked_maxrss_note[] =
        "a forked call's ru_maxrss counts the caller's memory (fork copies its pages and high-water mark): not "
        "reported; a memory controller (memory.peak) measures the call, sampling its USS (a lower bound)";

static void take_rusage(struct leash_usage *u, const struct rusage *ru, bool forked) {
        u->main_maxrss_bytes = forked ? LEASH_NULL : (uint64_t) ru->ru_maxrss * 1024;
        if (forked)
                u->memory_peak_note = forked_maxrss_note;
        u->main_utime_us = (uint64_t) ru->ru_utime.tv_sec * USEC_PER_SEC + (uint64_t) ru->ru_utime.tv_usec;
        u->main_stime_us = (uint64_t) ru->ru_stime.tv_sec * USEC_PER_SEC + (uint64_t) ru->ru_stime.tv_usec;
        u->main_minflt = (uint64_t) ru->ru_minflt;
        u->main_majflt = (uint64_t) ru->ru_majflt;
        u->main_nvcsw = (uint64_t) ru->ru_nvcsw;
        u->main_nivcsw = (uint64_t) ru->ru_nivcsw;
}

/* Whether anything runs in the job cgroup: cgroup.events through the fd
 * opened as the job started, by name where there is none. */
static int job_populated(const struct leash_job *j) {
        int fd = j->acct.fd[ACCOUNT_CGROUP_EVENTS];
        return fd >= 0 ? cgroupfs_events_populated(fd) : cgroupfs_populated(j->job_fd);
}

bool leash_result_ladder_killed(const struct leash_result *r) {
        for (unsigned i = 0; i < r->n_signals; i++)
                if (r->signals[i].signal == SIGKILL &&
                    (!r->signals[i].why || strcmp(r->signals[i].why, "leftover") != 0))
                        return true;
        return false;
}

/* Nothing outlives the main process: double forks, setsid, ignored signals.
 * After a group OOM kill (memory.oom.group), or the ladder's own SIGKILL,
 * the kernel is already taking the rest down: those are not leftovers, only
 * a wait for the cgroup to empty (bounded: what is still there after it is
 * one). True when the first look found the job cgroup empty. */
static bool kill_leftovers(struct leash_job *j) {
        struct leash_result *r = &j->r;

        if (j->no_cgroup) { /* the tree: stopped, then killed, in rounds */
                int n = tree_kill_all(j);
                r->leftovers_killed = n > 0 ? (unsigned) n : 0;
                if (n > 0)
                        supervise_log_signal(j, SIGKILL, "leftover");
                return false;
        }
        if (job_populated(j) == 0)
                return true;
        if (!j->stuck && leash_result_ladder_killed(&j->r) && cgroupfs_wait_empty(j->job_fd, 2000) == 0)
                return false;
        if (escape_guard(j) >= 0 && cgroupfs_populated(j->job_fd) > 0 &&
            !(r->enforced[LEASH_LIMIT_MEMORY] == LEASH_BY_CGROUP && r->term_signal == SIGKILL &&
              cgroupfs_oom_killed(j->job_fd))) {
                int n = cgroupfs_signal_all(j->job_fd, 0, 0);
                r->leftovers_killed = n > 0 ? (unsigned) n : 0;
                (void) cgroupfs_kill(j->job_fd);
                supervise_log_signal(j, SIGKILL, "leftover");
        } else if (j->stuck) {                                    /* leash is in there: never freeze or cgroup.kill */
                pid_t skip[2] = {getpid(), watchdog_pid(&j->wd)}; /* asked only here: a system call */
                int n = cgroupfs_signal_each(j->job_fd, 0, skip, ELEMENTSOF(skip));
                r->leftovers_killed = n > 0 ? (unsigned) n : 0;
                if (n > 0) {
                        supervise_kill_tree(j);
                        supervise_log_signal(j, SIGKILL, "leftover");
                }
        }
        return false;
}

/* Without a cgroup: the CPU time of the whole tree is the accounting. */
static void finish_treeonly(struct leash_job *j, bool ran) {
        struct leash_usage *u = &j->r.usage;
        uint64_t user, system;

        if (!ran)
                return;
        (void) tree_kill_all(j); /* nothing of the job outlives it; the orphans are reaped */
        if (j->holder.pid > 0) {
                /* it has no child left: it exits, and its rusage holds all it reaped */
                struct rusage ru;
                holder_release(&j->holder, &ru);
                user = (uint64_t) ru.ru_utime.tv_sec * USEC_PER_SEC + (uint64_t) ru.ru_utime.tv_usec;
                system = (uint64_t) ru.ru_stime.tv_sec * USEC_PER_SEC + (uint64_t) ru.ru_stime.tv_usec;
        } else
                tree_cpu_us(j, &user, &system);
        /* never below what a check read (the check that ended the job among
         * them): the live processes' times come in clock ticks there, and
         * processes may have gone since without a rusage leash could take */
        if (user + system < j->tree_seen_user_us + j->tree_seen_system_us) {
                user = j->tree_seen_user_us;
                system = j->tree_seen_system_us;
        }
        u->cpu_user_us = user;
        u->cpu_system_us = system;
        u->cpu_usage_us = user + system;
}

/* What left the cgroup: killed through pidfds. Leftovers too, outside the
 * cgroup: named in escaped (end killed), their SIGKILL logged. True when
 * nothing had left. */
static bool finish_escapees(struct leash_job *j) {
        unsigned killed = 0;
        bool quiet = escape_finish(j, &killed);

        if (killed)
                supervise_log_signal(j, SIGKILL, "leftover");
        return quiet;
}

int leash_job_finish(struct leash_job *j, struct leash_error *err) {
        struct leash_result *r;
        bool ran, empty = false, quiet = true;
        int rc = 0;

        if (!j)
                return -EINVAL;
        if (j->state == JOB_FINISHED)
                return 0;
        r = &j->r;
        ran = j->state >= JOB_RUNNING && r->reason != LEASH_REASON_EXEC_ERROR && r->reason != LEASH_REASON_SETUP_ERROR;
        if (j->state == JOB_RUNNING && j->owned) {
                /* its owner ends it: what runs in it is the owner's to kill */
                r->usage.wall_ns = now_ns(CLOCK_MONOTONIC) - j->start_ns;
                supervise_end(j);
        } else if (j->state == JOB_RUNNING) {
                /* finished before it ended: the caller ends it now */
                if (j->cause == LEASH_REASON_OK)
                        j->cause = LEASH_REASON_KILLED;
                supervise_kill_now(j, "killed");
                rc = leash_job_wait(j);
                if (rc < 0)
                        leash_error_set(err, "wait for the job", "", rc);
        }
        if (j->has_main && r->reason != LEASH_REASON_EXEC_ERROR && r->reason != LEASH_REASON_SETUP_ERROR)
                take_rusage(&r->usage, &j->ru, j->forked);
        if (ran && j->has_main)
                empty = kill_leftovers(j);
        if (ran && !j->iso.on && !j->no_cgroup)
                quiet = finish_escapees(j);
        if (j->no_cgroup)
                finish_treeonly(j, ran);
        else {
                /* empty at the first look, and nothing left the cgroup: not
                 * read again (a process that moves itself back in later is as
                 * late for a second read as for the first) */
                if (!j->stuck && !j->owned && ((empty && quiet) || cgroupfs_wait_empty(j->job_fd, 10000) == 0))
                        watchdog_retire(&j->wd); /* nothing of the job runs: its exit overlaps what follows */
                account_read_files(j->job_fd, j->controllers, &j->acct, &r->usage);
        }
        sampler_result(j->sampler, &r->sampling);
        if (r->usage.memory_peak == LEASH_NULL && r->sampling.peak[LEASH_FIG_MEMORY] != LEASH_NULL) {
                /* the whole tree, sampled, rather than the main process's exact peak */
                const char *b = r->sampling.peak_basis[LEASH_FIG_MEMORY];
                r->usage.memory_peak = r->sampling.peak[LEASH_FIG_MEMORY];
                r->usage.memory_peak_basis = !b                                  ? "sampled_memory.current"
                                             : strcmp(b, "sampled_pss") == 0     ? "sampled_pss"
                                             : strcmp(b, "sampled_uss") == 0     ? "sampled_uss"
                                             : strcmp(b, "sampled_pss_rss") == 0 ? "sampled_pss_rss"
                                             : strcmp(b, "sampled_uss_rss") == 0 ? "sampled_uss_rss"
                                                                                 : "sampled_memory.current";
        }
        if (r->usage.memory_peak == LEASH_NULL && r->usage.main_maxrss_bytes != LEASH_NULL && j->has_main) {
                r->usage.memory_peak = r->usage.main_maxrss_bytes;
                r->usage.memory_peak_basis = "rusage_maxrss_main";
        }
        if (r->usage.memory_peak != LEASH_NULL)
                r->usage.memory_peak_note = NULL; /* measured after all */
        if (ran)
                r->reason = decide(r, j->cause, &r->exit_code);
        /* SIGSYS is what a filter with the kill action delivers */
        if (r->reason == LEASH_REASON_SIGNAL && r->term_signal == SIGSYS && r->sandbox.seccomp &&
            j->spec.sandbox.seccomp_action == LEASH_SECCOMP_KILL)
                r->reason = LEASH_REASON_SECCOMP;
        if (j->remove_cgroup && j->stuck)
                rc = leash_error_set(err, "leave the job cgroup (the job moved leash into it)", r->cgroup, -EBUSY);
        else if (j->remove_cgroup) {
                int k = cgroupfs_remove(j->parent_fd, j->dirname, j->job_fd);
                if (k < 0 && rc == 0)
                        rc = leash_error_set(err, "remove the job cgroup", r->cgroup, k);
        }
        watchdog_stop(&j->wd);
        j->state = JOB_FINISHED;
        /* a finished job is its results: no descriptor is kept (a caller may
         * keep many of them, or one per thread, until it reads their reports) */
        job_let_go(j);
        return rc;
}

void leash_job_free(struct leash_job *j) {
        if (!j)
                return;
        if (j->state != JOB_FINISHED && j->job_fd >= 0) {
                if (j->state == JOB_CREATED && !j->adopted)
                        j->state = JOB_ENDED; /* nothing ran: only the cgroup to remove */
                (void) leash_job_finish(j, NULL);
        }
        job_destroy(j);
}

int job_new_owning(const struct leash_spec *spec, const char *adopt_cgroup, unsigned flags, struct watchdog_pool *watch,
                   struct placement_cache *place, void *settings, void (*settings_free)(void *), struct leash_job **ret,
                   struct leash_error *err) {
        int r = adopt_cgroup ? job_adopt(spec, adopt_cgroup, flags, watch, ret, err)
                             : job_new(spec, watch, place, ret, err);
        if (r < 0)
                return r;
        (*ret)->settings = settings;
        (*ret)->settings_free = settings_free;
        return 0;
}

/* ---- results ---- */

const struct leash_result *leash_job_result(const struct leash_job *j) {
        return &j->r;
}

const struct leash_spec *leash_job_spec(const struct leash_job *j) {
        return &j->spec;
}

enum leash_reason leash_job_cause(const struct leash_job *j) {
        return j->cause;
}

void leash_job_log_signal(struct leash_job *j, int sig, const char *why) {
        supervise_log_signal(j, sig, why);
}

int leash_job_set_signal_fn(struct leash_job *j, int (*fn)(void *userdata, int sig), void *userdata) {
        if (!j || !j->owned)
                return -EINVAL;
        j->signal_fn = fn;
        j->signal_userdata = userdata;
        return 0;
}

const struct leash_error *leash_job_start_error(const struct leash_job *j) {
        return &j->start_error;
}

int leash_job_warnings(const struct leash_job *j, char **ret_text) {
        char *text = NULL, line[512];
        size_t len = 0;
        FILE *f = NULL;

        if (!j || !ret_text)
                return -EINVAL;
        for (int l = 0; l < _LEASH_LIMIT_MAX; l++) {
                if (leash_limit_weakness(&j->spec, j->r.enforced, j->r.enforce_note, (enum leash_limit) l, false, line,
                                         sizeof line) <= 0)
                        continue;
                /* the stream only when there is a line: a Python caller asks
                 * at every call, and a stream is 8 KiB of heap written */
                if (!f && !(f = open_memstream(&text, &len)))
                        return -ENOMEM;
                fprintf(f, "%s\n", line);
        }
        if (!f) {
                *ret_text = strdup("");
                return *ret_text ? 0 : -ENOMEM;
        }
        if (fclose(f) != 0) {
                free(text);
                return -ENOMEM;
        }
        *ret_text = text;
        return 0;
}

enum leash_reason leash_job_reason(const struct leash_job *j) {
        return j->r.reason;
}

int leash_job_exit_code(const struct leash_job *j) {
        return j->r.exit_code;
}

int leash_job_status(const struct leash_job *j) {
        return j->r.status_code;
}

int leash_job_term_signal(const struct leash_job *j) {
        return j->r.term_signal;
}

uint64_t leash_job_limit(const struct leash_job *j, enum leash_limit l) {
        if (!j || (unsigned) l >= _LEASH_LIMIT_MAX || !leash_spec_has(&j->spec, l))
                return LEASH_NULL;
        return j->spec.limit[l];
}

pid_t leash_job_pid(const struct leash_job *j) {
        return j->r.pid;
}

int leash_job_pidfd(const struct leash_job *j) {
        return j->pidfd;
}

const char *leash_job_cgroup(const struct leash_job *j) {
        return j->r.cgroup;
}

int leash_job_ended(const struct leash_job *j) {
        return j->state >= JOB_ENDED;
}

uint64_t leash_job_usage(const struct leash_job *j, enum leash_usage_figure f) {
        const struct leash_usage *u = &j->r.usage;
        switch (f) {
        case LEASH_USAGE_WALL_NS:
                return u->wall_ns;
        case LEASH_USAGE_CPU_US:
                return u->cpu_usage_us;
        case LEASH_USAGE_CPU_USER_US:
                return u->cpu_user_us;
        case LEASH_USAGE_CPU_SYSTEM_US:
                return u->cpu_system_us;
        case LEASH_USAGE_MEMORY_PEAK:
                return u->memory_peak;
        case LEASH_USAGE_SWAP_PEAK:
                return u->swap_peak;
        case LEASH_USAGE_PIDS_PEAK:
                return u->pids_peak;
        case LEASH_USAGE_OOM_KILLS:
                return u->mem_ev_oom_kill;
        case LEASH_USAGE_IO_READ_BYTES:
                return u->io_rbytes;
        case LEASH_USAGE_IO_WRITE_BYTES:
                return u->io_wbytes;
        case _LEASH_USAGE_MAX:
                break;
        }
        return LEASH_NULL;
}

int leash_job_set_sample_fn(struct leash_job *j, leash_sample_fn fn, void *userdata) {
        if (!j)
                return -EINVAL;
        if (!j->sampler)
                return -ENOENT; /* no "sample" interval (or "limit") in the config */
        if (j->state != JOB_CREATED)
                return -EBUSY;
        sampler_set_fn(j->sampler, fn, userdata);
        return 0;
}

const char *leash_job_reason_name(const struct leash_job *j) {
        return j ? leash_result_reason(&j->r) : NULL;
}
