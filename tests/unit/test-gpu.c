/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* GPU accounting's pure parts: DRM fdinfo as amdgpu, i915 and xe print it
 * (Documentation/gpu/drm-usage-stats.rst), the DRM utilisation from two
 * readings, the per-GPU peaks, and the gpu_memory limits' parsing. */
#include <errno.h>
#include <gnu/libc-version.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "basic/dlsafe.h"
#include "basic/drmfdinfo.h"
#include "engine/hardware/gpu.h"
#include "engine/sample/sample.h"
#include "tap.h"

static const char amdgpu[] = "pos:\t0\nflags:\t02100002\nmnt_id:\t24\nino:\t1085\n"
                             "drm-driver:\tamdgpu\n"
                             "drm-client-id:\t42\n"
                             "drm-pdev:\t0000:03:00.0\n"
                             "pasid:\t32771\n"
                             "drm-memory-vram:\t524288 KiB\n"
                             "drm-memory-gtt:\t2048 KiB\n"
                             "drm-memory-cpu:\t0 KiB\n"
                             "amd-memory-visible-vram:\t0 KiB\n"
                             "drm-engine-gfx:\t1500000000 ns\n"
                             "drm-engine-compute:\t500000000 ns\n"
                             "drm-engine-dma:\t0 ns\n";

/* a newer amdgpu: drm-resident-* wins over drm-memory-* and drm-total-* */
static const char amdgpu_new[] = "drm-driver:\tamdgpu\ndrm-client-id:\t7\ndrm-pdev:\t0000:03:00.0\n"
                                 "drm-total-vram:\t1 GiB\ndrm-resident-vram:\t256 MiB\ndrm-memory-vram:\t262144 KiB\n"
                                 "drm-engine-gfx:\t10 ns\n";

static const char i915[] = "pos:\t0\nflags:\t02100002\n"
                           "drm-driver:\ti915\n"
                           "drm-pdev:\t0000:00:02.0\n"
                           "drm-client-id:\t157\n"
                           "drm-total-system0:\t8 MiB\n"
                           "drm-resident-system0:\t8 MiB\n"
                           "drm-total-local0:\t0\n"
                           "drm-engine-render:\t25662044495 ns\n"
                           "drm-engine-copy:\t0 ns\n"
                           "drm-engine-capacity-video:\t2\n";

static const char not_drm[] = "pos:\t0\nflags:\t0100002\nmnt_id:\t15\nino:\t4\n";
static const char bad_unit[] = "drm-driver:\txe\ndrm-client-id:\t1\ndrm-resident-vram0:\t12 parsecs\n";

/* a loader-like file: n bytes of padding, then the banner */
static const char *loader_file(size_t pad, const char *banner) {
        static char path[64];
        snprintf(path, sizeof path, "/tmp/leash-test-ld-XXXXXX");
        int fd = mkstemp(path);
        if (fd < 0)
                return NULL;
        for (size_t i = 0; i < pad; i++)
                if (write(fd, "\x7f", 1) != 1)
                        break;
        if (write(fd, banner, strlen(banner)) < 0)
                path[0] = '\0';
        close(fd);
        return path;
}

/* the glibc version a static leash compares before it loads NVML or
 * libsystemd (src/basic/dlsafe.c; on the H200 machine a mismatch crashed it) */
static void test_glibc_version(void) {
        char v[32];
        const char *p;

        if (access("/lib64/ld-linux-x86-64.so.2", R_OK) == 0) {
                ok(dl_system_glibc_version(NULL, v, sizeof v) == 0, "the system loader names its glibc version");
                is_str(v, gnu_get_libc_version(), "and it is this program's (a dynamic test program runs on it)");
        }
        p = loader_file(100, "ld.so (Ubuntu GLIBC 2.39-0ubuntu8.9) stable release version 2.39.\n");
        ok(p && dl_system_glibc_version(p, v, sizeof v) == 0, "a loader's banner is found");
        is_str(v, "2.39", "its version, without the full stop");
        unlink(p);
        /* the reader takes 16 KiB at a time: a banner across two reads */
        p = loader_file(16 * 1024 - 20, "xx stable release version 2.41.\n");
        ok(p && dl_system_glibc_version(p, v, sizeof v) == 0, "a banner across a read boundary is found");
        is_str(v, "2.41", "its version");
        unlink(p);
        p = loader_file(5000, "release version of nothing\n");
        ok(p && dl_system_glibc_version(p, v, sizeof v) == -ENOENT, "no version in the file: -ENOENT");
        unlink(p);
        ok(dl_system_glibc_version("/nonexistent/ld.so", v, sizeof v) == -ENOENT, "no loader: -ENOENT");
        ok(!dl_linked_statically(), "this test program has a dynamic loader");
}

