/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "dlsafe.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#if defined(__x86_64__)
#define SYSTEM_LOADER "/lib64/ld-linux-x86-64.so.2"
#elif defined(__aarch64__)
#define SYSTEM_LOADER "/lib/ld-linux-aarch64.so.1"
#elif defined(__i386__)
#define SYSTEM_LOADER "/lib/ld-linux.so.2"
#else
#define SYSTEM_LOADER NULL
#endif

bool dl_linked_statically(void) {
        /* AT_BASE is where the kernel mapped the program's interpreter; a
         * static (or static-pie) program has none */
        return getauxval(AT_BASE) == 0;
}

/* the loader's banner: "ld.so (... GLIBC 2.39-...) stable release version 2.39." */
static int version_in(const char *p, size_t n, char *buf, size_t size) {
        static const char key[] = "release version ";
        const char *end = p + n;

        for (const char *s = p; (s = memmem(s, end - s, key, sizeof key - 1)); s++) {
                const char *v = s + sizeof key - 1;
                size_t len = 0;
                while (v + len < end && len + 1 < size && (v[len] == '.' || (v[len] >= '0' && v[len] <= '9')))
                        len++;
                while (len > 0 && v[len - 1] == '.')
                        len--;
                if (len > 0 && memchr(v, '.', len)) {
                        memcpy(buf, v, len);
                        buf[len] = '\0';
                        return 0;
                }
        }
        return -ENOENT;
}

int dl_system_glibc_version(const char *path, char *buf, size_t size) {
        char chunk[16 * 1024];
        size_t keep = 0;
        ssize_t n;
        int r = -ENOENT;

        if (!path)
                path = SYSTEM_LOADER;
        if (!path)
                return -EOPNOTSUPP;
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        /* the banner may straddle two reads: keep the last 64 bytes */
        while ((n = read(fd, chunk + keep, sizeof chunk - keep)) > 0) {
                size_t have = keep + (size_t) n;
                if (version_in(chunk, have, buf, size) == 0) {
                        r = 0;
                        break;
                }
                keep = have < 64 ? have : 64;
                memmove(chunk, chunk + have - keep, keep);
        }
        if (n < 0)
                r = -errno;
        close(fd);
        return r;
}

void *dl_open_checked(const char *name, int flags, char *buf, size_t size, const char **ret_why) {
        if (dl_linked_statically()) {
                char sys[32];
                int r = dl_system_glibc_version(NULL, sys, sizeof sys);
                if (r < 0) {
                        snprintf(buf, size,
                                 "this leash is linked statically and cannot tell the system's glibc version "
                                 "(%s: %s); loading %s could crash it",
                                 SYSTEM_LOADER ? SYSTEM_LOADER : "no known loader", strerror(-r), name);
                        *ret_why = buf;
                        return NULL;
                }
                if (strcmp(sys, gnu_get_libc_version()) != 0) {
                        snprintf(buf, size,
                                 "this leash is linked statically with glibc %s and the system's is %s: a static "
                                 "program cannot load %s of another glibc (use a leash built on this system, or "
                                 "one built with --disable-static-leash)",
                                 gnu_get_libc_version(), sys, name);
                        *ret_why = buf;
                        return NULL;
                }
        }
        void *h = dlopen(name, flags);
        if (!h)
                *ret_why = dlerror();
        return h;
}

void *dl_open_fd_checked(int fd, const char *name, int flags, char *buf, size_t size, const char **ret_why) {
        char path[40];

        /* the loader opens this name: the file fd is, whatever its path now names */
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        void *h = dl_open_checked(path, flags, buf, size, ret_why);
        if (!h && *ret_why != buf) {
                snprintf(buf, size, "%s: %s", name, *ret_why ? *ret_why : "cannot be loaded");
                *ret_why = buf;
        }
        return h;
}
