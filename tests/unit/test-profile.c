/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The profile module on fixture files. Each file under fixtures/profiles/
 * carries its own expectations in comments: an invalid file lists every
 * error it must produce, exactly and in order ("# expect: FILE:LINE: msg");
 * a valid file lists resolved values ("# want: PROFILE | KEY | VALUE |
 * ORIGIN"). A file whose name starts with "leash" is read as leash.ini.
 * Then: precedence across files, the trust rules, directories.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/fileio.h"
#include "basic/trust.h"
#include "settings/options.h"
#include "settings/profile.h"
#include "tap.h"

static char fixtures[4096];

static int compare_names(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

static size_t list_dir(const char *dir, char ***ret) {
        DIR *d = opendir(dir);
        struct dirent *de;
        char **names = NULL;
        size_t n = 0;

        if (!d)
                return 0;
        while ((de = readdir(d)))
                if (de->d_name[0] != '.') {
                        names = realloc(names, (n + 1) * sizeof *names);
                        names[n++] = strdup(de->d_name);
                }
        closedir(d);
        qsort(names, n, sizeof *names, compare_names);
        *ret = names;
        return n;
}

static char *read_all(const char *path, size_t *ret_len) {
        char *buf = NULL;
        if (read_file_at_alloc(AT_FDCWD, path, &buf, ret_len) < 0)
                return NULL;
        return buf;
}

/* The lines of text that start with "# TAG: " or "; TAG: ", in order. */
static size_t tagged_lines(const char *text, size_t len, const char *tag, char ***ret) {
        char **out = NULL, p1[64], p2[64];
        size_t n = 0;

        snprintf(p1, sizeof p1, "# %s: ", tag);
        snprintf(p2, sizeof p2, "; %s: ", tag);
        for (const char *s = text; s < text + len;) {
                const char *nl = memchr(s, '\n', (size_t) (text + len - s));
                size_t l = nl ? (size_t) (nl - s) : (size_t) (text + len - s);
                if (l > 0 && s[l - 1] == '\r')
                        l--;
                if (l > strlen(p1) && (strncmp(s, p1, strlen(p1)) == 0 || strncmp(s, p2, strlen(p2)) == 0)) {
                        out = realloc(out, (n + 1) * sizeof *out);
                        out[n++] = strndup(s + strlen(p1), l - strlen(p1));
                }
                if (!nl)
                        break;
                s = nl + 1;
        }
        *ret = out;
        return n;
}

static struct leash_profiles *load_fixture(const char *name, const char *text, size_t len) {
        struct leash_profiles *p = NULL;
        if (leash_profiles_new(false, &p) < 0)
                return NULL;
        (void) leash_profiles_load_buffer(p, name, text, len,
                                          strncmp(name, "leash", 5) == 0 ? LEASH_INI_SYSTEM : LEASH_INI_PROFILES);
        (void) leash_profiles_finish(p);
        return p;
}

static void test_invalid(const char *name) {
        char path[8192], **expect = NULL;
        size_t len, n_expect, n_errors;
        char *text;
        struct leash_profiles *p;
        bool same = true;

        snprintf(path, sizeof path, "%s/invalid/%s", fixtures, name);
        text = read_all(path, &len);
        if (!text) {
                ok(false, "%s: read the fixture", name);
                return;
        }
        n_expect = tagged_lines(text, len, "expect", &expect);
        p = load_fixture(name, text, len);
        n_errors = leash_profiles_n_errors(p);
        for (size_t i = 0; i < n_expect || i < n_errors; i++) {
                const char *got = i < n_errors ? leash_profiles_error(p, i) : NULL;
                if (!got || i >= n_expect || strcmp(got, expect[i]) != 0) {
                        same = false;
                        printf("#   %zu: got  '%s'\n#   %zu: want '%s'\n", i, got ? got : "(none)", i,
                               i < n_expect ? expect[i] : "(none)");
                }
        }
        ok(n_expect > 0 && same, "%s: exactly its %zu expected error(s)", name, n_expect);
        for (size_t i = 0; i < n_expect; i++)
                free(expect[i]);
        free(expect);
        leash_profiles_free(p);
        free(text);
}

static void check_want(struct leash_profiles *p, const char *file, const char *want) {
        char buf[1024], *f[4], *save = NULL, *w = strdup(want), value[512];
        struct leash_settings s;
        const struct leash_option *o;
        const char *origin;
        size_t n = 0;

        for (char *t = strtok_r(w, "|", &save); t && n < 4; t = strtok_r(NULL, "|", &save)) {
                while (*t == ' ')
                        t++;
                for (size_t l = strlen(t); l && t[l - 1] == ' '; l--)
                        t[l - 1] = '\0';
                f[n++] = t;
        }
        if (n != 4 || !(o = leash_option_by_name(f[1]))) {
                ok(false, "%s: malformed want line '%s'", file, want);
                free(w);
                return;
        }
        leash_settings_init(&s);
        if (leash_profiles_apply(p, f[0], &s, NULL) < 0) {
                ok(false, "%s: apply %s", file, f[0]);
        } else {
                leash_option_format(&s, o, value, sizeof value);
                origin = s.origin[o->id] ? s.origin[o->id] : "built-in";
                snprintf(buf, sizeof buf, "%s | %s", value, origin);
                {
                        char wanted[1024];
                        snprintf(wanted, sizeof wanted, "%s | %s", f[2], f[3]);
                        is_str(buf, wanted, "%s: [%s] %s", file, f[0], f[1]);
                }
        }
        leash_settings_done(&s);
        free(w);
}

static void test_valid(const char *name) {
        char path[8192], **want = NULL;
        size_t len, n_want;
        char *text;
        struct leash_profiles *p;

        snprintf(path, sizeof path, "%s/valid/%s", fixtures, name);
        text = read_all(path, &len);
        if (!text) {
                ok(false, "%s: read the fixture", name);
                return;
        }
        n_want = tagged_lines(text, len, "want", &want);
        p = load_fixture(name, text, len);
        ok(leash_profiles_n_errors(p) == 0, "%s: no errors", name);
        for (size_t i = 0; i < leash_profiles_n_errors(p); i++)
                printf("#   %s\n", leash_profiles_error(p, i));
        ok(n_want > 0, "%s: has want lines", name);
        for (size_t i = 0; i < n_want; i++) {
                check_want(p, name, want[i]);
                free(want[i]);
        }
        free(want);
        leash_profiles_free(p);
        free(text);
}

#define BUF(s) s, strlen(s)

static void test_precedence(void) {
        struct leash_profiles *p = NULL;
        struct leash_settings s;
        struct leash_error err = {0};
        const char *file = NULL;
        char v[64];

        leash_profiles_new(false, &p);
        leash_profiles_load_buffer(p, "/etc/leash/leash.ini", BUF("[leash]\ngrace = 2s\nmemory = 8G\npids = 50\n"),
                                   LEASH_INI_SYSTEM);
        leash_profiles_load_buffer(p, "a.ini", BUF("[base]\npids = 10\nwall-time = 1m\n"), LEASH_INI_PROFILES);
        leash_profiles_load_buffer(p, "b.ini", BUF("[t]\ninherit = base\nmemory = 1G\n"), LEASH_INI_PROFILES);
        ok(leash_profiles_finish(p) == 0, "inherit across files resolves");
        leash_settings_init(&s);
        ok(leash_profiles_apply(p, "t", &s, &file) == 0, "apply t");
        is_str(file, "b.ini", "the profile's own file is returned");
        leash_option_format(&s, leash_option_by_name("memory"), v, sizeof v);
        is_str(v, "1G", "profile beats leash.ini");
        leash_option_format(&s, leash_option_by_name("pids"), v, sizeof v);
        is_str(v, "10", "an inherited value beats leash.ini");
        is_str(s.origin[LEASH_OPT_PIDS], "inherited from base (a.ini:2)", "and says where it came from");
        leash_option_format(&s, leash_option_by_name("grace"), v, sizeof v);
        is_str(v, "2s", "leash.ini beats the built-in default");
        is_str(s.origin[LEASH_OPT_GRACE], "/etc/leash/leash.ini:2", "leash.ini's origin");
        ok(leash_option_set(&s, leash_option_by_name("memory"), "3G", "command line", &err) == 0, "command line set");
        leash_option_format(&s, leash_option_by_name("memory"), v, sizeof v);
        is_str(v, "3G", "the command line beats the profile");
        leash_option_format(&s, leash_option_by_name("wall-time"), v, sizeof v);
        is_str(v, "60s", "and overrides only its own value");
        leash_settings_done(&s);

        leash_settings_init(&s);
        ok(leash_profiles_apply(p, "nope", &s, &file) == -ENOENT, "unknown profile: -ENOENT");
        ok(leash_profiles_apply(p, "default", &s, &file) == 0 && file == NULL, "the built-in default exists");
        leash_option_format(&s, leash_option_by_name("memory"), v, sizeof v);
        is_str(v, "8G", "the default profile gets leash.ini's values");
        leash_settings_done(&s);

        {
                const char *n, *f;
                unsigned l;
                const char *want[] = {"base", "default", "t"};
                bool good = leash_profiles_count(p) == 3;
                for (size_t i = 0; good && i < 3; i++)
                        good = leash_profiles_get(p, i, &n, &f, &l) == 0 && strcmp(n, want[i]) == 0;
                ok(good, "list: by name, the built-in default in its place");
        }
        leash_profiles_free(p);

        leash_profiles_new(false, &p);
        leash_profiles_load_buffer(p, "a.ini", BUF("[default]\nmemory = 1G\n"), LEASH_INI_PROFILES);
        leash_profiles_load_buffer(p, "b.ini", BUF("\n[default]\nmemory = 2G\n"), LEASH_INI_PROFILES);
        leash_profiles_finish(p);
        ok(leash_profiles_n_errors(p) == 1, "[default] may replace the built-in once, not twice");
        is_str(leash_profiles_error(p, 0), "b.ini:2: duplicate profile [default]: already defined at a.ini:1",
               "a second [default] in another file");
        leash_profiles_free(p);

        leash_profiles_new(false, &p);
        leash_profiles_load_buffer(p, "a.ini", BUF("[leash]\n"), LEASH_INI_SYSTEM);
        leash_profiles_load_buffer(p, "b.ini", BUF("[leash]\n"), LEASH_INI_SYSTEM);
        ok(leash_profiles_n_errors(p) == 1, "one system configuration only");
        leash_profiles_free(p);
}

static void test_trust_judge(void) {
        struct stat st = {0};
        char why[128];

        st.st_uid = 0;
        st.st_mode = S_IFREG | 0644;
        ok(trust_judge(&st, TRUST_FILE, why, sizeof why) == 0, "root's 0644 file is trusted");
        st.st_mode = S_IFREG | 0664;
        ok(trust_judge(&st, TRUST_FILE, why, sizeof why) == -EPERM, "group-writable file refused");
        is_str(why, "writable by group or others (mode 0664)", "and says why");
        st.st_mode = S_IFREG | 0646;
        ok(trust_judge(&st, TRUST_FILE, why, sizeof why) == -EPERM, "world-writable file refused");
        st.st_mode = S_IFREG | 0600;
        st.st_uid = 1000;
        ok(trust_judge(&st, TRUST_FILE, why, sizeof why) == -EPERM, "a user's file refused");
        is_str(why, "owned by uid 1000, not root", "and says whose");
        st.st_uid = 0;
        st.st_mode = S_IFDIR | 01777;
        ok(trust_judge(&st, TRUST_ANCESTOR, why, sizeof why) == 0, "sticky /tmp above is fine");
        ok(trust_judge(&st, TRUST_PARENT, why, sizeof why) == -EPERM, "but not as the file's own directory");
        st.st_mode = S_IFDIR | 0777;
        ok(trust_judge(&st, TRUST_ANCESTOR, why, sizeof why) == -EPERM, "a non-sticky world-writable ancestor refused");
}

/* Real files: the trust walk (as root; as a user everything is someone's). */
static void test_trust_files(void) {
        char dir[] = "/tmp/leash-unit.XXXXXX", path[256], sub[256], link[256], why[4200];
        int fd;

        if (!mkdtemp(dir)) {
                ok(false, "mkdtemp");
                return;
        }
        snprintf(sub, sizeof sub, "%s/conf", dir);
        snprintf(path, sizeof path, "%s/conf/a.ini", dir);
        snprintf(link, sizeof link, "%s/link.ini", dir);
        mkdir(sub, 0755);
        fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        if (fd >= 0)
                close(fd);
        chmod(path, 0644);
        (void) !symlink(path, link);

        fd = trust_open(path, false, false, why, sizeof why);
        ok(fd >= 0, "unchecked open of a regular file");
        if (fd >= 0)
                close(fd);
        ok(trust_open(sub, false, false, why, sizeof why) == -EISDIR, "a directory is not a file");
        ok(strstr(why, sub) && strstr(why, "is not a regular file"), "names it: %s", why);
        if (geteuid() != 0) {
                printf("ok %d # SKIP the trust walk needs root\n", ++tap_n);
                goto out;
        }
        {
                /* the walk judges / and /tmp too: a machine whose /tmp is not root's
                 * (or is writable by others without the sticky bit) cannot pass it */
                struct stat t;
                if (stat("/tmp", &t) < 0 || t.st_uid != 0 || ((t.st_mode & 0022) && !(t.st_mode & S_ISVTX))) {
                        printf("ok %d # SKIP the trust walk: /tmp here is not root's, or not sticky\n", ++tap_n);
                        goto out;
                }
        }
        fd = trust_open(path, false, true, why, sizeof why);
        ok(fd >= 0, "root's file under a 0700 dir in sticky /tmp is trusted");
        if (fd >= 0)
                close(fd);
        chmod(path, 0666);
        ok(trust_open(path, false, true, why, sizeof why) == -EPERM, "world-writable file refused");
        is_str(why, "it is writable by group or others (mode 0666)", "why");
        ok(trust_open(link, false, true, why, sizeof why) == -EPERM, "a symlink is judged by its target");
        {
                char want[600];
                snprintf(want, sizeof want, "its target %s is writable by group or others (mode 0666)", path);
                is_str(why, want, "and names the target");
        }
        chmod(path, 0644);
        (void) !chown(path, 1000, 1000);
        ok(trust_open(path, false, true, why, sizeof why) == -EPERM, "a file owned by uid 1000 refused");
        is_str(why, "it is owned by uid 1000, not root", "why");
        (void) !chown(path, 0, 0);
        chmod(sub, 0777);
        ok(trust_open(path, false, true, why, sizeof why) == -EPERM, "a world-writable directory refused");
        {
                char want[600];
                snprintf(want, sizeof want, "its directory %s is writable by group or others (mode 0777)", sub);
                is_str(why, want, "and names the directory");
        }
        chmod(sub, 0755);
out:
        unlink(link);
        unlink(path);
        rmdir(sub);
        rmdir(dir);
}

static void write_file(const char *path, const char *text) {
        int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
        if (fd >= 0) {
                (void) !write(fd, text, strlen(text));
                close(fd);
        }
}

static void test_paths(void) {
        char dir[] = "/tmp/leash-unit.XXXXXX", p1[300];
        struct leash_profile_paths paths = {0};
        struct leash_profiles *p = NULL;

        if (!mkdtemp(dir)) {
                ok(false, "mkdtemp");
                return;
        }
        snprintf(p1, sizeof p1, "%s/profiles.d", dir);
        mkdir(p1, 0755);
        snprintf(p1, sizeof p1, "%s/leash.ini", dir);
        write_file(p1, "[leash]\ngrace = 3s\n");
        snprintf(p1, sizeof p1, "%s/profiles.d/b.ini", dir);
        write_file(p1, "[x]\n");
        snprintf(p1, sizeof p1, "%s/profiles.d/a.ini", dir);
        write_file(p1, "[x]\n");
        snprintf(p1, sizeof p1, "%s/profiles.d/c.ini.dpkg-old", dir);
        write_file(p1, "junk\n");
        snprintf(p1, sizeof p1, "%s/profiles.d/.hidden.ini", dir);
        write_file(p1, "junk\n");
        snprintf(paths.config_dir, sizeof paths.config_dir, "%s", dir);
        leash_profiles_new(geteuid() == 0, &p);
        leash_profiles_load_paths(p, &paths);
        leash_profiles_finish(p);
        {
                char want[600];
                snprintf(want, sizeof want,
                         "%s/profiles.d/b.ini:1: duplicate profile [x]: already defined at %s/profiles.d/a.ini:1", dir,
                         dir);
                ok(leash_profiles_n_errors(p) == 1, "a directory: *.ini only, no dot files, in name order");
                is_str(leash_profiles_error(p, 0), want, "so b.ini's [x] is the duplicate");
        }
        snprintf(p1, sizeof p1, "%s/leash.ini", dir);
        is_str(leash_profiles_system_file(p), p1, "leash.ini read");
        ok(leash_profiles_load_file(p, p1, LEASH_INI_SYSTEM) == 0 && leash_profiles_n_errors(p) == 1,
           "the same file again is read once");
        leash_profiles_free(p);

        leash_profiles_new(false, &p);
        snprintf(p1, sizeof p1, "%s/nothing.ini", dir);
        leash_profiles_load_file(p, p1, LEASH_INI_PROFILES);
        {
                char want[600];
                snprintf(want, sizeof want, "%s: cannot read: No such file or directory", p1);
                is_str(leash_profiles_error(p, 0), want, "a missing --profile-file is an error");
        }
        leash_profiles_free(p);

        snprintf(p1, sizeof p1, "%s/profiles.d/a.ini", dir);
        unlink(p1);
        snprintf(p1, sizeof p1, "%s/profiles.d/b.ini", dir);
        unlink(p1);
        snprintf(p1, sizeof p1, "%s/profiles.d/c.ini.dpkg-old", dir);
        unlink(p1);
        snprintf(p1, sizeof p1, "%s/profiles.d/.hidden.ini", dir);
        unlink(p1);
        snprintf(p1, sizeof p1, "%s/profiles.d", dir);
        rmdir(p1);
        snprintf(p1, sizeof p1, "%s/leash.ini", dir);
        unlink(p1);
        rmdir(dir);

        snprintf(paths.config_dir, sizeof paths.config_dir, "/nonexistent/leash");
        leash_profiles_new(false, &p);
        ok(leash_profiles_load_paths(p, &paths) == 0 && leash_profiles_finish(p) == 0 && leash_profiles_count(p) == 1,
           "no configuration at all: just the built-in default");
        leash_profiles_free(p);
}

/* Work per section of loading n sections, finishing and reading every name
 * back as `profiles list` does (index slots looked at); -1 when it failed. */
static double work_per_section(size_t n) {
        struct leash_profiles *p = NULL;
        size_t len = 0, cap = n * 32 + 64, ok_names = 0;
        char *text = malloc(cap);
        double per = -1;

        if (!text || leash_profiles_new(false, &p) < 0) {
                free(text);
                return -1;
        }
        for (size_t i = 0; i < n; i++)
                len += (size_t) snprintf(text + len, cap - len, "[p%zu]\npids = %zu\n", i, i + 1);
        if (leash_profiles_load_buffer(p, "many.ini", text, len, LEASH_INI_PROFILES) == 0 &&
            leash_profiles_finish(p) == 0 && leash_profiles_count(p) == n + 1) {
                for (size_t i = 0; i < leash_profiles_count(p); i++) {
                        const char *name, *file;
                        unsigned line;
                        ok_names += leash_profiles_get(p, i, &name, &file, &line) == 0;
                }
                if (ok_names == n + 1)
                        per = (double) leash_profiles_probes(p) / (double) n;
        }
        leash_profiles_free(p);
        free(text);
        return per;
}

/* issue 41.7: `profiles list` of 10,000 sections took 2.6 s (a linear search
 * per section at load, a walk per name read back): the work per section
 * must not grow with the number of sections */
static void test_many_sections(void) {
        double w1 = work_per_section(10000), w2 = work_per_section(40000);
        ok(w1 > 0 && w1 < 16, "10,000 sections: %.2f index slots per section, loaded and listed", w1);
        ok(w2 > 0 && w2 < 16 && w2 < 2 * w1, "40,000 sections: %.2f per section, not 4 times 10,000's", w2);
}

int main(void) {
        const char *src = getenv("LEASH_SRCDIR");
        char dir[4200], **names = NULL;
        size_t n;

        snprintf(fixtures, sizeof fixtures, "%s/tests/unit/fixtures/profiles", src ? src : ".");

        snprintf(dir, sizeof dir, "%s/invalid", fixtures);
        n = list_dir(dir, &names);
        ok(n >= 10, "invalid fixtures found in %s", dir);
        for (size_t i = 0; i < n; i++) {
                test_invalid(names[i]);
                free(names[i]);
        }
        free(names);

        snprintf(dir, sizeof dir, "%s/valid", fixtures);
        n = list_dir(dir, &names);
        ok(n >= 5, "valid fixtures found in %s", dir);
        for (size_t i = 0; i < n; i++) {
                test_valid(names[i]);
                free(names[i]);
        }
        free(names);

        test_precedence();
        test_trust_judge();
        test_trust_files();
        test_paths();
        test_many_sections();
        return tap_done();
}
