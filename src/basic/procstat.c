/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "procstat.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"

int procstat_parse(const char *text, struct procstat *ret) {
        const char *open_paren = strchr(text, '('), *close_paren = strrchr(text, ')');
        int ppid, pgrp, session;
        size_t n;

        if (!open_paren || !close_paren || close_paren < open_paren ||
            sscanf(close_paren + 1, " %c %d %d %d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu %*d %*d %*d %*d %llu",
                   &ret->state, &ppid, &pgrp, &session, &ret->utime, &ret->stime, &ret->cutime, &ret->cstime,
                   &ret->start) != 9)
                return -EINVAL;
        n = (size_t) (close_paren - open_paren - 1);
        if (n >= sizeof ret->comm)
                n = sizeof ret->comm - 1;
        memcpy(ret->comm, open_paren + 1, n);
        ret->comm[n] = '\0';
        ret->ppid = (pid_t) ppid;
        ret->pgrp = (pid_t) pgrp;
        ret->session = (pid_t) session;
        return 0;
}

int procstat_read(int proc_fd, pid_t pid, struct procstat *ret) {
        char path[64], buf[1024];
        int r;

        if (proc_fd == AT_FDCWD)
                snprintf(path, sizeof path, "/proc/%d/stat", (int) pid);
        else
                snprintf(path, sizeof path, "%d/stat", (int) pid);
        r = read_file_at(proc_fd, path, buf, sizeof buf, NULL);
        if (r < 0)
                return r == -ENOENT ? -ESRCH : r;
        return procstat_parse(buf, ret);
}

int proc_self_ns_inode(const char *type, unsigned long long *ret) {
        char path[64], text[128], *end;
        size_t tl = strlen(type);
        unsigned long long v;
        ssize_t n;

        snprintf(path, sizeof path, "/proc/self/ns/%s", type);
        n = readlink(path, text, sizeof text - 1);
        if (n < 0)
                return -errno;
        text[n] = '\0';
        if ((size_t) n < tl + 3 || strncmp(text, type, tl) != 0 || text[tl] != ':' || text[tl + 1] != '[')
                return -EINVAL;
        errno = 0;
        v = strtoull(text + tl + 2, &end, 10);
        if (errno || end == text + tl + 2 || strcmp(end, "]") != 0)
                return -EINVAL;
        *ret = v;
        return 0;
}
