/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "drmfdinfo.h"

#include <errno.h>
#include <string.h>

#include "parse.h"

/* "  1234 KiB" -> bytes; "  1234 ns" -> 1234 */
static int value(const char *p, size_t len, const char *unit_ns, uint64_t *ret) {
        char buf[48];
        char *sp;
        uint64_t v, mul = 1;

        while (len && (*p == ' ' || *p == '\t'))
                p++, len--;
        if (len == 0 || len >= sizeof buf)
                return -EINVAL;
        memcpy(buf, p, len);
        buf[len] = '\0';
        sp = strchr(buf, ' ');
        if (sp) {
                *sp++ = '\0';
                if (unit_ns ? strcmp(sp, unit_ns) != 0 : false)
                        return -EINVAL;
                if (!unit_ns) {
                        if (strcmp(sp, "KiB") == 0)
                                mul = 1024;
                        else if (strcmp(sp, "MiB") == 0)
                                mul = 1024 * 1024;
                        else if (strcmp(sp, "GiB") == 0)
                                mul = 1024ULL * 1024 * 1024;
                        else
                                return -EINVAL;
                }
        }
        if (parse_u64(buf, &v) < 0 || __builtin_mul_overflow(v, mul, ret))
                return -EINVAL;
        return 0;
}

static void copy_text(char *dst, size_t size, const char *p, size_t len) {
        while (len && (*p == ' ' || *p == '\t'))
                p++, len--;
        if (len >= size)
                len = size - 1;
        memcpy(dst, p, len);
        dst[len] = '\0';
}

static bool local_region(const char *name, size_t len) {
        return (len >= 4 && strncmp(name, "vram", 4) == 0) || (len >= 5 && strncmp(name, "local", 5) == 0);
}

/* the three memory key families, best first */
static const char *const mem_prefix[] = {"drm-resident-", "drm-memory-", "drm-total-"};

static int line(const char *k, size_t klen, const char *v, size_t vlen, struct drm_fdinfo *f, uint64_t mem[3],
                bool got[3]) {
        uint64_t x;

        if (klen == 10 && strncmp(k, "drm-driver", 10) == 0)
                copy_text(f->driver, sizeof f->driver, v, vlen);
        else if (klen == 8 && strncmp(k, "drm-pdev", 8) == 0)
                copy_text(f->pdev, sizeof f->pdev, v, vlen);
        else if (klen == 13 && strncmp(k, "drm-client-id", 13) == 0) {
                if (value(v, vlen, "", &f->client_id) < 0)
                        return -EINVAL;
        } else if (klen > 11 && strncmp(k, "drm-engine-", 11) == 0 && strncmp(k, "drm-engine-capacity-", 20) != 0) {
                if (value(v, vlen, "ns", &x) < 0 || __builtin_add_overflow(f->engine_ns, x, &f->engine_ns))
                        return -EINVAL;
        } else
                for (int i = 0; i < 3; i++) {
                        size_t pl = strlen(mem_prefix[i]);
                        if (klen > pl && strncmp(k, mem_prefix[i], pl) == 0 && local_region(k + pl, klen - pl)) {
                                if (value(v, vlen, NULL, &x) < 0 || __builtin_add_overflow(mem[i], x, &mem[i]))
                                        return -EINVAL;
                                got[i] = true;
                        }
                }
        return 0;
}

int drm_fdinfo_parse(const char *text, struct drm_fdinfo *ret) {
        struct drm_fdinfo f = {0};
        uint64_t mem[3] = {0};
        bool got[3] = {false};

        for (const char *p = text; *p;) {
                const char *eol = strchr(p, '\n'), *colon;
                size_t len = eol ? (size_t) (eol - p) : strlen(p);
                colon = memchr(p, ':', len);
                if (colon && strncmp(p, "drm-", 4) == 0 &&
                    line(p, (size_t) (colon - p), colon + 1, len - (size_t) (colon - p) - 1, &f, mem, got) < 0)
                        return -EINVAL;
                p += len + (eol ? 1 : 0);
        }
        if (!f.driver[0])
                return -ENOENT;
        for (int i = 0; i < 3; i++)
                if (got[i]) {
                        f.mem_bytes = mem[i];
                        f.has_mem = true;
                        break;
                }
        *ret = f;
        return 0;
}
