/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The profile module: the one place that includes inih.
 *
 * inih gives a key its section, name and value but, as Debian builds it, not
 * its line number, nor a call for a section header, and it reports only the
 * first syntax error of a file. So the file is fed to ini_parse_stream()
 * through our own line reader, which counts lines (a handler call belongs to
 * the line last read), sees every section header (to find duplicate and
 * badly named sections, empty ones included), and records syntax errors
 * itself so that all of them are listed. The reader also removes leading
 * blanks, which turns off inih's multi-line values: an indented line is read
 * as a line of its own, not silently glued to the value above it. Lines
 * longer than inih's buffer are refused whole instead of being split.
 *
 * Values are checked by the option table's own setter (leash_option_set) on a
 * scratch settings struct as soon as they are read, with the same messages as
 * on the command line.
 */
#include "profile.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../basic/closest.h"
#include "../basic/fileio.h"
#include "../basic/dirread.h"
#include "../basic/macro.h"
#include "../basic/trust.h"

#ifndef LEASH_SYSCONFDIR
#define LEASH_SYSCONFDIR "/etc"
#endif

#define PROFILE_FILE_MAX (1024 * 1024)
#define PROFILE_ERRORS_MAX 200
#define PROFILE_DEPTH_MAX 32

struct profile_file {
        char *path;
        dev_t dev;
        ino_t ino;
        bool has_inode;
};

struct profile_entry {
        const struct leash_option *opt;
        char *value;
        unsigned line;
        char *origin;           /* "FILE:LINE" */
        char *origin_inherited; /* "inherited from NAME (FILE:LINE)" */
};

struct profile_section {
        char *name;
        const struct profile_file *file;
        unsigned line;
        const char *inherit; /* the value of its inherit entry, or NULL */
        unsigned inherit_line;
        struct profile_entry *entries;
        size_t n_entries;
};

struct leash_profiles {
        bool trust;
        bool finished;
        struct profile_file **files;
        size_t n_files;
        struct profile_section *system; /* leash.ini's [leash], or NULL */
        struct profile_section **sections;
        size_t n_sections;
        struct profile_section **sorted; /* by name, after finish */
        /* the sections by name: an open-addressed table (power-of-two size,
         * at most half full), so that each lookup is O(1) and 10,000 sections
         * load in linear work (a linear search per section was quadratic:
         * 2.3 s for `profiles list` of 10,000, 9 s of 20,000) */
        struct profile_section **index;
        size_t index_size;
        size_t builtin_at; /* where the built-in default sorts in, after finish; SIZE_MAX: a [default] is defined */
        unsigned long long probes; /* table slots looked at: the work, for tests */
        char **errors;
        size_t n_errors;
        bool errors_truncated;
        bool oom;
};

/* --- errors ------------------------------------------------------------------ */

static void profile_error(struct leash_profiles *p, const char *file, unsigned line, const char *fmt, ...)
        _printf_(4, 5);

static void profile_error(struct leash_profiles *p, const char *file, unsigned line, const char *fmt, ...) {
        char msg[768], *s = NULL, **l;
        va_list ap;

        if (p->n_errors >= PROFILE_ERRORS_MAX) {
                p->errors_truncated = true;
                return;
        }
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        if ((line ? asprintf(&s, "%s:%u: %s", file, line, msg) : asprintf(&s, "%s: %s", file, msg)) < 0) {
                p->oom = true;
                return;
        }
        l = realloc(p->errors, (p->n_errors + 2) * sizeof *l);
        if (!l) {
                free(s);
                p->oom = true;
                return;
        }
        p->errors = l;
        l[p->n_errors++] = s;
        l[p->n_errors] = NULL;
}

size_t leash_profiles_n_errors(const struct leash_profiles *p) {
        return p->n_errors + (p->errors_truncated ? 1 : 0);
}

const char *leash_profiles_error(const struct leash_profiles *p, size_t i) {
        if (i < p->n_errors)
                return p->errors[i];
        if (i == p->n_errors && p->errors_truncated)
                return "too many errors: the rest were not listed";
        return NULL;
}

/* --- the object -------------------------------------------------------------- */

int leash_profiles_new(bool trust, struct leash_profiles **ret) {
        struct leash_profiles *p = calloc(1, sizeof *p);
        if (!p)
                return -ENOMEM;
        p->trust = trust;
        *ret = p;
        return 0;
}

