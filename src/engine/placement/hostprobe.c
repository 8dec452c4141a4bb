/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What `leash check` reports about the host (leash_host_probe): the cgroup
 * mode, leash's own cgroup, where a job cgroup would go (placement.c,
 * deciding only: no mkdir, no write), what controllers and files it would
 * have. Above host.c and placement.c, so that neither needs the other's
 * report. libcgroup (which parses all mounts and its config) is used here
 * only, for the v1 mounts.
 */
#include "host.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libcgroup.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "../../basic/fileio.h"
#include "../../basic/macro.h"
#include "../cgroup/cgroupfs.h"
#include "placement.h"

/* libcgroup adapter: where each controller is mounted, whatever the version.
 * Only `leash check` calls it; linked statically into the leash binary
 * (HACKING.md), it costs a run that does not call it nothing. cgroup_init()
 * reads the mount table afresh on each call (check is not a hot path);
 * when it fails, check reports no v1 mounts. */
static void probe_v1_mounts(struct leash_host *h) {
        static const char *const v1_names[CTL_COUNT] = {"memory", "pids", "cpu", "blkio"};
        bool ok = cgroup_init() == 0;

        for (unsigned i = 0; i < CTL_COUNT; i++) {
                char *mnt = NULL;
                struct statfs sfs;
                h->v1_mount[i][0] = '\0';
                if (!ok || cgroup_get_subsys_mount_point(v1_names[i], &mnt) != 0 || !mnt)
                        continue;
                if (statfs(mnt, &sfs) == 0 && sfs.f_type != CGROUP2_SUPER_MAGIC)
                        snprintf(h->v1_mount[i], sizeof h->v1_mount[i], "%s", mnt);
                free(mnt);
        }
}

/* The root cgroup never has cgroup.kill (nor the *.peak files): a child of
 * the root tells. Whether the first child that has `need` (NULL: the first
 * child) has `file`. */
static bool child_has(const char *root, const char *need, const char *file) {
        DIR *d = opendir(root);
        struct dirent *e;
        bool found = false;

        if (!d)
                return false;
        while ((e = readdir(d))) {
                char p[8400];
                if (e->d_type != DT_DIR || e->d_name[0] == '.')
                        continue;
                snprintf(p, sizeof p, "%s/%s/%s", root, e->d_name, need ? need : ".");
                if (access(p, F_OK) < 0)
                        continue;
                snprintf(p, sizeof p, "%s/%s/%s", root, e->d_name, file);
                found = access(p, F_OK) == 0;
                break; /* one child answers for all */
        }
        closedir(d);
        return found;
}

/* Whether the kernel has a controller's peak file (pids.peak: Linux 6.1),
 * seen in fd's cgroup if the controller is on there (its current file), else
 * in the first child of the root that has it on. Leash's own cgroup is only
 * a sample when the job parent does not exist yet, and it may lack the
 * controller where the parent will have it (seen on a lent GPU machine). */
static bool peak_file(int fd, const char *root, const char *current, const char *peak) {
        if (faccessat(fd, current, F_OK, 0) == 0)
                return faccessat(fd, peak, F_OK, 0) == 0;
        return child_has(root, current, peak);
}

/* What the kernel has, whatever this user may use: a child of the root tells
 * for cgroup.kill and the peak files (where a cgroup has the controller on),
 * the root or /proc for pressure (PSI may be off: psi=0). */
static void probe_kernel_features(struct leash_host *h) {
        char p[4200];

        h->kernel.cgroup_kill = child_has(h->cgroup2_mount, NULL, "cgroup.kill");
        h->kernel.memory_peak = child_has(h->cgroup2_mount, "memory.current", "memory.peak");
        h->kernel.pids_peak = child_has(h->cgroup2_mount, "pids.current", "pids.peak");
        h->kernel.memory_unseen = !child_has(h->cgroup2_mount, "memory.current", "memory.current");
        h->kernel.pids_unseen = !child_has(h->cgroup2_mount, "pids.current", "pids.current");
        snprintf(p, sizeof p, "%s/cpu.pressure", h->cgroup2_mount);
        h->kernel.pressure = access(p, F_OK) == 0 || child_has(h->cgroup2_mount, NULL, "cpu.pressure") ||
                             access("/proc/pressure/cpu", R_OK) == 0;
}

static bool is_scope_or_slice(const char *name) {
        size_t n = strlen(name);
        return n > 6 && (strcmp(name + n - 6, ".scope") == 0 || strcmp(name + n - 6, ".slice") == 0);
}

/* Where to look for a parent not made yet: a default one will be made under
 * the cgroup2 root; a systemd scope (the step names the one a run would get)
 * gets what the manager's cgroup (its nearest ancestor that is no scope or
 * slice) has. */
