/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Replays a fuzz corpus through LLVMFuzzerTestOneInput without libFuzzer, so
 * that every build's `make check` runs every input that ever found a bug or
 * new coverage. TAP: one test per file. Arguments: files or directories;
 * default $LEASH_SRCDIR/tests/fuzz/corpus/FUZZ_CORPUS ("profile" unless the
 * target's build says otherwise).
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "basic/fileio.h"

#ifndef FUZZ_CORPUS
#define FUZZ_CORPUS "profile"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int n;

static int compare_names(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

static void replay_file(const char *path) {
        char *data = NULL;
        size_t len = 0;

        if (read_file_at_alloc(AT_FDCWD, path, &data, &len) < 0) {
                printf("not ok %d - read %s\n", ++n, path);
                return;
        }
        LLVMFuzzerTestOneInput((const uint8_t *) data, len);
        free(data);
        printf("ok %d - %s\n", ++n, path);
        fflush(stdout);
}

static void replay(const char *path) {
        struct stat st;
        DIR *d;
        struct dirent *de;
        char **names = NULL;
        size_t k = 0;

        if (stat(path, &st) < 0) {
                printf("not ok %d - %s does not exist\n", ++n, path);
                return;
        }
        if (!S_ISDIR(st.st_mode)) {
                replay_file(path);
                return;
        }
        d = opendir(path);
        if (!d) {
                printf("not ok %d - open %s\n", ++n, path);
                return;
        }
        while ((de = readdir(d)))
                if (de->d_name[0] != '.') {
                        names = realloc(names, (k + 1) * sizeof *names);
                        if (asprintf(&names[k], "%s/%s", path, de->d_name) >= 0)
                                k++;
                }
        closedir(d);
        qsort(names, k, sizeof *names, compare_names);
        for (size_t i = 0; i < k; i++) {
                replay_file(names[i]);
                free(names[i]);
        }
        free(names);
}

int main(int argc, char **argv) {
        char def[4200];
        const char *src = getenv("LEASH_SRCDIR");

        if (argc > 1)
                for (int i = 1; i < argc; i++)
                        replay(argv[i]);
        else {
                snprintf(def, sizeof def, "%s/tests/fuzz/corpus/" FUZZ_CORPUS, src ? src : ".");
                replay(def);
        }
        if (n < 10) {
                int inputs = n;
                printf("not ok %d - the corpus has at least 10 inputs (%d)\n", ++n, inputs);
        }
        printf("1..%d\n", n);
        return 0;
}