static void section_free(struct profile_section *s) {
        if (!s)
                return;
        for (size_t i = 0; i < s->n_entries; i++) {
                free(s->entries[i].value);
                free(s->entries[i].origin);
                free(s->entries[i].origin_inherited);
        }
        free(s->entries);
        free(s->name);
        free(s);
}

void leash_profiles_free(struct leash_profiles *p) {
        if (!p)
                return;
        for (size_t i = 0; i < p->n_files; i++) {
                free(p->files[i]->path);
                free(p->files[i]);
        }
        for (size_t i = 0; i < p->n_sections; i++)
                section_free(p->sections[i]);
        section_free(p->system);
        for (size_t i = 0; i < p->n_errors; i++)
                free(p->errors[i]);
        free(p->errors);
        free(p->files);
        free(p->sections);
        free(p->sorted);
        free(p->index);
        free(p);
}

size_t leash_profiles_n_files(const struct leash_profiles *p) {
        return p->n_files;
}

const char *leash_profiles_file(const struct leash_profiles *p, size_t i) {
        return i < p->n_files ? p->files[i]->path : NULL;
}

static size_t name_hash(const char *s) {
        uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
        for (; *s; s++)
                h = (h ^ (unsigned char) *s) * 0x100000001b3ULL;
        return (size_t) h;
}

/* The slot of name: its section, or the empty slot where it would go. */
static struct profile_section **index_slot(const struct leash_profiles *p, const char *name) {
        size_t mask = p->index_size - 1;
        for (size_t i = name_hash(name) & mask;; i = (i + 1) & mask) {
                ((struct leash_profiles *) p)->probes++;
                if (!p->index[i] || strcmp(p->index[i]->name, name) == 0)
                        return &p->index[i];
        }
}

static int index_add(struct leash_profiles *p, struct profile_section *sec) {
        if (2 * (p->n_sections + 1) > p->index_size) {
                struct profile_section **old = p->index;
                size_t old_size = p->index_size, size = old_size ? 2 * old_size : 64;
                p->index = calloc(size, sizeof *p->index);
                if (!p->index) {
                        p->index = old;
                        return -ENOMEM;
                }
                p->index_size = size;
                for (size_t i = 0; i < old_size; i++)
                        if (old[i])
                                *index_slot(p, old[i]->name) = old[i];
                free(old);
        }
        *index_slot(p, sec->name) = sec;
        return 0;
}

static struct profile_section *profile_find(const struct leash_profiles *p, const char *name) {
        return p->index_size ? *index_slot(p, name) : NULL;
}

unsigned long long leash_profiles_probes(const struct leash_profiles *p) {
        return p->probes;
}

static struct profile_file *profile_add_file(struct leash_profiles *p, const char *path) {
        struct profile_file *f, **l;

        l = realloc(p->files, (p->n_files + 1) * sizeof *l);
        if (!l)
                return NULL;
        p->files = l;
        f = calloc(1, sizeof *f);
        if (!f)
                return NULL;
        f->path = strdup(path);
        if (!f->path) {
                free(f);
                return NULL;
        }
        l[p->n_files++] = f;
        return f;
}

/* --- parsing one file ---------------------------------------------------------- */

struct profile_loader {
        struct leash_profiles *p;
        const struct profile_file *file;
        enum leash_ini_kind kind;
        const char *buf;
        size_t size, pos;
        unsigned line;
        struct profile_section *cur; /* NULL before the first header */
        bool skip;                   /* under a bad header: its keys are not looked at */
        size_t first_error;
        struct leash_settings scratch;
        /* LEASH_INI_OTHER: another file of leash's, keys judged by the caller */
        leash_ini_handler other;
        void *other_data;
        struct profile_section other_sec;
};

#define LERR(ld, ...) profile_error((ld)->p, (ld)->file->path, (ld)->line, __VA_ARGS__)

static bool line_has_error(const struct profile_loader *ld, unsigned line) {
        char tail[32];
        size_t n = strlen(ld->file->path);

        snprintf(tail, sizeof tail, ":%u: ", line);
        for (size_t i = ld->first_error; i < ld->p->n_errors; i++) {
                const char *e = ld->p->errors[i];
                if (strncmp(e, ld->file->path, n) == 0 && strncmp(e + n, tail, strlen(tail)) == 0)
                        return true;
        }
        return false;
}

/* A new profile section into the list and the index; false (p->oom set,
 * sec freed) for lack of memory. */