static const char *nearest_dir(const struct leash_host *h, char *buf, size_t size) {
        size_t ml = strlen(h->cgroup2_mount);

        if (h->placement.kind != PLACEMENT_SYSTEMD || (size_t) snprintf(buf, size, "%s", h->parent) >= size)
                return h->cgroup2_mount;
        /* not leash.slice: its controllers follow the units in it at the moment */
        while (strlen(buf) > ml && (access(buf, F_OK) < 0 || is_scope_or_slice(strrchr(buf, '/') + 1)))
                *strrchr(buf, '/') = '\0';
        return strlen(buf) > ml ? buf : h->cgroup2_mount;
}

int leash_host_probe(const char *cgroup_parent, struct leash_host *h, struct leash_error *err) {
        unsigned v1 = 0, avail = 0;
        struct stat st;
        struct leash_spec c;
        int r, fd;

        memset(h, 0, sizeof *h);
        r = host_cgroup2_mount(h->cgroup2_mount, sizeof h->cgroup2_mount, &v1);
        if (r < 0) {
                h->cgroup2_mount[0] = '\0';
                h->mode = v1 ? LEASH_CG_V1 : LEASH_CG_NONE;
        } else
                h->mode = v1 ? LEASH_CG_HYBRID : LEASH_CG_V2;
        probe_v1_mounts(h);
        if (r < 0)
                return leash_error_set(err, "find a cgroup2 mount", "", r);
        (void) host_own_cgroup(h->own_cgroup, sizeof h->own_cgroup);
        probe_kernel_features(h);
        /* check changes nothing: no mkdir, no write to cgroup.subtree_control */
        r = placement_decide(cgroup_parent, false, &h->placement, err);
        if (r < 0)
                h->parent_error = -r;
        else if (h->placement.kind == PLACEMENT_NONE)
                h->parent_error = h->placement.error ? h->placement.error : ENOENT;
        snprintf(h->parent, sizeof h->parent, "%s", h->placement.parent);

        if (!h->parent_error) {
                bool exists = access(h->parent, F_OK) == 0;
                char base[4096];
                const char *dir = exists ? h->parent : nearest_dir(h, base, sizeof base);
                bool is_root = !exists || strcmp(h->parent, h->cgroup2_mount) == 0;
                char feat[8200];

                h->parent_missing = !exists;
                if (exists && stat(h->parent, &st) == 0 && !S_ISDIR(st.st_mode))
                        h->parent_error = ENOTDIR; /* a cgroup file, not a cgroup */
                else if (access(dir, W_OK) < 0)
                        h->parent_error = errno;
                fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd >= 0) {
                        /* what a run would get: enabled already, or enable-able because the
                         * parent holds no process of its own (the root is exempt) */
                        (void) cgroupfs_offered_controllers(
                                fd, is_root || h->placement.moved || !placement_holds_processes(dir),
                                CTL_MEMORY | CTL_PIDS | CTL_CPU | CTL_IO, &avail);
                        h->cgroup_kill = faccessat(fd, "cgroup.kill", F_OK, 0) == 0 ||
                                         faccessat(fd, "cgroup.procs", F_OK, 0) < 0; /* root has none */
                        h->pressure = faccessat(fd, "cpu.pressure", F_OK, 0) == 0;
                        close(fd);
                }
                /* memory.peak and pids.peak exist in non-root cgroups with the controller:
                 * look in the parent, else in leash's own cgroup */
                if (exists && !is_root)
                        snprintf(feat, sizeof feat, "%s", h->parent);
                else
                        snprintf(feat, sizeof feat, "%s%s", h->cgroup2_mount,
                                 strcmp(h->own_cgroup, "/") == 0 ? "" : h->own_cgroup);
                fd = open(feat, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd >= 0) {
                        h->cgroup_kill = faccessat(fd, "cgroup.kill", F_OK, 0) == 0 || h->cgroup_kill;
                        if (!h->cgroup_kill)
                                h->cgroup_kill = child_has(h->cgroup2_mount, NULL, "cgroup.kill");
                        h->memory_peak = (avail & CTL_MEMORY) &&
                                         peak_file(fd, h->cgroup2_mount, "memory.current", "memory.peak");
                        h->pids_peak =
                                (avail & CTL_PIDS) && peak_file(fd, h->cgroup2_mount, "pids.current", "pids.peak");
                        close(fd);
                }
        }
        for (unsigned i = 0; i < CTL_COUNT; i++)
                h->ctl_available[i] = avail & (1u << i);
        h->clone_into_cgroup = cgroupfs_probe_clone_into_cgroup();

        leash_spec_init(&c);
        for (int l = 0; l < _LEASH_LIMIT_MAX; l++)
                leash_spec_set_limit(&c, (enum leash_limit) l,
                                     1); /* "asked for": any value will do to learn the enforcer */
        cgroupfs_plan_enforcement(&c, avail, h->enforced, h->enforce_note);
        return 0;
}
