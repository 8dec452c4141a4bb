/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"

/* At most this much per read. A kernel file listed record by record (a
 * seq_file: cgroup.procs, a children list) hands out at most a page per
 * read, stopping short at the record that would not fit in it: a short read
 * of a page's worth is not its end. Asked for half a page or less, it stops
 * short only at its end (or before a record longer than that). */
#define READ_CHUNK 2048

int read_fd_at0(int fd, char *buf, size_t size, size_t *ret_len) {
        size_t len = 0;

        if (size == 0)
                return -EINVAL;
        while (len < size - 1) {
                size_t want = size - 1 - len < READ_CHUNK ? size - 1 - len : READ_CHUNK;
                ssize_t n = pread(fd, buf + len, want, (off_t) len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                len += (size_t) n;
                /* one that leaves room has read it all: no second read to
                 * see EOF (a small file, the usual one, takes one read) */
                if ((size_t) n < want)
                        break;
        }
        buf[len] = '\0';
        if (ret_len)
                *ret_len = len;
        return 0;
}

int read_file_at(int dirfd, const char *name, char *buf, size_t size, size_t *ret_len) {
        _cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        return read_fd_at0(fd, buf, size, ret_len);
}

int read_fd_alloc(int fd, size_t max, char **ret, size_t *ret_len) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, cap = 0;

        for (;;) {
                ssize_t n;
                if (cap - len < 4096 && cap <= max) {
                        size_t want = cap ? cap * 2 : 8192;
                        char *p;
                        if (want > max + 2)
                                want = max + 2; /* room for one byte too many, and the NUL */
                        p = realloc(buf, want);
                        if (!p)
                                return -ENOMEM;
                        buf = p;
                        cap = want;
                }
                n = read(fd, buf + len, cap - len - 1);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (n == 0)
                        break;
                len += (size_t) n;
                if (len > max)
                        return -EFBIG;
        }
        if (!buf && !(buf = malloc(1)))
                return -ENOMEM;
        buf[len] = '\0';
        if (ret_len)
                *ret_len = len;
        *ret = TAKE_PTR(buf);
        return 0;
}

int read_file_at_alloc(int dirfd, const char *name, char **ret, size_t *ret_len) {
        _cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY);

        if (fd < 0)
                return negative_errno();
        return read_fd_alloc(fd, 64u << 20, ret, ret_len);
}

int write_string_at(int dirfd, const char *name, const char *s) {
        _cleanup_close_ int fd = openat(dirfd, name, O_WRONLY | O_CLOEXEC | O_NOCTTY);
        size_t len = strlen(s);
        ssize_t n;

        if (fd < 0)
                return negative_errno();
        do
                n = write(fd, s, len);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return negative_errno();
        if ((size_t) n != len)
                return -EIO;
        return 0;
}

/* One poll() tells which of 0-2 are closed (POLLNVAL), where a fcntl each
 * took three calls. poll sees an O_PATH descriptor as closed too, so a
 * POLLNVAL is confirmed by fcntl before /dev/null takes the number. */
int fd_sanitize_stdio(void) {
        struct pollfd p[3] = {{.fd = 0}, {.fd = 1}, {.fd = 2}};
        bool probed = poll(p, 3, 0) >= 0;

        for (int fd = 0; fd < 3; fd++) {
                int n;
                if (probed && !(p[fd].revents & POLLNVAL))
                        continue;
                if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
                        continue;
                /* the lowest free number: fd itself, since those below are open */
                n = open("/dev/null", O_RDWR | O_NOCTTY);
                if (n < 0)
                        return -errno;
                if (n != fd) {
                        close(n);
                        return -EBADF;
                }
        }
        return 0;
}
