/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzz target for the INI/profile parser: the input is read as a profile
 * file and as leash.ini, then every profile is listed, resolved and every
 * value formatted, as `leash profiles show` would. Built with libFuzzer by
 * `make fuzz` (clang -fsanitize=fuzzer,address,undefined); the same entry
 * point replays the committed corpus in `make check` (fuzz-replay.c).
 */
#include <stddef.h>
#include <stdint.h>

#include "settings/options.h"
#include "settings/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct leash_profiles *p = NULL;
        char buf[512];

        if (leash_profiles_new(false, &p) < 0)
                return 0;
        (void) leash_profiles_load_buffer(p, "fuzz.ini", (const char *) data, size, LEASH_INI_PROFILES);
        (void) leash_profiles_load_buffer(p, "leash.ini", (const char *) data, size, LEASH_INI_SYSTEM);
        if (leash_profiles_finish(p) < 0 && leash_profiles_n_errors(p) == 0) {
                leash_profiles_free(p);
                return 0;
        }
        for (size_t i = 0; i < leash_profiles_n_errors(p); i++)
                (void) leash_profiles_error(p, i);
        for (size_t i = 0; i < leash_profiles_count(p); i++) {
                struct leash_settings s;
                const char *name, *file;
                unsigned line;

                if (leash_profiles_get(p, i, &name, &file, &line) < 0)
                        continue;
                (void) leash_profiles_parent(p, name);
                leash_settings_init(&s);
                /* resolving must stay safe even when errors (a cycle) were found */
                (void) leash_profiles_apply(p, name, &s, &file);
                for (size_t k = 0; k < _LEASH_OPT_MAX; k++)
                        leash_option_format(&s, &leash_options[k], buf, sizeof buf);
                leash_settings_done(&s);
        }
        leash_profiles_free(p);
        return 0;
}
