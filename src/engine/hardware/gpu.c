/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Attribution by pid (see gpu.h). NVML's lists are per device, a few
 * entries each, so the job's pids are sorted once and each listed pid is
 * looked up: the cost grows with the GPUs' process lists, not with the job.
 * The DRM side must look at the job's own fds, so it runs only on a host
 * with DRM nodes (/dev/dri/renderD*) and costs a readdir of /proc/PID/fd a
 * process; a job's fd may be any file, so only links to /dev/dri/ are read.
 */
#include "gpu.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../basic/drmfdinfo.h"
#include "../../basic/fileio.h"
#include "../../basic/macro.h"
#include "nvml.h"

static int cmp_pid(const void *a, const void *b) {
        pid_t x = *(const pid_t *) a, y = *(const pid_t *) b;
        return x < y ? -1 : x > y;
}

/* LSD radix sort, 8 bits a pass: a sample's pid list (1000 and more) costs
 * a few microseconds, where qsort's comparisons were most of gpu_read's time
 * (bench/gpu-sampling, perf) */
static int sort_pids(const pid_t *in, size_t n, pid_t *out) {
        _cleanup_free_ uint32_t *tmp = malloc(n * sizeof *tmp);
        uint32_t *a = (uint32_t *) out, *b = tmp;

        if (!tmp)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                a[i] = (uint32_t) in[i];
        for (unsigned shift = 0; shift < 32; shift += 8) {
                size_t count[257] = {0};
                uint32_t *t;
                for (size_t i = 0; i < n; i++)
                        count[((a[i] >> shift) & 0xff) + 1]++;
                for (int k = 0; k < 256; k++)
                        count[k + 1] += count[k];
                for (size_t i = 0; i < n; i++)
                        b[count[(a[i] >> shift) & 0xff]++] = a[i];
                t = a, a = b, b = t;
        }
        /* four passes: the result is back in out */
        return 0;
}

static bool in_job(const pid_t *sorted, size_t n, pid_t pid) {
        return n > 0 && bsearch(&pid, sorted, n, sizeof pid, cmp_pid) != NULL; /* no job pid yet: sorted may be NULL */
}

static struct gpu_now *slot(struct gpu_reading *r, const char *id) {
        for (unsigned i = 0; i < r->n; i++)
                if (strcmp(r->g[i].id, id) == 0)
                        return &r->g[i];
        if (r->n == GPU_MAX)
                return NULL;
        memset(&r->g[r->n], 0, sizeof r->g[r->n]);
        snprintf(r->g[r->n].id, sizeof r->g[r->n].id, "%s", id);
        r->g[r->n].util_pct = UINT64_MAX;
        return &r->g[r->n++];
}

static void nvml_device(unsigned i, const pid_t *sorted, size_t n, uint64_t since_us, struct gpu_reading *r) {
        _cleanup_free_ struct nvml_proc *p = NULL;
        _cleanup_free_ struct nvml_util *u = NULL;
        struct gpu_now *g = NULL;
        char id[16], uuid[NVML_UUID_MAX], name[NVML_NAME_MAX];
        unsigned minor;
        int np = nvml_procs(i, &p), nu;

        snprintf(id, sizeof id, "nvidia%u", i);
        for (int k = 0; k < np; k++) {
                if (!in_job(sorted, n, p[k].pid))
                        continue;
                if (!g && !(g = slot(r, id)))
                        return;
                g->source = "nvml";
                g->procs++;
                if (p[k].mem_bytes == UINT64_MAX || g->mem_bytes == UINT64_MAX)
                        g->mem_bytes = UINT64_MAX;
                else
                        g->mem_bytes += p[k].mem_bytes;
        }
        if (!g)
                return;
        if (nvml_describe(i, uuid, name, &minor) == 0) {
                snprintf(g->uuid, sizeof g->uuid, "%s", uuid);
                snprintf(g->name, sizeof g->name, "%s", name);
        }
        nu = nvml_proc_util(i, since_us, &u);
        for (int k = 0; k < nu; k++)
                if (in_job(sorted, n, u[k].pid))
                        g->util_pct = (g->util_pct == UINT64_MAX ? 0 : g->util_pct) + u[k].sm_pct;
        if (nu >= 0 && g->util_pct == UINT64_MAX)
                g->util_pct = 0; /* sampled, and none of the job's */
}

static void read_nvml(const pid_t *sorted, size_t n, struct gpu_reading *r) {
        unsigned count;
        struct timespec ts;

        if (nvml_open(&r->why) < 0 || nvml_count(&count) < 0)
                return;
        r->nvml = true;
        clock_gettime(CLOCK_REALTIME, &ts);
        /* NVML keeps samples a few seconds: the last second's */
        for (unsigned i = 0; i < count; i++)
                nvml_device(i, sorted, n, ((uint64_t) ts.tv_sec - 1) * 1000000ULL + (uint64_t) ts.tv_nsec / 1000, r);
}

struct drm_seen {
        char pdev[32];
        uint64_t client_id;
};

