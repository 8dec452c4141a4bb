/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the resident launcher (resident.c) and its callers (remote.c) say to
 * each other, and where: resident.h tells what the launcher is.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define RESIDENT_MAGIC 0x6c656173U /* "leas" */
#define RESIDENT_VERSION 1U
#define RESIDENT_MAX_FDS 64         /* the working directory and the caller's descriptors */
#define RESIDENT_MAX_FD_NUMBER 1000 /* the caller's descriptors are below it */
#define RESIDENT_MAX_BLOB (4U << 20)
#define RESIDENT_SOCKET "resident.sock"

/* Sent first, with the descriptors (SCM_RIGHTS: the working directory,
 * then fd_numbers' descriptors in order); then blob_len bytes: argc
 * strings, then envc strings, each NUL-terminated. */
struct resident_request {
        uint32_t magic, version;
        uint32_t argc, envc;
        uint64_t blob_len;
        uint64_t sigmask; /* the caller's blocked signals: signal N is bit N-1 */
        uint32_t n_fds;   /* the caller's descriptors, the working directory not counted */
        int32_t fd_numbers[RESIDENT_MAX_FDS - 1];
        uint8_t fd_cloexec[RESIDENT_MAX_FDS - 1];
};

enum {
        RESIDENT_REFUSED = 1, /* value: errno; text: why. The caller runs the job itself. */
        RESIDENT_STARTED = 2, /* value: the pid of the leash started for the caller */
        RESIDENT_ENDED = 3,   /* value: its wait status */
};

struct resident_reply {
        int32_t kind;
        int32_t value;
        char text[248];
};

/* $XDG_RUNTIME_DIR/leash (or /run/user/UID/leash) and the socket in it;
 * LEASH_RESIDENT_SOCKET names another socket (tests). */
int resident_dir_path(char *buf, size_t size);
int resident_socket_path(char *buf, size_t size);

/* The cgroups the launcher serves by default, and the only ones a caller
 * tries it from: this user's login sessions' scopes (an fnmatch pattern). */
void resident_session_pattern(char *buf, size_t size);
