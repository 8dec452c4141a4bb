/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one key table against its two hand-written mirrors: every key a file
 * may hold must have a ".TP / .BI "key = "" entry in the KEYS section of
 * man/leash.ini.5 and no other entry may be there; every key leash.ini may
 * hold must appear, commented out, in conf/leash.ini. Fails on any drift.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "basic/fileio.h"
#include "settings/options.h"
#include "tap.h"

#define MAX_KEYS 128

static bool file_key(const struct leash_option *o) {
        return (o->flags & LEASH_OPT_CLI_ONLY) != LEASH_OPT_CLI_ONLY;
}

/* Keys of the KEYS section: the line after each .TP, '.BI "KEY = "'. */
static size_t man_keys(const char *text, char keys[][64]) {
        const char *s = strstr(text, "\n.SH KEYS\n"), *end;
        size_t n = 0;

        if (!s)
                return 0;
        end = strstr(s + 1, "\n.SH ");
        for (const char *tp = strstr(s, "\n.TP\n.BI \""); tp && (!end || tp < end) && n < MAX_KEYS;
             tp = strstr(tp + 1, "\n.TP\n.BI \"")) {
                const char *k = tp + strlen("\n.TP\n.BI \"");
                size_t l = strcspn(k, " =\"\n");
                snprintf(keys[n++], 64, "%.*s", (int) l, k);
        }
        return n;
}

/* conf/leash.ini shows "key = " commented out, at the start of a line. */
static bool conf_has(const char *text, const char *key) {
        char pat[80];
        for (const char *c = ";#"; *c; c++) {
                const char *p = text;
                snprintf(pat, sizeof pat, "\n%c%s = ", *c, key);
                if (strstr(p, pat))
                        return true;
        }
        return false;
}

int main(void) {
        const char *src = getenv("LEASH_SRCDIR");
        char path[4200], keys[MAX_KEYS][64];
        char *man = NULL, *conf = NULL;
        size_t n, len;

        snprintf(path, sizeof path, "%s/man/leash.ini.5", src ? src : ".");
        ok(read_file_at_alloc(AT_FDCWD, path, &man, &len) == 0, "read %s", path);
        snprintf(path, sizeof path, "%s/conf/leash.ini", src ? src : ".");
        ok(read_file_at_alloc(AT_FDCWD, path, &conf, &len) == 0, "read %s", path);
        if (!man || !conf)
                return tap_done();

        n = man_keys(man, keys);
        ok(n > 10, "the man page lists keys (%zu)", n);
        for (size_t i = 0; i < _LEASH_OPT_MAX; i++) {
                const struct leash_option *o = &leash_options[i];
                bool found = false;
                for (size_t k = 0; k < n; k++)
                        found = found || strcmp(keys[k], o->name) == 0;
                if (file_key(o))
                        ok(found, "leash.ini(5) documents key '%s'", o->name);
                else
                        ok(!found, "leash.ini(5) does not list the command-line-only '%s' as a key", o->name);
                if (!(o->flags & LEASH_OPT_NO_SYSTEM))
                        ok(conf_has(conf, o->name), "conf/leash.ini shows key '%s'", o->name);
        }
        for (size_t k = 0; k < n; k++) {
                const struct leash_option *o = leash_option_by_name(keys[k]);
                ok(o && file_key(o), "the man page's key '%s' is in the table", keys[k]);
                for (size_t j = 0; j < k; j++)
                        if (strcmp(keys[j], keys[k]) == 0)
                                ok(false, "the man page lists '%s' once", keys[k]);
        }
        /* and the order: the man page follows the table, so a reader finds
         * keys where --help has them */
        {
                size_t at = 0;
                bool ordered = true;
                for (size_t i = 0; i < _LEASH_OPT_MAX && at < n; i++)
                        if (file_key(&leash_options[i])) {
                                if (strcmp(keys[at], leash_options[i].name) != 0)
                                        ordered = false;
                                at++;
                        }
                ok(ordered, "the man page lists the keys in the table's order");
        }
        free(man);
        free(conf);
        return tap_done();
}
