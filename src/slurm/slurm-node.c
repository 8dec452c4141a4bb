/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which of leash's two Slurm modes a node is in (see slurm-node.h).
 *
 * slurm.conf is read the way slurmd reads it for the few keys that decide who
 * places tasks: "Key=Value" per line (keys case-insensitive, '#' starts a
 * comment, the last value of a key wins), plus plugstack.conf's "required|
 * optional PATH ARGS" lines for leash's SPANK plugin.  Include lines are not
 * followed: a node whose placement keys live in an included file is told so
 * (SLURM_NODE_INCLUDES), never judged on half of its configuration.
 */
#include "slurm-node.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../basic/fileio.h"
#include "../basic/macro.h"

static void copy_value(char *dst, size_t size, const char *v, size_t n) {
        while (n && (v[n - 1] == ' ' || v[n - 1] == '\t' || v[n - 1] == '\r'))
                n--;
        if (n >= size)
                n = size - 1;
        memcpy(dst, v, n);
        dst[n] = '\0';
}

/* One "Key=Value" line: the value of key, when this line sets it. */
static bool line_value(const char *line, size_t len, const char *key, char *buf, size_t size) {
        size_t k = strlen(key), i = 0, end = len;

        while (i < len && (line[i] == ' ' || line[i] == '\t'))
                i++;
        if (len - i <= k || strncasecmp(line + i, key, k) != 0 || line[i + k] != '=')
                return false;
        for (size_t j = i + k + 1; j < len; j++)
                if (line[j] == '#') {
                        end = j;
                        break;
                }
        copy_value(buf, size, line + i + k + 1, end - (i + k + 1));
        return true;
}

static bool has_word(const char *list, const char *word) {
        size_t n = strlen(word);

        for (const char *p = list; (p = strstr(p, word)); p += n)
                if ((p == list || p[-1] == ',' || p[-1] == ' ') && (p[n] == '\0' || p[n] == ',' || p[n] == ' '))
                        return true;
        return false;
}

static bool is_leash_hook(const char *path, const char *name) {
        const char *base = strrchr(path, '/');
        return strcmp(base ? base + 1 : path, name) == 0;
}

int slurm_node_parse_conf(const char *text, size_t size, struct slurm_node *ret) {
        struct slurm_node n = {0};
        const char *p = text, *end = text + size;

        if (!text || !ret)
                return -EINVAL;
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                size_t len = nl ? (size_t) (nl - p) : (size_t) (end - p);
                char v[SLURM_NODE_VALUE_MAX];

                if (line_value(p, len, "ProctrackType", v, sizeof v))
                        snprintf(n.proctrack, sizeof n.proctrack, "%s", v);
                else if (line_value(p, len, "TaskPlugin", v, sizeof v))
                        snprintf(n.task_plugin, sizeof n.task_plugin, "%s", v);
                else if (line_value(p, len, "Prolog", v, sizeof v))
                        n.leash_prolog = is_leash_hook(v, "slurm-prolog");
                else if (line_value(p, len, "TaskProlog", v, sizeof v))
                        n.leash_task_prolog = is_leash_hook(v, "slurm-task-prolog");
                else if (line_value(p, len, "PlugStackConfig", v, sizeof v))
                        snprintf(n.plugstack, sizeof n.plugstack, "%s", v);
                else {
                        size_t i = 0;
                        while (i < len && (p[i] == ' ' || p[i] == '\t'))
                                i++;
                        if (len - i > 7 && strncasecmp(p + i, "include", 7) == 0 &&
                            (p[i + 7] == ' ' || p[i + 7] == '\t'))
                                n.includes = true;
                }
                p = nl ? nl + 1 : end;
        }
        n.slurm_places = strcasecmp(n.proctrack, "proctrack/cgroup") == 0 || has_word(n.task_plugin, "task/cgroup");
        *ret = n;
        return 0;
}

