/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "filestamp.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"

static void stamp(struct filestamp *f) {
        struct stat st;

        if (stat(f->path, &st) < 0) {
                f->err = negative_errno();
                return;
        }
        f->err = 0;
        f->dev = st.st_dev;
        f->ino = st.st_ino;
        f->mode = st.st_mode;
        f->uid = st.st_uid;
        f->gid = st.st_gid;
        f->size = st.st_size;
        f->mtime = st.st_mtim;
        f->ctime = st.st_ctim;
}

static bool same_time(const struct timespec *a, const struct timespec *b) {
        return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

static bool same(const struct filestamp *a, const struct filestamp *b) {
        if (a->err || b->err)
                return a->err == b->err;
        return a->dev == b->dev && a->ino == b->ino && a->mode == b->mode && a->uid == b->uid && a->gid == b->gid &&
               a->size == b->size && same_time(&a->mtime, &b->mtime) && same_time(&a->ctime, &b->ctime);
}

int filestamps_add(struct filestamps *s, const char *path) {
        struct filestamp *v = realloc(s->v, (s->n + 1) * sizeof *v);

        if (!v)
                return -ENOMEM;
        s->v = v;
        memset(&v[s->n], 0, sizeof v[s->n]);
        v[s->n].path = strdup(path);
        if (!v[s->n].path)
                return -ENOMEM;
        stamp(&v[s->n++]);
        return 0;
}

bool filestamps_unchanged(const struct filestamps *s) {
        for (size_t i = 0; i < s->n; i++) {
                struct filestamp now = {.path = s->v[i].path};
                stamp(&now);
                if (!same(&s->v[i], &now))
                        return false;
        }
        return true;
}

static int64_t ns_of(const struct timespec *t) {
        return (int64_t) t->tv_sec * 1000000000 + t->tv_nsec;
}

bool filestamps_settled(const struct filestamps *s, const struct timespec *since) {
        int64_t limit = ns_of(since) - (int64_t) FILESTAMP_SETTLE_NS;

        for (size_t i = 0; i < s->n; i++) {
                const struct filestamp *f = &s->v[i];
                if (f->err == 0 && (ns_of(&f->mtime) >= limit || ns_of(&f->ctime) >= limit))
                        return false;
                if (f->err && f->err != -ENOENT && f->err != -ENOTDIR)
                        return false; /* unreadable now: said again at the next build */
        }
        return true;
}

void filestamps_done(struct filestamps *s) {
        for (size_t i = 0; i < s->n; i++)
                free(s->v[i].path);
        free(s->v);
        s->v = NULL;
        s->n = 0;
}
