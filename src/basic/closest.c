/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * "did you mean": the candidate closest to what was typed, by the optimal
 * string alignment distance (insertions, deletions, substitutions and
 * transpositions of neighbours: --memroy is one step from --memory), with
 * '_' and '-' taken as the same letter (wall_time is wall-time) and case
 * ignored. A candidate further than a third of the word's length (at least
 * 1, at most 3) is no suggestion at all: a wild guess misleads.
 */
#include "closest.h"

#include <string.h>

#define WORD_MAX 64

static char fold(char c) {
        if (c == '_')
                return '-';
        return (c >= 'A' && c <= 'Z') ? (char) (c - 'A' + 'a') : c;
}

static unsigned min3(unsigned a, unsigned b, unsigned c) {
        unsigned m = a < b ? a : b;
        return m < c ? m : c;
}

unsigned closest_distance(const char *a, const char *b) {
        unsigned d[WORD_MAX + 1][WORD_MAX + 1];
        size_t la = strlen(a), lb = strlen(b);

        if (la > WORD_MAX || lb > WORD_MAX)
                return WORD_MAX;
        for (size_t i = 0; i <= la; i++)
                d[i][0] = (unsigned) i;
        for (size_t j = 0; j <= lb; j++)
                d[0][j] = (unsigned) j;
        for (size_t i = 1; i <= la; i++)
                for (size_t j = 1; j <= lb; j++) {
                        unsigned cost = fold(a[i - 1]) != fold(b[j - 1]);
                        d[i][j] = min3(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
                        if (i > 1 && j > 1 && fold(a[i - 1]) == fold(b[j - 2]) && fold(a[i - 2]) == fold(b[j - 1]) &&
                            d[i - 2][j - 2] + 1 < d[i][j])
                                d[i][j] = d[i - 2][j - 2] + 1;
                }
        return d[la][lb];
}

const char *closest_word(const char *typed, const char *const *candidates, size_t n) {
        size_t len = typed ? strlen(typed) : 0;
        unsigned best = WORD_MAX, limit = (unsigned) (len / 3);
        const char *found = NULL;

        if (!len)
                return NULL;
        if (limit < 1)
                limit = 1;
        if (limit > 3)
                limit = 3;
        for (size_t i = 0; i < n; i++) {
                unsigned dist;
                if (!candidates[i])
                        continue;
                dist = closest_distance(typed, candidates[i]);
                if (dist < best) {
                        best = dist;
                        found = candidates[i];
                }
        }
        return best <= limit ? found : NULL;
}