void slurm_node_parse_plugstack(const char *text, size_t size, struct slurm_node *node) {
        const char *p = text, *end = text + size;

        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                size_t len = nl ? (size_t) (nl - p) : (size_t) (end - p);
                char line[1024], kind[16], path[900];

                copy_value(line, sizeof line, p, len);
                if (sscanf(line, " %15s %899s", kind, path) == 2 && kind[0] != '#' &&
                    (strcmp(kind, "required") == 0 || strcmp(kind, "optional") == 0) &&
                    is_leash_hook(path, "spank_leash.so"))
                        node->leash_spank = true;
                p = nl ? nl + 1 : end;
        }
}

const char *slurm_mode_to_string(enum slurm_mode m) {
        return m == SLURM_MODE_NEST ? "nest" : "own";
}

int slurm_mode_from_string(const char *s, enum slurm_mode *ret) {
        if (strcmp(s, "own") == 0)
                *ret = SLURM_MODE_OWN;
        else if (strcmp(s, "nest") == 0)
                *ret = SLURM_MODE_NEST;
        else
                return -EINVAL;
        return 0;
}

int slurm_node_judge(const struct slurm_node *n, enum slurm_mode mode, char *why, size_t size) {
        bool leash_places = mode == SLURM_MODE_OWN && (n->leash_task_prolog || n->leash_spank);

        if (leash_places && n->slurm_places) {
                snprintf(why, size,
                         "both would place tasks: leash's own layout (mode = own, %s) and Slurm's cgroup plugin "
                         "(ProctrackType=%s, TaskPlugin=%s); set mode = nest in slurm.ini, or turn Slurm's "
                         "proctrack/cgroup and task/cgroup off",
                         n->leash_spank ? "spank_leash.so" : "TaskProlog", n->proctrack[0] ? n->proctrack : "(default)",
                         n->task_plugin[0] ? n->task_plugin : "(default)");
                return -EEXIST;
        }
        if (mode == SLURM_MODE_NEST && !n->slurm_places) {
                snprintf(why, size,
                         "mode = nest needs Slurm's cgroup plugin to place the tasks (ProctrackType=proctrack/cgroup "
                         "or TaskPlugin=task/cgroup), and slurm.conf has ProctrackType=%s, TaskPlugin=%s",
                         n->proctrack[0] ? n->proctrack : "(default)",
                         n->task_plugin[0] ? n->task_plugin : "(default)");
                return -ENOENT;
        }
        if (mode == SLURM_MODE_NEST && !n->leash_spank) {
                snprintf(why, size, "mode = nest needs spank_leash.so in plugstack.conf (the step-end figures)");
                return -ENOENT;
        }
        if (mode == SLURM_MODE_OWN && !leash_places)
                snprintf(why, size,
                         "own layout, but neither TaskProlog nor spank_leash.so is leash's: tasks are not "
                         "placed in the job cgroup");
        else
                snprintf(why, size, "%s",
                         mode == SLURM_MODE_NEST ? "nest: Slurm's cgroup plugin places the tasks, "
                                                   "leash adopts its job and step cgroups read-only"
                                                 : "own: leash places the tasks in its own layout");
        return 0;
}

/* plugstack.conf: PlugStackConfig=, else slurmd's default beside slurm.conf. */
static void node_plugstack_path(const struct slurm_node *n, const char *conf, char *buf, size_t size) {
        const char *slash = strrchr(conf, '/');
        if (n->plugstack[0])
                snprintf(buf, size, "%s", n->plugstack);
        else
                snprintf(buf, size, "%.*splugstack.conf", slash ? (int) (slash - conf + 1) : 0, conf);
}

int slurm_node_read(const char *path, struct slurm_node *n, char *stack_path, size_t size) {
        _cleanup_free_ char *text = NULL, *stack = NULL;
        size_t len;
        int r;

        if (!path)
                path = getenv("SLURM_CONF");
        if (!path || !*path)
                path = "/etc/slurm/slurm.conf";
        r = read_file_at_alloc(AT_FDCWD, path, &text, &len);
        if (r < 0)
                return r;
        (void) slurm_node_parse_conf(text, len, n);
        node_plugstack_path(n, path, stack_path, size);
        if (read_file_at_alloc(AT_FDCWD, stack_path, &stack, &len) == 0)
                slurm_node_parse_plugstack(stack, len, n);
        return 0;
}
