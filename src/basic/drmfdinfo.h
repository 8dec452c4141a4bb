/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The DRM client keys of /proc/PID/fdinfo/N (Documentation/gpu/drm-usage-stats.rst):
 * one open DRM file is one client; several fds (dup, fork, SCM_RIGHTS) may
 * share it, so the caller dedupes by (drm-pdev, drm-client-id). A pure
 * parser: text in, figures out.
 *
 * Memory: the device-local regions only (amdgpu "vram", i915 "local0", xe
 * "vram0": names starting with "vram" or "local"), resident where the
 * driver says (drm-resident-*), else drm-memory-* (the older name of the
 * same figure), else drm-total-*. Units: none, KiB, MiB. Engines: the sum
 * of drm-engine-* busy nanoseconds (a client busy on two engines at once
 * counts twice, as intel_gpu_top's per-client view does).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct drm_fdinfo {
        char driver[32];
        char pdev[32]; /* "0000:03:00.0" */
        uint64_t client_id;
        uint64_t engine_ns; /* sum of drm-engine-* */
        uint64_t mem_bytes; /* device-local memory, see above */
        bool has_mem;       /* the driver gave a device-local region */
};

/* 0 and *ret filled; -ENOENT when the text holds no drm-driver (not a DRM
 * file, or a driver without usage stats); -EINVAL on a malformed DRM key. */
int drm_fdinfo_parse(const char *text, struct drm_fdinfo *ret);