static bool section_add(struct leash_profiles *p, struct profile_section *sec) {
        struct profile_section **l = realloc(p->sections, (p->n_sections + 1) * sizeof *l);
        if (l)
                p->sections = l;
        if (!l || index_add(p, sec) < 0) {
                section_free(sec);
                p->oom = true;
                return false;
        }
        l[p->n_sections++] = sec;
        return true;
}

static void profile_header(struct profile_loader *ld, char *s, size_t len) {
        struct profile_section *sec, *old;
        char *close = memchr(s + 1, ']', len - 1), *rest;

        ld->cur = NULL;
        ld->skip = true;
        if (!close) {
                LERR(ld, "a section header without ']': '%s'", s);
                return;
        }
        *close = '\0';
        for (rest = close + 1; *rest && isspace((unsigned char) *rest); rest++)
                ;
        if (*rest && *rest != ';' && *rest != '#') {
                LERR(ld, "unexpected text after [%s]: '%s'", s + 1, rest);
                return;
        }
        if (ld->kind == LEASH_INI_OTHER) {
                char why[512] = "";
                if (ld->other(ld->other_data, s + 1, NULL, NULL, why, sizeof why) < 0) {
                        LERR(ld, "%s", why[0] ? why : "unknown section");
                        return;
                }
                free(ld->other_sec.name);
                if (!(ld->other_sec.name = strdup(s + 1))) {
                        ld->p->oom = true;
                        return;
                }
                ld->other_sec.line = ld->line;
                ld->cur = &ld->other_sec;
                ld->skip = false;
                return;
        }
        if (ld->kind == LEASH_INI_SYSTEM) {
                if (strcmp(s + 1, "leash") != 0) {
                        LERR(ld, "unknown section [%s]: leash.ini has only a [leash] section", s + 1);
                        return;
                }
                if (ld->p->system) {
                        LERR(ld, "duplicate section [leash]: already at %s:%u", ld->p->system->file->path,
                             ld->p->system->line);
                        return;
                }
        } else {
                if (!leash_profile_name_is_valid(s + 1)) {
                        LERR(ld,
                             "bad profile name [%s]: expected 1 to 48 of A-Z a-z 0-9 _ . -, not starting with a dot",
                             s + 1);
                        return;
                }
                old = profile_find(ld->p, s + 1);
                if (old) {
                        LERR(ld, "duplicate profile [%s]: already defined at %s:%u", s + 1, old->file->path, old->line);
                        return;
                }
        }

        sec = calloc(1, sizeof *sec);
        if (!sec || !(sec->name = strdup(s + 1))) {
                free(sec);
                ld->p->oom = true;
                return;
        }
        sec->file = ld->file;
        sec->line = ld->line;
        if (ld->kind == LEASH_INI_SYSTEM)
                ld->p->system = sec;
        else if (!section_add(ld->p, sec))
                return;
        ld->cur = sec;
        ld->skip = false;
}

/* Mirrors inih's split: '=' or ':' before an inline comment (" ;"). */
static bool has_delimiter(const char *s) {
        bool was_space = false;
        for (; *s; s++) {
                if (*s == '=' || *s == ':')
                        return true;
                if (was_space && *s == ';')
                        return false;
                was_space = isspace((unsigned char) *s);
        }
        return false;
}

static char *profile_reader(char *str, int num, void *stream) {
        struct profile_loader *ld = stream;
        const char *b, *nl;
        size_t len;

        if (ld->pos >= ld->size || num < 4)
                return NULL;
        b = ld->buf + ld->pos;
        nl = memchr(b, '\n', ld->size - ld->pos);
        len = nl ? (size_t) (nl - b) : ld->size - ld->pos;
        ld->pos += len + (nl ? 1 : 0);
        ld->line++;

        if (len && b[len - 1] == '\r')
                len--;
        if (ld->line == 1 && len >= 3 && memcmp(b, "\xEF\xBB\xBF", 3) == 0)
                b += 3, len -= 3;
        while (len && isspace((unsigned char) *b))
                b++, len--;
        while (len && isspace((unsigned char) b[len - 1]))
                len--;
        if (memchr(b, '\0', len)) {
                LERR(ld, "a NUL byte in the line");
                goto blank;
        }
        /* inih needs room for "\r\n\0" beyond the text; a long comment is
         * no harm, a long anything else would be cut by inih */
        if (len + 3 > (size_t) num && (*b == ';' || *b == '#'))
                len = 1;
        else if (len + 3 > (size_t) num) {
                LERR(ld, "line longer than %d characters", num - 3);
                goto blank;
        }
        memcpy(str, b, len);
        str[len] = '\0';

        if (len == 0 || str[0] == ';' || str[0] == '#')
                ; /* blank or comment */
        else if (str[0] == '[') {
                profile_header(ld, str, len);
                memcpy(str, b, len); /* the header parse wrote into it */
                str[len] = '\0';
        } else if (!has_delimiter(str))
                LERR(ld, "expected 'key = value', a [section] or a comment: '%s'", str);
        str[len] = '\n';
        str[len + 1] = '\0';
        return str;
blank:
        str[0] = '\n';
        str[1] = '\0';
        return str;
}

