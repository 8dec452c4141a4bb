/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Users and groups for --user/--group: /etc/passwd and /etc/group first, then
 * getent(1) for names the files do not have (NSS without loading NSS into
 * leash; see userdb.c). Numeric ids are the caller's business.
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

struct userdb_user {
        uid_t uid;
        gid_t gid;
        char *name, *dir, *shell;
        bool from_files; /* found in /etc/passwd, not through getent */
};

/* -ENOENT when no database knows the user or group. */
int userdb_user_by_name(const char *name, struct userdb_user *ret);
int userdb_user_by_uid(uid_t uid, struct userdb_user *ret);
void userdb_user_done(struct userdb_user *u);
int userdb_group_by_name(const char *name, gid_t *ret);
/* The supplementary groups of u, primary first, without duplicates. */
int userdb_groups(const struct userdb_user *u, gid_t primary, gid_t **ret, size_t *ret_n);
