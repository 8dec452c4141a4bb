/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The report destination, and the series' (--series): one opener for both,
 * so both get the same rules. When leash is root and the job is not trusted,
 * every directory the job can write is the job's: it can plant a symlink
 * where the report will go, or create the temporary name leash would use.
 * So everything is decided before the job starts and done afterwards through
 * descriptors opened then:
 *
 * - The path is walked component by component with openat(O_PATH |
 *   O_NOFOLLOW) (no realpath: a name resolved once and opened later can be
 *   swapped in between). A symlink is read through the descriptor of the
 *   symlink itself and spliced into the rest of the path; as root, it is
 *   followed only if root owns it (stricter than fs.protected_symlinks, which
 *   also trusts the directory's owner: here that may be the job).
 * - As root, the report is written only into a directory root owns, and an
 *   existing regular file in its place must be root's: leash never replaces
 *   another user's file.
 * - A regular file is an O_TMPFILE in the held directory, linked at the end
 *   straight to the final name when nothing is there (linkat: EEXIST rather
 *   than follow or replace), else under an unpredictable name (getrandom)
 *   and renamed over the final name with renameat relative to the same
 *   descriptor (a regular file there is exchanged with it and unlinked, see
 *   exchange_into_place): a symlink planted at the final name meanwhile is
 *   replaced, never followed. Without O_TMPFILE, the
 *   unpredictable name is created with O_EXCL before the job starts.
 * - The series is written row by row while the job runs, so that it can be
 *   followed (tail -f): it is opened under its final name before the job
 *   starts, with O_CREAT | O_EXCL | O_NOFOLLOW, or, when a file is there, a
 *   regular file with a single link opened O_NOFOLLOW, checked to be the file
 *   looked at, and truncated (a hard link planted to another file is refused).
 * - A FIFO, terminal or socket is opened before the job starts (O_NONBLOCK,
 *   so a FIFO without a reader is an error rather than a hang); as root, only
 *   one that root owns. "fd:N" and every spelling of a descriptor leash holds
 *   mean that descriptor.
 * - A regular file that is also leash's stdin, stdout or stderr (`-o
 *   out.txt >out.txt`, `-o in.txt <in.txt`) is refused: the report, renamed
 *   over it, would silently replace the job's input or output. So is the
 *   standard input itself, by any name (`/dev/stdin`, `fd:0`, a FIFO the job
 *   reads, another descriptor of the same file): the job would read the
 *   report, or the report would overwrite what it reads.
 *
 * Every problem is found before the job starts: 125, nothing created.
 */
#include "report-dest.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../basic/log.h"
#include "../basic/macro.h"
#include "../basic/parse.h"
#include "cli.h"

#define MAX_SYMLINKS 40
#define PATH_BUF 8192
#define COMP_MAX 256 /* a component's bytes, its NUL included */

/* path without empty and "." components: "/dev//./stdout" -> "/dev/stdout" */
static void normalize(const char *path, char *out, size_t size) {
        size_t o = 0;

        out[0] = '\0';
        for (const char *p = path; *p;) {
                const char *e = strchrnul(p, '/');
                size_t l = (size_t) (e - p);
                if (l > 0 && !(l == 1 && p[0] == '.') && o + l + 2 < size) {
                        if (o > 0 || path[0] == '/')
                                out[o++] = '/';
                        memcpy(out + o, p, l);
                        o += l;
                }
                p = *e ? e + 1 : e;
        }
        out[o] = '\0';
}

int report_fd_of(const char *path, int *ret_fd) {
        char n[PATH_BUF], pid_prefix[64];
        const char *prefixes[] = {"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/", pid_prefix};
        uint64_t v;

        if (strcmp(path, "-") == 0) { /* as every Unix tool spells standard output */
                *ret_fd = 1;
                return 1;
        }
        if (strncmp(path, "fd:", 3) == 0) {
                if (parse_u64(path + 3, &v) < 0 || v > 1024 * 1024)
                        return -EINVAL;
                *ret_fd = (int) v;
                return 1;
        }
        normalize(path, n, sizeof n);
        if (strcmp(n, "/dev/stdin") == 0 || strcmp(n, "/dev/stdout") == 0 || strcmp(n, "/dev/stderr") == 0) {
                *ret_fd = strcmp(n, "/dev/stdin") == 0 ? 0 : strcmp(n, "/dev/stdout") == 0 ? 1 : 2;
                return 1;
        }
        snprintf(pid_prefix, sizeof pid_prefix, "/proc/%d/fd/", (int) getpid());
        for (size_t i = 0; i < ELEMENTSOF(prefixes); i++) {
                size_t l = strlen(prefixes[i]);
                if (strncmp(n, prefixes[i], l) != 0)
                        continue;
                if (parse_u64(n + l, &v) < 0 || v > 1024 * 1024)
                        return -EINVAL;
                *ret_fd = (int) v;
                return 1;
        }
        return 0;
}

static int random_name(char *buf, size_t size) {
        uint64_t r;

        if (getrandom(&r, sizeof r, 0) != (ssize_t) sizeof r)
                return -errno ? -errno : -EIO;
        snprintf(buf, size, ".leash-report-%016llx", (unsigned long long) r);
        return 0;
}

/* A walk of a report path (resolve), one component at a time. */
struct walk {
        char *rest, *target; /* PATH_BUF each: the path being walked, a symlink's target */
        char *p;             /* in rest: what is left to walk */
        int cur;             /* O_PATH descriptor of the directory reached */
        unsigned hops;       /* symlinks followed */
        bool as_root;
        char *why;
        size_t whysize;
};

/* The next component into comp, and whether it is the last one. */
static int walk_next(struct walk *w, char comp[static COMP_MAX], bool *ret_last) {
        const char *e;
        size_t l;

        while (*w->p == '/')
                w->p++;
        e = strchrnul(w->p, '/');
        l = (size_t) (e - w->p);
        if (l >= COMP_MAX) {
                snprintf(w->why, w->whysize, "a component is too long");
                return -ENAMETOOLONG;
        }
        memcpy(comp, w->p, l);
        comp[l] = '\0';
        w->p += l;
        while (*w->p == '/')
                w->p++;
        *ret_last = !*w->p;
        return 0;
}

/* An empty, "." or ".." component: the walk stays, or climbs to the parent;
 * the last component names a file, never one of these. */
static int walk_dot(struct walk *w, const char *comp, bool last) {
        int up;

        if (last) {
                snprintf(w->why, w->whysize, "it names a directory: expected a file");
                return -EISDIR;
        }
        if (strcmp(comp, "..") != 0)
                return 0;
        up = openat(w->cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (up < 0)
                return -errno;
        close(w->cur);
        w->cur = up;
        return 0;
}

/* The symlink fd (comp, st its stat) spliced into what is left of the walk:
 * its target read through fd itself, never through a name looked up again;
 * as root, only a symlink root owns is followed. */
static int walk_symlink(struct walk *w, int fd, const struct stat *st, const char *comp) {
        ssize_t n;

        if (w->as_root && st->st_uid != 0) {
                snprintf(w->why, w->whysize,
                         "'%s' is a symlink owned by uid %u: as root, leash follows only "
                         "symlinks root owns in a report path",
                         comp, (unsigned) st->st_uid);
                return -EPERM;
        }
        if (++w->hops > MAX_SYMLINKS) {
                snprintf(w->why, w->whysize, "too many levels of symbolic links");
                return -ELOOP;
        }
        n = readlinkat(fd, "", w->target, PATH_BUF - 1);
        if (n <= 0) {
                snprintf(w->why, w->whysize, "cannot read the symlink '%s'", comp);
                return n < 0 ? -errno : -EINVAL;
        }
        w->target[n] = '\0';
        if ((size_t) n + 2 + strlen(w->p) >= PATH_BUF) {
                snprintf(w->why, w->whysize, "the path is too long");
                return -ENAMETOOLONG;
        }
        if (*w->p)
                strcat(strcat(w->target, "/"), w->p);
        strcpy(w->rest, w->target);
        w->p = w->rest;
        if (w->rest[0] == '/') {
                int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (root < 0)
                        return -errno;
                close(w->cur);
                w->cur = root;
        }
        return 0;
}

/* The walk's end: the directory reached and the last component's name. */
static int walk_found(struct walk *w, const char *comp, int *ret_dirfd, char **ret_name) {
        *ret_name = strdup(comp);
        if (!*ret_name)
                return -ENOMEM;
        *ret_dirfd = TAKE_FD(w->cur);
        return 0;
}

/* Walks what is left of w, component by component, each opened O_PATH |
 * O_NOFOLLOW relative to the directory reached. */
static int walk(struct walk *w, int *ret_dirfd, char **ret_name) {
        for (;;) {
                _cleanup_close_ int fd = -1;
                struct stat st;
                char comp[COMP_MAX];
                bool last;
                int r;

                r = walk_next(w, comp, &last);
                if (r < 0)
                        return r;
                if (comp[0] == '\0' || strcmp(comp, ".") == 0 || strcmp(comp, "..") == 0) {
                        r = walk_dot(w, comp, last);
                        if (r < 0)
                                return r;
                        continue;
                }
                fd = openat(w->cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0 && errno == ENOENT && last)
                        return walk_found(w, comp, ret_dirfd, ret_name);
                if (fd < 0 || fstat(fd, &st) < 0) {
                        r = -errno;
                        snprintf(w->why, w->whysize, "cannot open '%s': %s", comp, strerror(errno));
                        return r;
                }
                if (S_ISLNK(st.st_mode)) {
                        r = walk_symlink(w, fd, &st, comp);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (last)
                        return walk_found(w, comp, ret_dirfd, ret_name);
                if (!S_ISDIR(st.st_mode)) {
                        snprintf(w->why, w->whysize, "'%s' is not a directory", comp);
                        return -ENOTDIR;
                }
                close(w->cur);
                w->cur = TAKE_FD(fd);
        }
}

/* Walks path from / or the working directory. On success *ret_dirfd is an
 * O_PATH descriptor of the directory that holds the final component, and
 * *ret_name that component (which may not exist). why gets the reason of a
 * failure (with errno set for %m-less callers). */
static int resolve(const char *path, bool as_root, int *ret_dirfd, char **ret_name, char *why, size_t whysize) {
        _cleanup_free_ char *rest = malloc(PATH_BUF), *target = malloc(PATH_BUF);
        struct walk w = {.rest = rest, .target = target, .cur = -1, .as_root = as_root, .why = why, .whysize = whysize};
        int r;

        if (!rest || !target)
                return -ENOMEM;
        if (strlen(path) >= PATH_BUF) {
                snprintf(why, whysize, "the path is too long");
                return -ENAMETOOLONG;
        }
        strcpy(rest, path);
        w.p = rest;
        w.cur = open(path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (w.cur < 0) {
                snprintf(why, whysize, "cannot open %s: %s", path[0] == '/' ? "/" : "the working directory",
                         strerror(errno));
                return -errno;
        }
        r = walk(&w, ret_dirfd, ret_name);
        if (w.cur >= 0)
                close(w.cur);
        return r;
}

/* st is the file or FIFO the job reads as its standard input */
static bool is_stdin(const struct stat *st) {
        struct stat i;
        return fstat(0, &i) == 0 && (S_ISREG(i.st_mode) || S_ISFIFO(i.st_mode)) && i.st_dev == st->st_dev &&
               i.st_ino == st->st_ino;
}

static int refuse_stdin(const struct report_dest *d, const char *path) {
        return usage_error("%s: '%s' is also the job's standard input: the report would replace or feed what the "
                           "job reads (give the report another name)",
                           d->option, path);
}

static int prepare_fd(const char *path, int fd, struct report_dest *d) {
        struct stat st;
        int fl = fcntl(fd, F_GETFL);

        if (fd == 0 || (fd > 2 && fstat(fd, &st) == 0 && is_stdin(&st)))
                return refuse_stdin(d, path);
        if (fl < 0)
                return usage_error("%s: '%s': descriptor %d is not open", d->option, path, fd);
        if ((fl & O_ACCMODE) == O_RDONLY)
                return usage_error("%s: '%s': descriptor %d is open read-only", d->option, path, fd);
        if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode)) {
                struct pollfd p = {.fd = fd, .events = POLLOUT};
                if (poll(&p, 1, 0) == 1 && (p.revents & POLLERR))
                        return usage_error("%s: '%s': descriptor %d is a pipe with no reader", d->option, path, fd);
        }
        d->fd = fd;
        return 0;
}

/* A FIFO, terminal, socket...: opened now and written in place. As root,
 * only one that root owns: another user's FIFO or socket planted at the
 * report's path (a shared, sticky --report-dir) would receive the whole
 * report, arguments included. It is looked at through an O_PATH descriptor
 * and opened through that descriptor, so what was judged is what is opened
 * (and a device is never opened before it is judged). */
static const char *kind_name(mode_t m) {
        return S_ISFIFO(m)   ? "FIFO"
               : S_ISSOCK(m) ? "socket"
               : S_ISCHR(m)  ? "character device"
               : S_ISBLK(m)  ? "block device"
                             : "special file";
}

static int prepare_special(struct report_dest *d, bool as_root) {
        _cleanup_close_ int pfd = openat(d->dirfd, d->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        char proc[64];
        struct stat st;
        int fd;

        if (pfd < 0 || fstat(pfd, &st) < 0)
                return usage_error("%s: cannot open '%s': %m", d->option, d->path);
        if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode))
                return usage_error("%s: '%s' changed while it was checked", d->option, d->path);
        if (is_stdin(&st))
                return refuse_stdin(d, d->path);
        if (as_root && st.st_uid != 0)
                return usage_error("%s: '%s' is a %s owned by uid %u: as root, leash writes a report into a FIFO, "
                                   "socket or device only when root owns it",
                                   d->option, d->path, kind_name(st.st_mode), (unsigned) st.st_uid);
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", pfd);
        fd = open(proc, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) {
                if (errno == ENXIO)
                        return usage_error("%s: '%s': no one reads it (a FIFO without a reader, or a socket)",
                                           d->option, d->path);
                return usage_error("%s: cannot open '%s': %m", d->option, d->path);
        }
        d->fd = fd;
        d->own_fd = true;
        /* blocking writes from now on: a FIFO reader may be slower than leash */
        if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode)) {
                int fl = fcntl(fd, F_GETFL);
                if (fl >= 0)
                        (void) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
        }
        return 0;
}

static int prepare_file(struct report_dest *d, const struct stat *old) {
        char name[64];
        int fd;

        fd = openat(d->dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
        if (fd >= 0) {
                d->tmpfile = true;
        } else if (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL) {
                /* no O_TMPFILE on this filesystem: an unpredictable name, O_EXCL */
                for (int i = 0; i < 16; i++) {
                        int r = random_name(name, sizeof name);
                        if (r < 0)
                                return usage_error("%s: cannot make a temporary name: %s", d->option, strerror(-r));
                        fd = openat(d->dirfd, name, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
                        if (fd >= 0 || errno != EEXIST)
                                break;
                }
                if (fd >= 0) {
                        d->tmp_name = strdup(name);
                        if (!d->tmp_name) {
                                (void) unlinkat(d->dirfd, name, 0);
                                close(fd);
                                return usage_error("out of memory");
                        }
                }
        }
        if (fd < 0)
                return usage_error("%s: cannot create '%s': %m", d->option, d->path);
        d->fd = fd;
        d->own_fd = true;
        /* a replaced file keeps its permissions (root's file, as root) */
        if (old)
                (void) fchmod(fd, old->st_mode & 07777);
        return 0;
}

/* --series: the final name itself, made now or truncated now */
static int prepare_live(struct report_dest *d, const struct stat *old) {
        struct stat st;
        int fd;

        if (!old) {
                fd = openat(d->dirfd, d->name, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0644);
                if (fd < 0)
                        return usage_error("%s: cannot create '%s': %m", d->option, d->path);
                d->created = true;
        } else {
                if (old->st_nlink > 1)
                        return usage_error("%s: '%s' has %ju hard links: refusing to truncate it", d->option, d->path,
                                           (uintmax_t) old->st_nlink);
                fd = openat(d->dirfd, d->name, O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
                if (fd < 0)
                        return usage_error("%s: cannot open '%s': %m", d->option, d->path);
                if (fstat(fd, &st) < 0 || st.st_dev != old->st_dev || st.st_ino != old->st_ino || st.st_nlink > 1) {
                        close(fd);
                        return usage_error("%s: '%s' changed while it was checked", d->option, d->path);
                }
                if (ftruncate(fd, 0) < 0) {
                        close(fd);
                        return usage_error("%s: cannot truncate '%s': %m", d->option, d->path);
                }
        }
        d->fd = fd;
        d->own_fd = true;
        return 0;
}

/* 0, 1 or 2 when st is the file leash's stdin, stdout or stderr is
 * (`-o in.txt <in.txt`, `-o out.txt >out.txt`), else -1. */
static int std_stream_of(const struct stat *st) {
        for (int fd = 0; fd <= 2; fd++) {
                struct stat o;
                if (fstat(fd, &o) == 0 && S_ISREG(o.st_mode) && o.st_dev == st->st_dev && o.st_ino == st->st_ino)
                        return fd;
        }
        return -1;
}

int report_prepare(const char *option, const char *path, bool live, struct report_dest *d) {
        bool as_root = geteuid() == 0;
        char why[512] = "";
        struct stat st;
        int r, fd;

        memset(d, 0, sizeof *d);
        d->fd = d->dirfd = -1;
        d->option = option;
        d->path = path;
        d->live = live;
        r = report_fd_of(path, &fd);
        if (r < 0)
                return usage_error("%s: '%s': expected a path or fd:N", option, path);
        if (r > 0)
                return prepare_fd(path, fd, d);

        r = resolve(path, as_root, &d->dirfd, &d->name, why, sizeof why);
        if (r < 0) {
                if (!why[0])
                        snprintf(why, sizeof why, "%s", strerror(-r));
                if (r == -ENOENT)
                        return usage_error("%s: '%s': no such directory (%s)", option, path, why);
                return usage_error("%s: '%s': %s", option, path, why);
        }
        if (as_root && fstat(d->dirfd, &st) == 0 && st.st_uid != 0)
                return usage_error("%s: '%s': its directory is owned by uid %u: as root, leash writes "
                                   "only into a directory root owns",
                                   option, path, (unsigned) st.st_uid);
        if (fstatat(d->dirfd, d->name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                if (errno != ENOENT)
                        return usage_error("%s: cannot look at '%s': %m", option, path);
                return live ? prepare_live(d, NULL) : prepare_file(d, NULL);
        }
        if (S_ISDIR(st.st_mode))
                return usage_error("%s: '%s' is a directory: expected a file", option, path);
        if (S_ISLNK(st.st_mode)) /* it was not a symlink a moment ago */
                return usage_error("%s: '%s' changed while it was checked", option, path);
        if (!S_ISREG(st.st_mode))
                return prepare_special(d, as_root);
        if (as_root && st.st_uid != 0)
                return usage_error("%s: '%s' is owned by uid %u: as root, leash does not replace another "
                                   "user's file",
                                   option, path, (unsigned) st.st_uid);
        if (faccessat(d->dirfd, d->name, W_OK, AT_EACCESS) < 0)
                return usage_error("%s: cannot write '%s': %m", option, path);
        if ((r = std_stream_of(&st)) == 0)
                return refuse_stdin(d, path);
        if (r > 0)
                return usage_error("%s: '%s' is also leash's standard %s: the report would replace what the job "
                                   "writes there (give the report another name, or %s fd:%d)",
                                   option, path, r == 1 ? "output" : "error", option, r);
        return live ? prepare_live(d, &st) : prepare_file(d, &st);
}

static int write_all(int fd, const char *s) {
        size_t len = strlen(s);
        while (len) {
                ssize_t n = write(fd, s, len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                s += n;
                len -= (size_t) n;
        }
        return 0;
}

/* dirfd/name is our file (same inode as fd), not something put there */
static bool is_ours(int dirfd, const char *name, int fd) {
        struct stat a, b;
        return fstatat(dirfd, name, &a, AT_SYMLINK_NOFOLLOW) == 0 && fstat(fd, &b) == 0 && a.st_dev == b.st_dev &&
               a.st_ino == b.st_ino;
}

/* Puts the file linked at tmp in place of the regular file at the final
 * name by exchanging the two names (renameat2 RENAME_EXCHANGE), then unlinks
 * the old one. Readers see the old report or the new one, never neither, as
 * with rename(2); but rename(2) over an existing file makes ext4
 * (auto_da_alloc) write the new file's data out before it returns, measured
 * 0.2-54 ms here, the largest cost of a `--report` run that rewrites its
 * file. Reports are not fsync()ed, new or replaced (HACKING.md, "Reports").
 * Returns true when done; false leaves everything as it was for renameat()
 * (no regular file there, a file system without RENAME_EXCHANGE). */
static bool exchange_into_place(struct report_dest *d, const char *tmp) {
        struct stat st;

        if (fstatat(d->dirfd, d->name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
                return false;
        if (renameat2(d->dirfd, tmp, d->dirfd, d->name, RENAME_EXCHANGE) < 0)
                return false;
        /* tmp now names what was at the final name a moment ago */
        if (fstatat(d->dirfd, tmp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
                /* a directory was swapped in meanwhile: back, so that rename refuses it */
                (void) renameat2(d->dirfd, tmp, d->dirfd, d->name, RENAME_EXCHANGE);
                return false;
        }
        (void) unlinkat(d->dirfd, tmp, 0);
        return true;
}

/* Links the open file at name in dirfd: by its descriptor (AT_EMPTY_PATH,
 * which needs CAP_DAC_READ_SEARCH), else through /proc/self/fd. A name
 * taken is -EEXIST either way: no second try. */
static int link_at(const struct report_dest *d, const char *proc, const char *name) {
        if (linkat(d->fd, "", d->dirfd, name, AT_EMPTY_PATH) == 0)
                return 0;
        if (errno == EEXIST)
                return -EEXIST;
        return linkat(AT_FDCWD, proc, d->dirfd, name, AT_SYMLINK_FOLLOW) == 0 ? 0 : negative_errno();
}

/* Links the file under an unpredictable name in dirfd (retrying on a name
 * taken), renames it over the final name, and checks what landed there. */
static int link_and_rename(struct report_dest *d) {
        char tmp[64], proc[64];
        int r;

        snprintf(proc, sizeof proc, "/proc/self/fd/%d", d->fd);
        /* The final name is free (the usual case): link straight to it.
         * linkat never follows or replaces what is at the name (EEXIST), so
         * success means our inode landed there; anything else goes the long
         * way. Saves a getrandom, a rename and two stats per report. */
        if (link_at(d, proc, d->name) == 0)
                return 0;
        for (int attempt = 0; attempt < 16; attempt++) {
                r = random_name(tmp, sizeof tmp);
                if (r < 0)
                        return r;
                r = link_at(d, proc, tmp);
                if (r == -EEXIST)
                        continue;
                if (r < 0)
                        return r;
                if (!exchange_into_place(d, tmp) && renameat(d->dirfd, tmp, d->dirfd, d->name) < 0) {
                        r = negative_errno();
                        if (is_ours(d->dirfd, tmp, d->fd))
                                (void) unlinkat(d->dirfd, tmp, 0);
                        if (r == -ENOENT) /* the name was taken away before the rename: again */
                                continue;
                        return r;
                }
                if (is_ours(d->dirfd, d->name, d->fd))
                        return 0;
                /* something else was renamed into place: try again */
        }
        return -EBUSY;
}

int report_commit(struct report_dest *d, const char *text) {
        int r;

        /* a reader that went away must not kill leash before it exits with the job's status */
        signal(SIGPIPE, SIG_IGN);
        r = write_all(d->fd, text);
        if (r < 0)
                return r;
        if (d->tmpfile)
                return link_and_rename(d);
        if (d->tmp_name) {
                if (is_ours(d->dirfd, d->tmp_name, d->fd) && renameat(d->dirfd, d->tmp_name, d->dirfd, d->name) == 0 &&
                    is_ours(d->dirfd, d->name, d->fd)) {
                        free(d->tmp_name);
                        d->tmp_name = NULL;
                        return 0;
                }
                /* the name was tampered with: link the file we hold under a new one */
                r = link_and_rename(d);
                if (r == 0 && is_ours(d->dirfd, d->tmp_name, d->fd))
                        (void) unlinkat(d->dirfd, d->tmp_name, 0);
                free(d->tmp_name);
                d->tmp_name = NULL;
                return r;
        }
        return 0;
}

void report_discard(struct report_dest *d) {
        if (d->live && d->created && d->fd >= 0 && is_ours(d->dirfd, d->name, d->fd))
                (void) unlinkat(d->dirfd, d->name, 0);
        d->created = false;
}

void report_close(struct report_dest *d) {
        if (d->tmp_name && d->fd >= 0 && is_ours(d->dirfd, d->tmp_name, d->fd))
                (void) unlinkat(d->dirfd, d->tmp_name, 0); /* never committed */
        if (d->own_fd && d->fd >= 0)
                close(d->fd);
        if (d->dirfd >= 0)
                close(d->dirfd);
        d->fd = d->dirfd = -1;
        free(d->name);
        free(d->tmp_name);
        d->name = d->tmp_name = NULL;
}
