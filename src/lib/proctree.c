/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * /proc/PID/stat and /proc/PID/task/TID/children. A process's parent is
 * fixed until it is orphaned (then it is the nearest child subreaper, or
 * init), so the children lists walked from a subreaper hold every process
 * below it. The lists come per thread: a child is listed under the thread
 * that forked it.
 */
#include "proctree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../basic/fileio.h"
#include "../basic/macro.h"

int proctree_parse_stat(const char *text, struct proctree_stat *ret) {
        const char *open_paren = strchr(text, '('), *close_paren = strrchr(text, ')'); /* the comm may hold ')' */
        int ppid, pgrp, session;
        size_t n;

        if (!open_paren || !close_paren || close_paren < open_paren ||
            sscanf(close_paren + 1,
                   " %c %d %d %d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu %*d %*d %*d %*d %llu", &ret->state,
                   &ppid, &pgrp, &session, &ret->utime, &ret->stime, &ret->cutime, &ret->cstime, &ret->start) != 9)
                return -EINVAL;
        n = (size_t) (close_paren - open_paren - 1);
        if (n > 15)
                n = 15;
        memcpy(ret->comm, open_paren + 1, n);
        ret->comm[n] = '\0';
        ret->ppid = (pid_t) ppid;
        ret->pgrp = (pid_t) pgrp;
        ret->session = (pid_t) session;
        return 0;
}

int proctree_stat(pid_t pid, struct proctree_stat *ret) {
        char path[64], buf[1024];
        int r;

        snprintf(path, sizeof path, "/proc/%d/stat", (int) pid);
        r = read_file_at(AT_FDCWD, path, buf, sizeof buf, NULL);
        if (r < 0)
                return r;
        return proctree_parse_stat(buf, ret);
}

void proctree_children(pid_t pid, pid_t *list, pid_t *parent, size_t *n, size_t max) {
        char path[64], buf[8192];
        _cleanup_close_ int tfd = -1;
        DIR *d;
        struct dirent *de;
        pid_t self = getpid();

        if (pid)
                snprintf(path, sizeof path, "/proc/%d/task", (int) pid);
        else
                snprintf(path, sizeof path, "/proc/self/task");
        tfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (tfd < 0)
                return;
        d = fdopendir(TAKE_FD(tfd));
        if (!d)
                return;
        while ((de = readdir(d)) && *n < max) {
                char name[300];
                if (de->d_name[0] < '0' || de->d_name[0] > '9')
                        continue;
                snprintf(name, sizeof name, "%s/children", de->d_name);
                if (read_file_at(dirfd(d), name, buf, sizeof buf, NULL) < 0)
                        continue;
                for (char *p = buf; *p && *n < max;) {
                        char *end;
                        long c = strtol(p, &end, 10);
                        if (end == p)
                                break;
                        list[*n] = (pid_t) c;
                        parent[*n] = pid ? pid : self;
                        (*n)++;
                        p = end;
                }
        }
        closedir(d);
}