/* The option a profile key names, allowed in this kind of file and not set
 * already in its section; NULL when not, with the error logged. */
static const struct leash_option *key_option(struct profile_loader *ld, const struct profile_section *sec,
                                             const char *name, const char *value) {
        const struct leash_option *o = leash_option_by_name(name);

        if (!o) {
                const char *keys[_LEASH_OPT_MAX], *near;
                size_t n = 0;
                for (size_t i = 0; i < _LEASH_OPT_MAX; i++)
                        if (!(leash_options[i].flags & LEASH_OPT_CLI_ONLY))
                                keys[n++] = leash_options[i].name;
                near = closest_word(name, keys, n);
                if (near)
                        LERR(ld, "unknown key '%s' (value '%s'); did you mean '%s'?", name, value, near);
                else
                        LERR(ld, "unknown key '%s' (value '%s')", name, value);
                return NULL;
        }
        if (ld->kind == LEASH_INI_SYSTEM && (o->flags & LEASH_OPT_NO_SYSTEM)) {
                LERR(ld, "key '%s' (value '%s') is not allowed in leash.ini: %s", name, value,
                     o->flags & LEASH_OPT_NO_PROFILE ? "it is a command-line option only" : "it belongs in a profile");
                return NULL;
        }
        if (ld->kind == LEASH_INI_PROFILES && (o->flags & LEASH_OPT_NO_PROFILE)) {
                LERR(ld, "key '%s' (value '%s') is not allowed in a profile: it is a command-line option only", name,
                     value);
                return NULL;
        }
        for (size_t i = 0; o->type != LEASH_OPT_LIST && i < sec->n_entries; i++)
                if (sec->entries[i].opt == o) {
                        LERR(ld, "duplicate key '%s' (value '%s'): already set at line %u", name, value,
                             sec->entries[i].line);
                        return NULL;
                }
        return o;
}

/* The checked value kept as the section's next entry (where it was set, for
 * `leash profiles show`); an allocation failure marks the profiles. */
static void add_entry(struct profile_loader *ld, struct profile_section *sec, const struct leash_option *o,
                      const char *value) {
        struct profile_entry *e = realloc(sec->entries, (sec->n_entries + 1) * sizeof *e);

        if (!e) {
                ld->p->oom = true;
                return;
        }
        sec->entries = e;
        e = &e[sec->n_entries];
        *e = (struct profile_entry){.opt = o, .line = ld->line};
        if (!(e->value = strdup(value)) || asprintf(&e->origin, "%s:%u", ld->file->path, ld->line) < 0 ||
            asprintf(&e->origin_inherited, "inherited from %s (%s:%u)", sec->name, ld->file->path, ld->line) < 0) {
                free(e->value);
                free(e->origin);
                ld->p->oom = true;
                return;
        }
        sec->n_entries++;
        if (o->id == LEASH_OPT_INHERIT) {
                sec->inherit = e->value;
                sec->inherit_line = e->line;
        }
}

