/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The host: where cgroup2 is mounted, which cgroup leash is in, and what
 * `leash check` reports about both. Where job cgroups go is placement.c's.
 *
 * The launch path reads /proc/self/mountinfo only when statfs of the usual
 * places finds no cgroup2; libcgroup (which parses all mounts and its config)
 * is used only by leash_host_probe for `check`.
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

#include "../basic/fileio.h"
#include "../basic/macro.h"
#include "cgroupfs.h"
#include "placement.h"

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape_octal(char *s) {
        char *w = s;
        for (char *p = s; *p; p++) {
                if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' && p[3] >= '0' &&
                    p[3] <= '7') {
                        *w++ = (char) (((p[1] - '0') << 6) | ((p[2] - '0') << 3) | (p[3] - '0'));
                        p += 3;
                } else
                        *w++ = *p;
        }
        *w = '\0';
}

int host_parse_mountinfo(const char *text, char *ret_mount, size_t size, unsigned *ret_v1_count) {
        unsigned v1 = 0;
        bool found = false;
        const char *line = text;

        while (line && *line) {
                const char *eol = strchr(line, '\n');
                size_t len = eol ? (size_t) (eol - line) : strlen(line);
                char buf[8192], *f[6] = {0}, *sep, *fstype, *save = NULL, *tok;
                int n = 0;

                if (len < sizeof buf) {
                        memcpy(buf, line, len);
                        buf[len] = '\0';
                        /* fields: id parent maj:min root mountpoint options ... - fstype source superopts */
                        sep = strstr(buf, " - ");
                        if (sep) {
                                *sep = '\0';
                                for (tok = strtok_r(buf, " ", &save); tok && n < 6; tok = strtok_r(NULL, " ", &save))
                                        f[n++] = tok;
                                fstype = strtok_r(sep + 3, " ", &save);
                                if (n >= 5 && fstype) {
                                        if (strcmp(fstype, "cgroup2") == 0 && !found) {
                                                unescape_octal(f[4]);
                                                if (strlen(f[4]) >= size)
                                                        return -ENAMETOOLONG;
                                                strcpy(ret_mount, f[4]);
                                                found = true;
                                        } else if (strcmp(fstype, "cgroup") == 0) {
                                                char *source = strtok_r(NULL, " ", &save);
                                                char *opts = strtok_r(NULL, " ", &save);
                                                /* name=systemd only tracks processes; it holds no controller */
                                                (void) source;
                                                if (opts && !(strstr(opts, "name=") && !strstr(opts, "cpu") &&
                                                              !strstr(opts, "memory") && !strstr(opts, "pids")))
                                                        v1++;
                                        }
                                }
                        }
                }
                line = eol ? eol + 1 : NULL;
        }
        if (ret_v1_count)
                *ret_v1_count = v1;
        return found ? 0 : -ENOENT;
}

int host_parse_proc_cgroup(const char *text, char *ret_path, size_t size) {
        const char *line = text;

        while (line && *line) {
                const char *eol = strchr(line, '\n');
                size_t len = eol ? (size_t) (eol - line) : strlen(line);
                if (len >= 3 && strncmp(line, "0::", 3) == 0) {
                        len -= 3;
                        if (len == 0 || len >= size || line[3] != '/')
                                return -EINVAL;
                        memcpy(ret_path, line + 3, len);
                        ret_path[len] = '\0';
                        /* a cgroup removed under us reads "/path (deleted)" */
                        if (len > 10 && strcmp(ret_path + len - 10, " (deleted)") == 0)
                                return -ESTALE;
                        return 0;
                }
                line = eol ? eol + 1 : NULL;
        }
        return -ENOENT;
}

int host_cgroup2_mount(char *ret, size_t size, unsigned *ret_v1_count) {
        _cleanup_free_ char *text = NULL;
        int r = read_file_at_alloc(AT_FDCWD, "/proc/self/mountinfo", &text, NULL);
        if (r < 0)
                return r;
        return host_parse_mountinfo(text, ret, size, ret_v1_count);
}

/* Read on every job's start (escape_home_open): into the heap, not a frame
 * of pages (bench/NOTES.md, row 10). */
int host_own_cgroup(char *ret, size_t size) {
        _cleanup_free_ char *text = NULL;
        int r = read_file_at_alloc(AT_FDCWD, "/proc/self/cgroup", &text, NULL);
        if (r < 0)
                return r;
        return host_parse_proc_cgroup(text, ret, size);
}

static bool holds_processes(const char *dir) {
        char buf[16];
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int r;
        if (fd < 0)
                return true;
        r = read_file_at(fd, "cgroup.procs", buf, sizeof buf, NULL);
        close(fd);
        return r < 0 || buf[0] != '\0';
}

/* The launch path's way to the cgroup2 mount: statfs of the two places every
 * init system uses (unified: /sys/fs/cgroup; hybrid: /sys/fs/cgroup/unified),
 * as systemd does, and /proc/self/mountinfo only when neither is cgroup2.
 * Formatting mountinfo costs the kernel a line per mount; measured on the
 * launch of `leash run -- /bin/true`, see docs/PERFORMANCE.md. */
int host_cgroup2_mount_fast(char *ret, size_t size) {
        static const char *const places[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"};
        struct statfs sfs;

        for (size_t i = 0; i < ELEMENTSOF(places); i++)
                if (statfs(places[i], &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC) {
                        if (strlen(places[i]) >= size)
                                return -ENAMETOOLONG;
                        strcpy(ret, places[i]);
                        return 0;
                }
        return host_cgroup2_mount(ret, size, NULL);
}

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

/* The root cgroup never has cgroup.kill (nor the *.peak files): when the
 * places probed above are all the root, a child of the root tells. */
static bool any_child_has(const char *root, const char *file) {
        DIR *d = opendir(root);
        struct dirent *e;
        bool found = false, looked = false;

        if (!d)
                return false;
        while (!looked && (e = readdir(d))) {
                char p[8400];
                if (e->d_type != DT_DIR || e->d_name[0] == '.')
                        continue;
                snprintf(p, sizeof p, "%s/%s/%s", root, e->d_name, file);
                found = access(p, F_OK) == 0;
                looked = true; /* one child answers for all */
        }
        closedir(d);
        return found;
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
        /* check changes nothing: no mkdir, no write to cgroup.subtree_control */
        r = placement_decide(cgroup_parent, false, &h->placement, err);
        if (r < 0)
                h->parent_error = -r;
        else if (h->placement.kind == PLACEMENT_NONE)
                h->parent_error = h->placement.error ? h->placement.error : ENOENT;
        snprintf(h->parent, sizeof h->parent, "%s", h->placement.parent);

        if (!h->parent_error) {
                bool exists = access(h->parent, F_OK) == 0;
                /* a default parent not made yet: it will be made under the cgroup2 root */
                const char *dir = exists ? h->parent : h->cgroup2_mount;
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
                        (void) cgroupfs_offered_controllers(fd, is_root || h->placement.moved || !holds_processes(dir),
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
                                h->cgroup_kill = any_child_has(h->cgroup2_mount, "cgroup.kill");
                        h->memory_peak = (avail & CTL_MEMORY) && faccessat(fd, "memory.peak", F_OK, 0) == 0;
                        h->pids_peak = (avail & CTL_PIDS) && faccessat(fd, "pids.peak", F_OK, 0) == 0;
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