int main(void) {
        struct drm_fdinfo f;
        struct gpu_reading r;
        struct gpu_track t = {0};
        enum leash_fig fig;
        uint64_t v;
        const char *exp;

        test_glibc_version();
        ok(drm_fdinfo_parse(amdgpu, &f) == 0, "amdgpu fdinfo parses");
        is_str(f.driver, "amdgpu", "driver");
        is_str(f.pdev, "0000:03:00.0", "pdev");
        is_u64(f.client_id, 42, "client id");
        is_u64(f.engine_ns, 2000000000ULL, "engines summed, capacity keys aside");
        is_u64(f.mem_bytes, 524288ULL * 1024, "device-local memory: vram only, not gtt or cpu");
        ok(drm_fdinfo_parse(amdgpu_new, &f) == 0 && f.mem_bytes == 256ULL << 20, "drm-resident-* preferred");
        ok(drm_fdinfo_parse(i915, &f) == 0, "i915 fdinfo parses");
        is_u64(f.mem_bytes, 0, "i915: local0 is 0 (system0 is host memory, not counted)");
        ok(f.has_mem, "i915: a device-local region was given");
        is_u64(f.engine_ns, 25662044495ULL, "i915 engines (capacity is no engine time)");
        ok(drm_fdinfo_parse(not_drm, &f) == -ENOENT, "a non-DRM fd: -ENOENT");
        ok(drm_fdinfo_parse(bad_unit, &f) == -EINVAL, "an unknown unit: -EINVAL");

        /* two readings one second apart, a client busy 0.5 s of it */
        memset(&r, 0, sizeof r);
        r.drm = true;
        r.n = 1;
        snprintf(r.g[0].id, sizeof r.g[0].id, "0000:03:00.0");
        r.g[0].source = "drm_fdinfo";
        r.g[0].engine_ns = 1000000000ULL;
        r.g[0].mem_bytes = 100;
        r.g[0].util_pct = UINT64_MAX;
        gpu_track_add(&t, &r, 1000000);
        is_u64(r.g[0].util_pct, UINT64_MAX, "DRM: no utilisation from one reading");
        r.g[0].engine_ns = 1500000000ULL;
        r.g[0].mem_bytes = 300;
        gpu_track_add(&t, &r, 2000000);
        is_u64(r.g[0].util_pct, 50, "DRM: 0.5 s busy in 1 s = 50 %%");
        r.n = 0;
        gpu_track_add(&t, &r, 3000000);
        is_u64(t.n, 1, "the GPU touched stays listed");
        is_u64(t.g[0].mem_peak, 300, "peak memory kept");
        is_u64(t.g[0].last.mem_bytes, 0, "memory now 0 once the job left the GPU");
        ok(t.available && strcmp(t.sources, "drm_fdinfo") == 0, "source named");

        ok(sample_limit_parse("gpu_memory=2G", &fig, &v, &exp) == 0 && fig == LEASH_FIG_GPU_MEMORY && v == 2ULL << 30,
           "--limit gpu_memory=2G");
        ok(sample_limit_parse("gpu_memory_max=512M", &fig, &v, &exp) == 0 && fig == LEASH_FIG_GPU_MEMORY_MAX,
           "--limit gpu_memory_max=512M (per GPU)");
        ok(sample_limit_parse("gpu_util=50", &fig, &v, &exp) < 0, "gpu_util is no limit");
        printf("1..%d\n", tap_n);
        return tap_failed ? 1 : 0;
}
