/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzz target for the DRM fdinfo parser (src/basic/drmfdinfo.c): a job's
 * driver writes what leash reads there. The input is parsed as one fdinfo
 * file; the figures must be self-consistent. Replayed in `make check`
 * (fuzz-replay.c, corpus tests/fuzz/corpus/drmfdinfo).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "basic/drmfdinfo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct drm_fdinfo f;
        char *text = malloc(size + 1);

        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';
        if (drm_fdinfo_parse(text, &f) == 0 && (!f.driver[0] || (!f.has_mem && f.mem_bytes != 0)))
                abort();
        free(text);
        return 0;
}
