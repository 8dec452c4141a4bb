/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a job uses of each GPU, attributed by pid: the processes of the job
 * (cgroup.procs, or its tree) are matched against NVML's per-device process
 * lists (NVIDIA) and against the DRM clients their open /dev/dri files are
 * (AMD, Intel: /proc/PID/fdinfo, deduplicated by drm-pdev + drm-client-id).
 * A GPU appears in a reading only when a process of the job uses it.
 *
 * gpu_read() is one look (leash ps/stat/top, each sample); struct gpu_track
 * is what the sampler keeps over the job's life: the GPUs it touched, the
 * memory now and at peak on each, the utilisation averaged over the samples
 * (DRM's from the busy-time delta between two samples).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define GPU_MAX 16

struct gpu_now {
        char id[40];        /* "nvidia0" (NVML index) or the PCI address of a DRM device */
        char uuid[64];      /* NVIDIA's GPU-…; "" for DRM */
        char name[64];      /* the product, or the DRM driver */
        const char *source; /* "nvml" or "drm_fdinfo" */
        uint64_t mem_bytes; /* the job's memory on it; UINT64_MAX when the driver does not say */
        uint64_t util_pct;  /* the job's utilisation now; UINT64_MAX when unknown */
        uint64_t engine_ns; /* DRM: busy time of the job's clients, cumulative */
        unsigned procs;     /* processes of the job using it */
};

struct gpu_reading {
        bool nvml, drm;  /* the sources that answered */
        const char *why; /* when neither: why there are no GPU figures */
        unsigned n;
        struct gpu_now g[GPU_MAX];
};

struct gpu_life {
        struct gpu_now last; /* the last reading (mem 0 once the job left it) */
        uint64_t mem_peak;
        uint64_t util_sum, util_n;
        uint64_t prev_engine_ns, prev_t_us;
        bool have_prev;
};

struct gpu_track {
        bool sampled;   /* at least one reading */
        bool available; /* a source answered */
        const char *why;
        const char *sources; /* "nvml", "drm_fdinfo", "nvml+drm_fdinfo" */
        unsigned n;
        struct gpu_life g[GPU_MAX];
};

/* pids: the job's processes (any order). */
int gpu_read(int proc_fd, const pid_t *pids, size_t n, struct gpu_reading *ret);
/* Adds a reading taken t_us after the start; fills the DRM utilisation of
 * the reading from the previous one. */
void gpu_track_add(struct gpu_track *t, struct gpu_reading *r, uint64_t t_us);
/* What leash can see on this host, for `leash check`: 0 and the count of
 * NVIDIA devices and DRM render nodes, or -errno and why. */
int gpu_probe(unsigned *ret_nvidia, unsigned *ret_drm, const char **ret_why);
