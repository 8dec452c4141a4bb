/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

/* Edit distance with neighbour transpositions, '_' = '-', case ignored. */
unsigned closest_distance(const char *a, const char *b);
/* The candidate nearest typed (NULL entries skipped), or NULL when none is
 * near enough to suggest ("did you mean"). */
const char *closest_word(const char *typed, const char *const *candidates, size_t n);