static void drm_proc(int proc_fd, pid_t pid, struct drm_seen *seen, size_t *n_seen, struct gpu_reading *r) {
        char path[64], link[64], text[4096];
        struct dirent *e;
        DIR *d;
        int fd;

        snprintf(path, sizeof path, "%d/fd", (int) pid);
        fd = openat(proc_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || !(d = fdopendir(fd))) {
                if (fd >= 0)
                        close(fd);
                return;
        }
        while ((e = readdir(d))) {
                struct drm_fdinfo f;
                struct gpu_now *g;
                ssize_t l = readlinkat(dirfd(d), e->d_name, link, sizeof link - 1);
                size_t k;
                if (l < 9 || strncmp(link, "/dev/dri/", 9) != 0)
                        continue;
                snprintf(path, sizeof path, "%d/fdinfo/%.16s", (int) pid, e->d_name);
                if (read_file_at(proc_fd, path, text, sizeof text, NULL) < 0 || drm_fdinfo_parse(text, &f) < 0)
                        continue;
                for (k = 0; k < *n_seen; k++)
                        if (seen[k].client_id == f.client_id && strcmp(seen[k].pdev, f.pdev) == 0)
                                break;
                if (k < *n_seen || *n_seen == 256)
                        continue; /* the same client through another fd */
                snprintf(seen[*n_seen].pdev, sizeof seen->pdev, "%s", f.pdev);
                seen[(*n_seen)++].client_id = f.client_id;
                if (!(g = slot(r, f.pdev[0] ? f.pdev : f.driver)))
                        continue;
                g->source = "drm_fdinfo";
                snprintf(g->name, sizeof g->name, "%s", f.driver);
                g->procs++;
                g->engine_ns += f.engine_ns;
                if (f.has_mem && g->mem_bytes != UINT64_MAX)
                        g->mem_bytes += f.mem_bytes;
        }
        closedir(d);
}

static unsigned drm_nodes(void) {
        DIR *d = opendir("/dev/dri");
        struct dirent *e;
        unsigned n = 0;

        if (!d)
                return 0;
        while ((e = readdir(d)))
                n += strncmp(e->d_name, "renderD", 7) == 0;
        closedir(d);
        return n;
}

int gpu_read(int proc_fd, const pid_t *pids, size_t n, struct gpu_reading *ret) {
        _cleanup_free_ pid_t *sorted = NULL;
        _cleanup_free_ struct drm_seen *seen = NULL;
        size_t n_seen = 0;

        memset(ret, 0, sizeof *ret);
        /* a host without any GPU driver pays two failed look-ups, nothing per process */
        if (nvml_open(&ret->why) < 0 && (proc_fd < 0 || drm_nodes() == 0)) {
                if (!ret->why)
                        ret->why = "no GPU driver: no NVIDIA library and no DRM render node";
                return 0;
        }
        if (n) {
                sorted = malloc(n * sizeof *sorted);
                if (!sorted)
                        return -ENOMEM;
                if (sort_pids(pids, n, sorted) < 0)
                        return -ENOMEM;
        }
        read_nvml(sorted, n, ret);
        if (proc_fd >= 0 && drm_nodes() > 0) {
                ret->drm = true;
                seen = calloc(256, sizeof *seen);
                for (size_t i = 0; seen && i < n; i++)
                        drm_proc(proc_fd, pids[i], seen, &n_seen, ret);
        }
        if (!ret->nvml && !ret->drm && !ret->why)
                ret->why = "no GPU driver: no NVIDIA library and no DRM render node";
        return 0;
}

static struct gpu_life *life(struct gpu_track *t, const struct gpu_now *g) {
        for (unsigned i = 0; i < t->n; i++)
                if (strcmp(t->g[i].last.id, g->id) == 0)
                        return &t->g[i];
        if (t->n == GPU_MAX)
                return NULL;
        memset(&t->g[t->n], 0, sizeof t->g[t->n]);
        return &t->g[t->n++];
}

void gpu_track_add(struct gpu_track *t, struct gpu_reading *r, uint64_t t_us) {
        t->sampled = true;
        t->available = t->available || r->nvml || r->drm;
        t->why = t->available ? NULL : r->why;
        if (r->nvml || r->drm)
                t->sources = r->nvml && r->drm ? "nvml+drm_fdinfo" : r->nvml ? "nvml" : "drm_fdinfo";
        for (unsigned i = 0; i < t->n; i++)
                t->g[i].last.mem_bytes = 0; /* left the GPU, unless seen below */
        for (unsigned i = 0; i < r->n; i++) {
                struct gpu_now *g = &r->g[i];
                struct gpu_life *l = life(t, g);
                if (!l)
                        continue;
                if (strcmp(g->source, "drm_fdinfo") == 0) {
                        if (l->have_prev && t_us > l->prev_t_us && g->engine_ns >= l->prev_engine_ns)
                                g->util_pct = (g->engine_ns - l->prev_engine_ns) / 10 / (t_us - l->prev_t_us);
                        l->prev_engine_ns = g->engine_ns;
                        l->prev_t_us = t_us;
                        l->have_prev = true;
                }
                l->last = *g;
                if (g->mem_bytes != UINT64_MAX && g->mem_bytes > l->mem_peak)
                        l->mem_peak = g->mem_bytes;
                if (g->util_pct != UINT64_MAX) {
                        l->util_sum += g->util_pct;
                        l->util_n++;
                }
        }
}

int gpu_probe(unsigned *ret_nvidia, unsigned *ret_drm, const char **ret_why) {
        unsigned nv = 0;
        const char *why = NULL;

        if (nvml_open(&why) == 0 && nvml_count(&nv) < 0)
                nv = 0;
        *ret_nvidia = nv;
        *ret_drm = drm_nodes();
        *ret_why = *ret_nvidia || *ret_drm ? NULL : why ? why : "no GPU driver";
        return 0;
}
