/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The job specification the engine runs from (built by the settings layer,
 * options.c and config.c, or filled by a caller of the internal API), its
 * defaults and checks, and the names of reasons, limits and enforcers.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "../../basic/macro.h"
#include "../../basic/parse.h"
#include "../../basic/time-util.h"
#include "../leash.h"

void leash_spec_init(struct leash_spec *c) {
        memset(c, 0, sizeof *c);
        c->grace_ns = 5 * NSEC_PER_SEC;
        c->soft_signal = SIGXCPU;
        c->sampling.series_fd = -1;
}

int leash_error_set(struct leash_error *err, const char *step, const char *detail, int r) {
        if (err) {
                err->step = step;
                snprintf(err->detail, sizeof err->detail, "%s", detail ? detail : "");
                err->error = -r;
        }
        return r;
}

int leash_spec_validate(const struct leash_spec *c, struct leash_error *err) {
        if (c->name && !job_name_is_valid(c->name))
                return leash_error_set(err, "parse", c->name, -EINVAL);
        if (c->soft_signal <= 0 || c->soft_signal >= _NSIG || c->soft_signal == SIGKILL || c->soft_signal == SIGSTOP)
                return leash_error_set(err, "parse", "soft signal", -EINVAL);
        /* a limit that can never fire is refused, not reported as enforced */
        if (!c->sampling.disk_path)
                for (int f = LEASH_FIG_DISK_BYTES; f <= LEASH_FIG_DISK_FILES; f++)
                        if (c->sampling.limit[f])
                                return leash_error_set(
                                        err, f == LEASH_FIG_DISK_BYTES ? "--limit disk" : "--limit files",
                                        "needs --sample-disk DIR, the directory whose use it checks", -EINVAL);
        return 0;
}

const char *leash_unjudged_to_string(enum leash_unjudged u) {
        static const char *const words[_LEASH_UNJUDGED_MAX] = {
                [LEASH_UNJUDGED_DEEP_CGROUPS] = "the job holds cgroups deeper than leash walks, where its processes "
                                                "cannot all be seen",
                [LEASH_UNJUDGED_IO_REFUSED] = "a process of the job made itself undumpable, so its /proc/PID/io is "
                                              "refused to leash (not root) and its io cannot be counted",
        };
        return (unsigned) u < _LEASH_UNJUDGED_MAX ? words[u] : NULL;
}

const char *leash_reason_to_string(enum leash_reason r) {
        static const char *const names[_LEASH_REASON_MAX] = {
                [LEASH_REASON_OK] = "ok",
                [LEASH_REASON_EXIT] = "exit",
                [LEASH_REASON_SIGNAL] = "signal",
                [LEASH_REASON_WALL_TIME] = "wall_time",
                [LEASH_REASON_CPU_TIME] = "cpu_time",
                [LEASH_REASON_MEMORY] = "memory",
                [LEASH_REASON_PIDS] = "pids",
                [LEASH_REASON_INTERRUPTED] = "interrupted",
                [LEASH_REASON_SETUP_ERROR] = "setup_error",
                [LEASH_REASON_EXEC_ERROR] = "exec_error",
                [LEASH_REASON_SECCOMP] = "seccomp",
                [LEASH_REASON_KILLED] = "killed",
                [LEASH_REASON_MEASURED] = "measured_limit",
                [LEASH_REASON_FSIZE] = "fsize",
        };
        return (unsigned) r < _LEASH_REASON_MAX ? names[r] : "unknown";
}

const char *leash_result_reason(const struct leash_result *r) {
        if (r->reason == LEASH_REASON_MEASURED && r->sampling.limit_reached >= 0)
                return leash_fig_name((enum leash_fig) r->sampling.limit_reached);
        return leash_reason_to_string(r->reason);
}

const char *leash_limit_to_string(enum leash_limit l) {
        static const char *const names[_LEASH_LIMIT_MAX] = {
                [LEASH_LIMIT_MEMORY] = "memory",       [LEASH_LIMIT_MEMORY_HIGH] = "memory_high",
                [LEASH_LIMIT_SWAP] = "swap",           [LEASH_LIMIT_PIDS] = "pids",
                [LEASH_LIMIT_CPUS] = "cpus",           [LEASH_LIMIT_CPU_TIME] = "cpu_time",
                [LEASH_LIMIT_WALL_TIME] = "wall_time", [LEASH_LIMIT_NOFILE] = "nofile",
                [LEASH_LIMIT_FSIZE] = "fsize",         [LEASH_LIMIT_CORE] = "core",
        };
        return (unsigned) l < _LEASH_LIMIT_MAX ? names[l] : "unknown";
}

const char *leash_enforcer_to_string(enum leash_enforcer e) {
        switch (e) {
        case LEASH_BY_CGROUP:
                return "cgroup";
        case LEASH_BY_RLIMIT:
                return "rlimit";
        case LEASH_BY_LEASH:
                return "leash";
        case LEASH_BY_NONE:
                break;
        }
        return "none";
}

const char *leash_version(void) {
        return PACKAGE_VERSION;
}
