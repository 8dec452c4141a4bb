/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>

/* What a process's children inherit and the launcher's child takes from
 * its caller where it differs. */
struct resident_inherited {
        struct rlimit limits[RLIM_NLIMITS];
        int nice;
        cpu_set_t cpus;
        int oom_score_adj;
};
/* Process pid's (0: this process's), read now: 0, or -errno with what
 * could not be read in *what. */
int resident_inherited_read(pid_t pid, struct resident_inherited *inh, const char **what);

/* What the resident launcher read of a caller (resident-caller.c). */
struct resident_caller {
        pid_t pid;
        struct resident_inherited inh;
        mode_t umask;
        uint64_t sig_ignored; /* signal N is bit N-1 */
        bool no_new_privs;
};

/* The launcher's own, read once (resident_self_read): what a caller must
 * share. */
#define RESIDENT_N_NS 8
struct resident_self {
        char status[8192];
        struct stat ns[RESIDENT_N_NS];
        int ns_error[RESIDENT_N_NS];
        char label[256];
        int label_error;
        struct stat exe;
};
int resident_self_read(struct resident_self *self);

/* The caller at the other end of the connection sock, checked (see the
 * file's comment) and read: 0, or -errno with why in err (one line).
 * accept: the cgroups served, a pattern (fnmatch, FNM_PATHNAME). */
int resident_caller_read(int sock, const char *accept, const struct resident_self *self, struct resident_caller *c,
                         char *err, size_t size);
