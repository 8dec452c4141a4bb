/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "jobstate.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "../../basic/macro.h"
#include "../../basic/parse.h"
#include "../../basic/procstat.h"
#include "../../basic/time-util.h"

int jobstate_own_pidns(unsigned long long *ret) {
        return proc_self_ns_inode("pid", ret);
}

int jobstate_format(const struct leash_spec *spec, const char *name, pid_t pid, unsigned long long pidns, uid_t uid,
                    uint64_t started_ns, char *buf, size_t size) {
        size_t n;

        if (!job_name_is_valid(name))
                return -EINVAL;
        n = (size_t) snprintf(buf, size, "pid=%d pidns=%llu v=1 uid=%u started_ns=%llu name=%s", (int) pid, pidns,
                              (unsigned) uid, (unsigned long long) started_ns, name);
        for (int l = 0; l < _LEASH_LIMIT_MAX && n < size; l++)
                if (leash_spec_has(spec, (enum leash_limit) l))
                        n += (size_t) snprintf(buf + n, size - n, " %s=%llu",
                                               leash_limit_to_string((enum leash_limit) l),
                                               (unsigned long long) spec->limit[l]);
        for (int f = 0; f < _LEASH_FIG_MAX && n < size; f++)
                if (spec->sampling.limit[f])
                        n += (size_t) snprintf(buf + n, size - n, " limit.%s=%llu", leash_fig_name((enum leash_fig) f),
                                               (unsigned long long) spec->sampling.limit[f]);
        if (spec->sampling.interval_ns && n < size)
                n += (size_t) snprintf(buf + n, size - n, " sample_ns=%llu",
                                       (unsigned long long) spec->sampling.interval_ns);
        return n < size ? (int) n : -ENAMETOOLONG;
}

static int limit_from_name(const char *key) {
        for (int l = 0; l < _LEASH_LIMIT_MAX; l++)
                if (strcmp(key, leash_limit_to_string((enum leash_limit) l)) == 0)
                        return l;
        return -1;
}

/* One key=value field; false when malformed. */
static bool is_known(const char *key) {
        static const char *const known[] = {"v", "uid", "started_ns", "sample_ns"};
        for (size_t i = 0; i < ELEMENTSOF(known); i++)
                if (strcmp(key, known[i]) == 0)
                        return true;
        return strncmp(key, "limit.", 6) == 0 || limit_from_name(key) >= 0;
}

/* One key=value field (the idx-th); false when malformed. */
static bool parse_field(const char *key, const char *value, unsigned idx, struct jobstate *j, bool *v1) {
        uint64_t v;
        int l;

        /* the mark's two fields come first, in this order */
        if (idx < 2) {
                if (strcmp(key, idx == 0 ? "pid" : "pidns") != 0 || parse_u64(value, &v) < 0)
                        return false;
                if (idx == 1) {
                        j->pidns = v;
                        return true;
                }
                if (v == 0 || v > INT32_MAX)
                        return false;
                j->pid = (pid_t) v;
                return true;
        }
        if (strcmp(key, "name") == 0) {
                if (!job_name_is_valid(value) || strlen(value) >= sizeof j->name)
                        return false;
                strcpy(j->name, value);
                return true;
        }
        if (!is_known(key))
                return true; /* a later version's key */
        if (parse_u64(value, &v) < 0)
                return false;
        if (strcmp(key, "v") == 0)
                *v1 = v == 1;
        else if (strcmp(key, "uid") == 0) {
                if (v > UINT32_MAX)
                        return false;
                j->uid = (uid_t) v;
        } else if (strcmp(key, "started_ns") == 0)
                j->started_ns = v;
        else if (strcmp(key, "sample_ns") == 0)
                j->sample_ns = v;
        else if (strncmp(key, "limit.", 6) == 0) {
                int f = leash_fig_from_name(key + 6);
                if (f >= 0)
                        j->mlimit[f] = v;
        } else {
                l = limit_from_name(key);
                j->limit[l] = v;
                j->limit_set |= 1U << l;
        }
        return true;
}

int jobstate_parse(const char *text, struct jobstate *ret) {
        struct jobstate j = {0};
        const char *p = text;
        unsigned idx = 0;
        bool v1 = false;

        while (*p) {
                char tok[160], *eq;
                size_t len = strcspn(p, " ");

                if (len == 0 || len >= sizeof tok)
                        return -EINVAL; /* one space between fields, no empty field */
                memcpy(tok, p, len);
                tok[len] = '\0';
                p += len;
                if (*p == ' ' && *++p == '\0')
                        return -EINVAL;
                eq = strchr(tok, '=');
                if (!eq || eq == tok)
                        return -EINVAL;
                *eq++ = '\0';
                if (!parse_field(tok, eq, idx++, &j, &v1))
                        return -EINVAL;
        }
        if (idx < 2)
                return -EINVAL;
        j.record = v1 && idx > 2;
        *ret = j;
        return 0;
}

int jobstate_write(int job_fd, const struct leash_spec *spec, const char *name, unsigned long long pidns) {
        char buf[JOBSTATE_MAX];
        int n = jobstate_format(spec, name, getpid(), pidns, getuid(), now_ns(CLOCK_REALTIME), buf, sizeof buf);

        if (n < 0)
                return n;
        if (geteuid() == 0 && fsetxattr(job_fd, JOBSTATE_XATTR_TRUSTED, buf, (size_t) n, 0) == 0)
                return 0;
        if (geteuid() == 0 && errno != EPERM)
                return negative_errno(); /* EOPNOTSUPP: no xattrs here */
        if (fsetxattr(job_fd, JOBSTATE_XATTR_USER, buf, (size_t) n, 0) < 0)
                return negative_errno();
        return 0;
}

int jobstate_read(int job_fd, struct jobstate *ret) {
        char buf[JOBSTATE_MAX + 1];
        struct stat st;
        bool trusted = true;
        ssize_t n;
        int r;

        n = fgetxattr(job_fd, JOBSTATE_XATTR_TRUSTED, buf, sizeof buf - 1);
        if (n < 0 && geteuid() != 0 && fstat(job_fd, &st) == 0 && st.st_uid == geteuid()) {
                n = fgetxattr(job_fd, JOBSTATE_XATTR_USER, buf, sizeof buf - 1);
                trusted = false;
        }
        if (n < 0)
                return -ENODATA;
        buf[n] = '\0';
        if (memchr(buf, '\0', (size_t) n))
                return -ENODATA;
        r = jobstate_parse(buf, ret);
        if (r < 0)
                return -ENODATA;
        ret->trusted = trusted;
        return 0;
}
