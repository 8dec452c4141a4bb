/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where cgroup2 is, which cgroup leash itself is in, and which directory job
 * cgroups go under. The pure parsers take kernel text and are unit-tested on
 * fixtures; the libcgroup adapter (controller discovery across v1 and v2 for
 * `leash check`) lives here too and nowhere else.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "../cgroup/cgroupfs.h"
#include "../leash.h"

/* From /proc/self/mountinfo text: the first cgroup2 mount point, and how many
 * v1 cgroup hierarchies with controllers are mounted. */
int host_parse_mountinfo(const char *text, char *ret_mount, size_t size, unsigned *ret_v1_count);
/* From /proc/self/cgroup text: the cgroup2 path ("0::/a/b" -> "/a/b"). */
int host_parse_proc_cgroup(const char *text, char *ret_path, size_t size);

int host_cgroup2_mount(char *ret, size_t size, unsigned *ret_v1_count);
int host_own_cgroup(char *ret, size_t size);
/* The same, statfs of the usual places first (the launch path). */
int host_cgroup2_mount_fast(char *ret, size_t size);