static int profile_handler(void *user, const char *section, const char *name, const char *value) {
        struct profile_loader *ld = user;
        const struct leash_option *o;
        struct profile_section *sec = ld->cur;
        struct leash_error err = {0};
        int r;

        if (ld->skip)
                return 1;
        if (!sec) {
                LERR(ld, "key '%s' (value '%s') is outside a section: expected it under %s", name, value,
                     ld->kind == LEASH_INI_SYSTEM  ? "[leash]"
                     : ld->kind == LEASH_INI_OTHER ? "a [section] header"
                                                   : "a [PROFILE] header");
                return 1;
        }
        if (strcmp(section, sec->name) != 0) { /* cannot happen: the reader saw every header */
                LERR(ld, "key '%s' in section [%s], expected [%s]", name, section, sec->name);
                return 1;
        }
        if (ld->kind == LEASH_INI_OTHER) {
                char why[512] = "";
                if (ld->other(ld->other_data, sec->name, name, value, why, sizeof why) < 0)
                        LERR(ld, "%s", why[0] ? why : "bad value");
                return 1;
        }
        o = key_option(ld, sec, name, value);
        if (!o)
                return 1;
        r = leash_option_set(&ld->scratch, o, value, NULL, &err);
        if (r == -ENOMEM)
                ld->p->oom = true;
        else if (r < 0)
                LERR(ld, "%s: %s", name, err.detail[0] ? err.detail : strerror(-r));
        else
                add_entry(ld, sec, o, value);
        return 1;
}

static int profile_parse(struct leash_profiles *p, const struct profile_file *f, const char *data, size_t size,
                         enum leash_ini_kind kind, leash_ini_handler other, void *other_data) {
        struct profile_loader ld = {
                .p = p,
                .file = f,
                .kind = kind,
                .buf = data,
                .size = size,
                .first_error = p->n_errors,
                .other = other,
                .other_data = other_data,
        };
        int r;

        p->finished = false;
        leash_settings_init(&ld.scratch);
        r = ini_parse_stream(profile_reader, &ld, profile_handler, &ld);
        leash_settings_done(&ld.scratch);
        free(ld.other_sec.name);
        if (r == -2)
                p->oom = true;
        else if (r > 0 && !line_has_error(&ld, (unsigned) r)) {
                ld.line = (unsigned) r;
                LERR(&ld, "syntax error");
        }
        if (p->oom)
                return -ENOMEM;
        return p->n_errors > ld.first_error || p->errors_truncated ? -EINVAL : 0;
}

int leash_profiles_load_buffer(struct leash_profiles *p, const char *name, const char *data, size_t size,
                               enum leash_ini_kind kind) {
        const struct profile_file *f = profile_add_file(p, name);
        if (!f)
                return -ENOMEM;
        return profile_parse(p, f, data, size, kind, NULL, NULL);
}

#define TRUST_HINT "as root, leash takes settings only from files that only root can change"

static int profile_load_file(struct leash_profiles *p, const char *path, enum leash_ini_kind kind,
                             leash_ini_handler other, void *other_data) {
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *data = NULL;
        struct profile_file *f;
        struct stat st;
        char why[4200];
        size_t len;
        int r;

        fd = trust_open(path, false, p->trust, why, sizeof why);
        if (fd == -EPERM) {
                profile_error(p, path, 0, "refused: %s; %s", why, TRUST_HINT);
                return p->oom ? -ENOMEM : -EINVAL;
        }
        if (fd < 0) {
                if (why[0])
                        profile_error(p, path, 0, "cannot read: %s", why);
                else
                        profile_error(p, path, 0, "cannot read: %s", strerror(-fd));
                return p->oom ? -ENOMEM : -EINVAL;
        }
        if (fstat(fd, &st) < 0)
                return negative_errno();
        for (size_t i = 0; i < p->n_files; i++)
                if (p->files[i]->has_inode && p->files[i]->dev == st.st_dev && p->files[i]->ino == st.st_ino)
                        return 0; /* the same file by another path: read once */
        r = read_fd_alloc(fd, PROFILE_FILE_MAX, &data, &len);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                profile_error(p, path, 0, "cannot read: %s", r == -EFBIG ? "larger than 1 MiB" : strerror(-r));
                return p->oom ? -ENOMEM : -EINVAL;
        }
        f = profile_add_file(p, path);
        if (!f)
                return -ENOMEM;
        f->dev = st.st_dev;
        f->ino = st.st_ino;
        f->has_inode = true;
        return profile_parse(p, f, data, len, kind, other, other_data);
}

int leash_profiles_load_file(struct leash_profiles *p, const char *path, enum leash_ini_kind kind) {
        return profile_load_file(p, path, kind, NULL, NULL);
}

int leash_ini_load_other(struct leash_profiles *p, const char *path, leash_ini_handler handler, void *userdata) {
        return profile_load_file(p, path, LEASH_INI_OTHER, handler, userdata);
}

