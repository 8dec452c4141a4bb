/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The host: where cgroup2 is mounted and which cgroup leash is in. Where job
 * cgroups go is placement.c's (which uses this), and what `leash check`
 * reports about the host is hostprobe.c's (which uses both).
 *
 * The launch path reads /proc/self/mountinfo only when statfs of the usual
 * places finds no cgroup2.
 */
#include "host.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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

/* Read on every job's start (escape_home_find): into the heap, not a frame
 * of pages (bench/NOTES.md, row 10). */
int host_own_cgroup(char *ret, size_t size) {
        _cleanup_free_ char *text = NULL;
        int r = read_file_at_alloc(AT_FDCWD, "/proc/self/cgroup", &text, NULL);
        if (r < 0)
                return r;
        return host_parse_proc_cgroup(text, ret, size);
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
