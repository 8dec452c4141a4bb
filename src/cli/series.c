/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where the time series goes (--series PATH or fd:N). Opened before the job
 * starts, like the report destination, so that a bad path fails with nothing
 * created and the job can never redirect it: no symlink is followed at the
 * last step, and an existing file is truncated only when it is a regular
 * file with a single link (a hard link planted to another file is refused).
 * Rows are written as the samples are taken, so the file can be followed
 * live (tail -f); a half-run series is still a valid prefix.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../basic/macro.h"
#include "../basic/parse.h"
#include "cli.h"

int cli_series_open(const char *path, int *ret_fd, bool *ret_own, bool *ret_created) {
        _cleanup_close_ int fd = -1;
        struct stat st;
        uint64_t n;

        if (strncmp(path, "fd:", 3) == 0) {
                if (parse_u64(path + 3, &n) < 0 || n > 1024 * 1024)
                        return usage_error("--series: '%s': expected a path or fd:N", path);
                if (fcntl((int) n, F_GETFD) < 0)
                        return usage_error("--series: '%s': descriptor %d is not open", path, (int) n);
                *ret_fd = (int) n;
                *ret_own = false;
                *ret_created = false;
                return 0;
        }
        *ret_created = false;
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0644);
        if (fd >= 0)
                *ret_created = true;
        else if (errno == EEXIST)
                fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return usage_error("--series: cannot open '%s': %s", path,
                                   errno == ELOOP ? "it is a symbolic link" : strerror(errno));
        if (fstat(fd, &st) < 0)
                return usage_error("--series: cannot open '%s': %s", path, strerror(errno));
        if (S_ISREG(st.st_mode)) {
                if (st.st_nlink > 1)
                        return usage_error("--series: '%s' has %ju hard links: refusing to truncate it", path,
                                           (uintmax_t) st.st_nlink);
                if (ftruncate(fd, 0) < 0)
                        return usage_error("--series: cannot truncate '%s': %s", path, strerror(errno));
        }
        *ret_fd = TAKE_FD(fd);
        *ret_own = true;
        return 0;
}