int leash_ini_load_other_buffer(struct leash_profiles *p, const char *name, const char *data, size_t size,
                                leash_ini_handler handler, void *userdata) {
        const struct profile_file *f = profile_add_file(p, name);
        if (!f)
                return -ENOMEM;
        return profile_parse(p, f, data, size, LEASH_INI_OTHER, handler, userdata);
}

static int compare_strings(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* A directory of *.ini files, read in name order. Absent: nothing to do. */
static int profile_load_dir(struct leash_profiles *p, const char *dir) {
        _cleanup_close_ int fd = -1;
        char why[4200], **names = NULL;
        const char *name;
        size_t n = 0;
        struct dirread d;
        int r = 0;

        fd = trust_open(dir, true, p->trust, why, sizeof why);
        if (fd == -ENOENT)
                return 0;
        if (fd == -EPERM) {
                profile_error(p, dir, 0, "refused: %s; %s", why, TRUST_HINT);
                return p->oom ? -ENOMEM : -EINVAL;
        }
        if (fd < 0) {
                profile_error(p, dir, 0, "cannot read: %s", why[0] ? why : strerror(-fd));
                return p->oom ? -ENOMEM : -EINVAL;
        }
        dirread_init(&d, fd); /* no DIR: a job reads this per call, and a DIR is 32 KiB of fresh heap */
        while ((name = dirread_next(&d, NULL))) {
                size_t l = strlen(name);
                char **nl;
                if (name[0] == '.' || l < 5 || strcmp(name + l - 4, ".ini") != 0)
                        continue;
                nl = realloc(names, (n + 1) * sizeof *nl);
                if (!nl || !(nl[n] = strdup(name))) {
                        if (nl)
                                names = nl;
                        r = -ENOMEM;
                        break;
                }
                names = nl;
                n++;
        }
        if (!r && errno)
                r = negative_errno();
        if (!r && n > 1) /* none: names is NULL, which qsort must not get */
                qsort(names, n, sizeof *names, compare_strings);
        for (size_t i = 0; i < n; i++) {
                if (!r || r == -EINVAL) {
                        _cleanup_free_ char *path = NULL;
                        int k;
                        if (asprintf(&path, "%s/%s", dir, names[i]) < 0) {
                                r = -ENOMEM;
                        } else {
                                k = leash_profiles_load_file(p, path, LEASH_INI_PROFILES);
                                if (k < 0 && r == 0)
                                        r = k;
                                if (k == -ENOMEM)
                                        r = k;
                        }
                }
                free(names[i]);
        }
        free(names);
        if (r < 0 && r != -EINVAL && r != -ENOMEM)
                profile_error(p, dir, 0, "cannot read: %s", strerror(-r));
        return p->oom ? -ENOMEM : r;
}

/* config_dir's leash.ini and profiles.d, then user_dir ("": none). A job
 * reads them on every start: the paths are on the heap, the frame small (a
 * frame of pages costs a forked caller a fault per page per call,
 * bench/NOTES.md, row 10). */
int leash_profiles_load_dirs(struct leash_profiles *p, const char *config_dir, const char *user_dir) {
        char why[1024];
        int r = 0, k;

        if (config_dir[0]) {
                _cleanup_close_ int fd = trust_open(config_dir, true, p->trust, why, sizeof why);
                if (fd == -EPERM) {
                        profile_error(p, config_dir, 0, "refused: %s; %s", why, TRUST_HINT);
                        r = -EINVAL;
                } else if (fd >= 0) {
                        _cleanup_free_ char *ini = NULL, *dir = NULL;
                        if (asprintf(&ini, "%s/leash.ini", config_dir) < 0 ||
                            asprintf(&dir, "%s/profiles.d", config_dir) < 0) {
                                ini = dir = NULL;
                                return -ENOMEM;
                        }
                        if (access(ini, F_OK) == 0 || errno != ENOENT)
                                r = leash_profiles_load_file(p, ini, LEASH_INI_SYSTEM);
                        k = profile_load_dir(p, dir);
                        if (k < 0 && (r == 0 || k == -ENOMEM))
                                r = k;
                } else if (fd != -ENOENT) {
                        profile_error(p, config_dir, 0, "cannot read: %s", why[0] ? why : strerror(-fd));
                        r = -EINVAL;
                }
        }
        /* A $HOME this user cannot even enter is not this user's (setpriv, su
         * without -l keep root's HOME): its profiles are not theirs to read. */
        if (r != -ENOMEM && user_dir[0] && !(access(user_dir, X_OK) < 0 && errno == EACCES)) {
                k = profile_load_dir(p, user_dir);
                if (k < 0 && (r == 0 || k == -ENOMEM))
                        r = k;
        }
        return p->oom ? -ENOMEM : r;
}

int leash_profiles_load_paths(struct leash_profiles *p, const struct leash_profile_paths *paths) {
        return leash_profiles_load_dirs(p, paths->config_dir, paths->user_dir);
}

void leash_profiles_unknown(const struct leash_profiles *p, const char *name, const char *config_dir,
                            const char *user_dir, char *buf, size_t size) {
        const char *names[64], *near;
        size_t n = 0, len;

        len = (size_t) snprintf(buf, size, "'%s': unknown profile: expected one of ", name);
        for (size_t i = 0; i < leash_profiles_count(p) && n < ELEMENTSOF(names); i++) {
                const char *f;
                unsigned l;
                if (leash_profiles_get(p, i, &names[n], &f, &l) == 0)
                        n++;
        }
        for (size_t i = 0; i < n && len < size; i++)
                len += (size_t) snprintf(buf + len, size - len, "%s%s", i ? ", " : "", names[i]);
        near = closest_word(name, names, n);
        for (size_t i = 0; !near && i < n; i++) /* hpo: hpo-trial */
                if (strncmp(names[i], name, strlen(name)) == 0)
                        near = names[i];
        if (near && len < size)
                len += (size_t) snprintf(buf + len, size - len, " (did you mean '%s'?)", near);
        if (len < size)
                len += (size_t) snprintf(buf + len, size - len, "; searched %s/profiles.d%s%s%s", config_dir,
                                         user_dir && user_dir[0] ? " and " : "", user_dir ? user_dir : "",
                                         "; the examples in leash's source: LEASH_CONFIG_DIR=SRCDIR/conf");
        (void) len;
}

int leash_profile_paths_default(struct leash_profile_paths *ret, const char **ret_bad) {
        const char *env = secure_getenv("LEASH_CONFIG_DIR");
        int r = 0;

        memset(ret, 0, sizeof *ret);
        ret->trust = geteuid() == 0;
        if (env && env[0] == '/')
                snprintf(ret->config_dir, sizeof ret->config_dir, "%s", env);
        else
                snprintf(ret->config_dir, sizeof ret->config_dir, "%s/leash", LEASH_SYSCONFDIR);
        if (env && env[0] != '/') {
                r = -EINVAL;
                if (ret_bad)
                        *ret_bad = env;
        }
        if (!ret->trust) { /* geteuid() != 0, asked once */
                const char *xdg = secure_getenv("XDG_CONFIG_HOME"), *home = secure_getenv("HOME");
                if (xdg && xdg[0] == '/')
                        snprintf(ret->user_dir, sizeof ret->user_dir, "%s/leash/profiles.d", xdg);
                else if (home && home[0] == '/')
                        snprintf(ret->user_dir, sizeof ret->user_dir, "%s/.config/leash/profiles.d", home);
        }
        return r;
}

/* --- after loading ------------------------------------------------------------- */

static int compare_sections(const void *a, const void *b) {
        return strcmp((*(struct profile_section *const *) a)->name, (*(struct profile_section *const *) b)->name);
}

int leash_profiles_finish(struct leash_profiles *p) {
        size_t before = p->n_errors;

        for (size_t i = 0; i < p->n_sections; i++) {
                struct profile_section *s = p->sections[i], *cur = s;
                char chain[512];
                int len;
                size_t depth;

                if (!s->inherit)
                        continue;
                if (!profile_find(p, s->inherit) && strcmp(s->inherit, LEASH_PROFILE_DEFAULT) != 0) {
                        profile_error(p, s->file->path, s->inherit_line, "inherit: unknown profile '%s'", s->inherit);
                        continue;
                }
                /* walk up; a cycle through s is reported at s, one that s only
                 * leads into is reported by its own members */
                len = snprintf(chain, sizeof chain, "%s", s->name);
                depth = 0;
                for (size_t step = 0; step <= p->n_sections && cur && cur->inherit; step++) {
                        if ((size_t) len < sizeof chain)
                                len += snprintf(chain + len, sizeof chain - (size_t) len, " -> %s", cur->inherit);
                        cur = profile_find(p, cur->inherit);
                        depth++;
                        if (cur == s) {
                                profile_error(p, s->file->path, s->inherit_line, "inherit: a cycle: %s", chain);
                                break;
                        }
                }
                if (cur != s && !(cur && cur->inherit) && depth > PROFILE_DEPTH_MAX)
                        profile_error(p, s->file->path, s->inherit_line,
                                      "inherit: more than %d levels of inheritance: %s", PROFILE_DEPTH_MAX, chain);
        }
        free(p->sorted);
        p->sorted = malloc((p->n_sections + 1) * sizeof *p->sorted);
        if (!p->sorted)
                return -ENOMEM;
        if (p->n_sections)
                memcpy(p->sorted, p->sections, p->n_sections * sizeof *p->sorted);
        qsort(p->sorted, p->n_sections, sizeof *p->sorted, compare_sections);
        p->builtin_at = SIZE_MAX;
        if (!profile_find(p, LEASH_PROFILE_DEFAULT)) {
                size_t lo = 0, hi = p->n_sections; /* the first name after "default" */
                while (lo < hi) {
                        size_t mid = lo + (hi - lo) / 2;
                        if (strcmp(p->sorted[mid]->name, LEASH_PROFILE_DEFAULT) < 0)
                                lo = mid + 1;
                        else
                                hi = mid;
                }
                p->builtin_at = lo;
        }
        p->finished = true;
        if (p->oom)
                return -ENOMEM;
        return p->n_errors > before || p->errors_truncated ? -EINVAL : 0;
}

const char *leash_profiles_system_file(const struct leash_profiles *p) {
        return p->system ? p->system->file->path : NULL;
}

size_t leash_profiles_count(const struct leash_profiles *p) {
        return p->n_sections + (profile_find(p, LEASH_PROFILE_DEFAULT) ? 0 : 1);
}

/* O(1): the i-th name of the sorted sections with the built-in default
 * merged in where it sorts (a walk per call made a list quadratic) */
int leash_profiles_get(const struct leash_profiles *p, size_t i, const char **ret_name, const char **ret_file,
                       unsigned *ret_line) {
        if (!p->finished)
                return -EINVAL;
        if (i == p->builtin_at) {
                *ret_name = LEASH_PROFILE_DEFAULT;
                *ret_file = NULL;
                *ret_line = 0;
                return 0;
        }
        if (p->builtin_at != SIZE_MAX && i > p->builtin_at)
                i--;
        if (i >= p->n_sections)
                return -ENOENT;
        *ret_name = p->sorted[i]->name;
        *ret_file = p->sorted[i]->file->path;
        *ret_line = p->sorted[i]->line;
        return 0;
}

bool leash_profiles_exists(const struct leash_profiles *p, const char *name) {
        return profile_find(p, name) || strcmp(name, LEASH_PROFILE_DEFAULT) == 0;
}

const char *leash_profiles_parent(const struct leash_profiles *p, const char *name) {
        const struct profile_section *s = profile_find(p, name);
        return s ? s->inherit : NULL;
}

static int apply_section(const struct profile_section *sec, bool inherited, struct leash_settings *s) {
        for (size_t i = 0; i < sec->n_entries; i++) {
                const struct profile_entry *e = &sec->entries[i];
                struct leash_error err = {0};
                int r;

                if (e->opt->id == LEASH_OPT_INHERIT)
                        continue;
                r = leash_option_set(s, e->opt, e->value, inherited ? e->origin_inherited : e->origin, &err);
                if (r < 0)
                        return r;
        }
        return 0;
}

int leash_profiles_apply(const struct leash_profiles *p, const char *name, struct leash_settings *s,
                         const char **ret_file) {
        const struct profile_section *chain[64], *sec = profile_find(p, name);
        size_t n = 0;
        int r;

        if (!sec && strcmp(name, LEASH_PROFILE_DEFAULT) != 0)
                return -ENOENT;
        if (p->system) {
                r = apply_section(p->system, false, s);
                if (r < 0)
                        return r;
        }
        for (const struct profile_section *c = sec; c; c = c->inherit ? profile_find(p, c->inherit) : NULL) {
                if (n == ELEMENTSOF(chain))
                        return -ELOOP;
                chain[n++] = c;
        }
        while (n-- > 0) {
                r = apply_section(chain[n], chain[n] != sec, s);
                if (r < 0)
                        return r;
        }
        if (ret_file)
                *ret_file = sec ? sec->file->path : NULL;
        return 0;
}
