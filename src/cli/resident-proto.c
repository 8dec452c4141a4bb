/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Where the resident launcher listens (resident-proto.h). */
#include "resident-proto.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int resident_dir_path(char *buf, size_t size) {
        const char *rt = getenv("XDG_RUNTIME_DIR");
        int n = rt && rt[0] == '/' ? snprintf(buf, size, "%s/leash", rt)
                                   : snprintf(buf, size, "/run/user/%u/leash", (unsigned) getuid());

        return n < 0 || (size_t) n >= size ? -ENAMETOOLONG : 0;
}

int resident_socket_path(char *buf, size_t size) {
        const char *env = getenv("LEASH_RESIDENT_SOCKET");
        char dir[4096];
        int r;

        if (env && env[0])
                return (size_t) snprintf(buf, size, "%s", env) >= size ? -ENAMETOOLONG : 0;
        r = resident_dir_path(dir, sizeof dir);
        if (r < 0)
                return r;
        return (size_t) snprintf(buf, size, "%s/%s", dir, RESIDENT_SOCKET) >= size ? -ENAMETOOLONG : 0;
}

void resident_session_pattern(char *buf, size_t size) {
        snprintf(buf, size, "/user.slice/user-%u.slice/session-*.scope", (unsigned) getuid());
}
