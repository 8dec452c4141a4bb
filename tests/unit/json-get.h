/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests that read a report back: a value by dotted path, or NULL. */
#pragma once

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

static inline json_object *get(json_object *o, const char *path) {
        char buf[256], *save = NULL;
        snprintf(buf, sizeof buf, "%s", path);
        for (char *k = strtok_r(buf, ".", &save); k && o; k = strtok_r(NULL, ".", &save))
                if (!json_object_object_get_ex(o, k, &o))
                        return NULL;
        return o;
}
