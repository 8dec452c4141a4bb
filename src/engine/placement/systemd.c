/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sd-bus adapter (libsystemd), loaded with dlopen() at first use.
 *
 * Theory of operation. A program that is not systemd writes only into a
 * cgroup subtree the service manager delegated to it; it gets one by asking
 * for a transient scope with Delegate=yes (StartTransientUnit), the process
 * passed by PIDFDs where the manager knows that property (systemd 253 and
 * later) and by PIDs otherwise, and by waiting for the start job's JobRemoved
 * before it uses the scope: until then the process may not be in it yet.
 *
 * Which manager: the caller says (placement: the system manager for root, the
 * user manager otherwise), each first over its private socket (/run/systemd/private,
 * $XDG_RUNTIME_DIR/systemd/private, as systemctl does: one hop less than the
 * bus, and no dbus-daemon needed) and then over the bus
 * (/run/dbus/system_bus_socket, $XDG_RUNTIME_DIR/bus). XDG_RUNTIME_DIR unset
 * (su, a cron job) means /run/user/UID. On a direct connection the manager
 * sends every signal unasked; on the bus, JobRemoved reaches the client that
 * made the job.
 *
 * Why dlopen: the leash binary is linked -static-pie (HACKING.md) and Debian
 * ships libsystemd only as a shared library. glibc loads a shared library into
 * a static program when its own version is the one linked, which the static
 * leash's Built-Using already ties it to. A run that never needs a scope
 * (root on a host without systemd, --cgroup-parent) never loads it. Only
 * values travel between leash and libsystemd: no memory allocated by one is
 * freed by the other, no FILE*, no errno read across.
 */
#include "systemd.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../../basic/dlsafe.h"
#include "../../basic/macro.h"
#include "../../basic/time-util.h"

/* The manager's sockets, private first: ret[0], ret[1] as "unix:path=...". */
static int manager_addresses(bool user, char ret[2][4200]) {
        char dir[64];
        const char *rt;

        if (!user) {
                snprintf(ret[0], sizeof ret[0], "unix:path=/run/systemd/private");
                snprintf(ret[1], sizeof ret[1], "unix:path=/run/dbus/system_bus_socket");
                return 0;
        }
        rt = getenv("XDG_RUNTIME_DIR");
        if (!rt || rt[0] != '/') {
                snprintf(dir, sizeof dir, "/run/user/%u", (unsigned) geteuid());
                rt = dir;
        }
        /* sd-bus's address syntax escapes with %: a runtime dir with one is not ours */
        if (strlen(rt) > 4000 || strpbrk(rt, "%,;="))
                return -EINVAL;
        snprintf(ret[0], sizeof ret[0], "unix:path=%s/systemd/private", rt);
        snprintf(ret[1], sizeof ret[1], "unix:path=%s/bus", rt);
        return 0;
}

int systemd_manager_reachable(bool user) {
        char addr[2][4200];
        int r = manager_addresses(user, addr);
        if (r < 0)
                return r;
        for (int i = 0; i < 2; i++) {
                if (access(addr[i] + strlen("unix:path="), W_OK) == 0)
                        return 0;
                r = negative_errno();
        }
        return r;
}

#if HAVE_SYSTEMD_SD_BUS_H
#include <systemd/sd-bus.h>

/* The calls used, resolved once; a table, so that adding one is one line. */
#define SD_CALLS(X)                       \
        X(sd_bus_new)                     \
        X(sd_bus_set_address)             \
        X(sd_bus_set_bus_client)          \
        X(sd_bus_negotiate_fds)           \
        X(sd_bus_start)                   \
        X(sd_bus_flush_close_unref)       \
        X(sd_bus_message_new_method_call) \
        X(sd_bus_message_append)          \
        X(sd_bus_message_open_container)  \
        X(sd_bus_message_close_container) \
        X(sd_bus_message_read)            \
        X(sd_bus_message_unref)           \
        X(sd_bus_call)                    \
        X(sd_bus_call_async)              \
        X(sd_bus_flush)                   \
        X(sd_bus_message_get_error)       \
        X(sd_bus_call_method)             \
        X(sd_bus_get_property)            \
        X(sd_bus_get_property_trivial)    \
        X(sd_bus_add_match)               \
        X(sd_bus_slot_unref)              \
        X(sd_bus_process)                 \
        X(sd_bus_wait)                    \
        X(sd_bus_error_free)              \
        X(sd_bus_error_has_name)          \
        X(sd_bus_error_get_errno)

static struct {
#define SD_FIELD(name) __typeof__(name) *name;
        SD_CALLS(SD_FIELD)
#undef SD_FIELD
} sd;
static int sd_loaded;    /* 0 not tried, 1 loaded, -errno failed */
static char sd_why[300]; /* why not, when a static leash refused to load it */
static pthread_once_t sd_once = PTHREAD_ONCE_INIT;

static void sd_load(void) {
        const char *why = NULL;
        void *h = dl_open_checked("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL, sd_why, sizeof sd_why, &why);
        if (!h) {
                if (why != sd_why)
                        sd_why[0] = '\0';
                sd_loaded = -ENOPKG;
                return;
        }
#define SD_RESOLVE(name)                                         \
        if (!(sd.name = (__typeof__(name) *) dlsym(h, #name))) { \
                sd_loaded = -ENOPKG;                             \
                return;                                          \
        }
        SD_CALLS(SD_RESOLVE)
#undef SD_RESOLVE
        sd_loaded = 1;
}

static void bus_closep(sd_bus **b) {
        if (*b)
                sd.sd_bus_flush_close_unref(*b);
}
static void msg_unrefp(sd_bus_message **m) {
        if (*m)
                sd.sd_bus_message_unref(*m);
}
static void slot_unrefp(sd_bus_slot **s) {
        if (*s)
                sd.sd_bus_slot_unref(*s);
}
static void error_freep(sd_bus_error *e) {
        sd.sd_bus_error_free(e);
}

/* connect ADDRESS: a started connection, as a bus client (Hello) or not. */
static int bus_connect(const char *address, bool client, sd_bus **ret) {
        sd_bus *b = NULL;
        int r = sd.sd_bus_new(&b);
        if (r < 0)
                return r;
        if ((r = sd.sd_bus_set_address(b, address)) < 0 || (r = sd.sd_bus_set_bus_client(b, client)) < 0 ||
            (r = sd.sd_bus_negotiate_fds(b, true)) < 0 || (r = sd.sd_bus_start(b)) < 0) {
                sd.sd_bus_flush_close_unref(b);
                return r;
        }
        *ret = b;
        return 0;
}

/* The manager: its private socket first (no Hello: a direct connection),
 * then the bus. */
static int manager_connect(bool user, sd_bus **ret, bool *ret_client) {
        char addr[2][4200];
        int r = manager_addresses(user, addr);
        if (r < 0)
                return r;
        r = bus_connect(addr[0], false, ret);
        *ret_client = r < 0;
        return r < 0 ? bus_connect(addr[1], true, ret) : r;
}

struct job_wait {
        const char *job; /* the object path StartTransientUnit returned */
        char result[32]; /* "done", "failed", ... once JobRemoved came */
        bool done;
};

static int on_job_removed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        struct job_wait *w = userdata;
        const char *path, *unit, *result;
        uint32_t id;
        (void) ret_error;
        if (sd.sd_bus_message_read(m, "uoss", &id, &path, &unit, &result) < 0)
                return 0;
        if (w->job && strcmp(path, w->job) == 0 && !w->done) {
                snprintf(w->result, sizeof w->result, "%s", result);
                w->done = true;
        }
        return 0;
}

/* The method call, its properties in the order systemd-run gives them. */
static int scope_message(sd_bus *b, const struct systemd_scope_request *q, pid_t pid, int pidfd, sd_bus_message **ret) {
        _cleanup_(msg_unrefp) sd_bus_message *m = NULL;
        int r;

        r = sd.sd_bus_message_new_method_call(b, &m, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                              "org.freedesktop.systemd1.Manager", "StartTransientUnit");
        if (r < 0)
                return r;
        r = sd.sd_bus_message_append(m, "ss", q->unit, "fail");
        if (r >= 0)
                r = sd.sd_bus_message_open_container(m, 'a', "(sv)");
        if (r >= 0)
                r = sd.sd_bus_message_append(m, "(sv)(sv)(sv)(sv)", "Description", "s",
                                             "leash: jobs of this process and its supervisor", "Slice", "s", q->slice,
                                             "Delegate", "b", 1, "CollectMode", "s", "inactive-or-failed");
        /* stopping the unit that started leash (or its end) stops the scope:
         * SIGTERM to leash, which ends its jobs through the ladder */
        if (r >= 0 && q->bind_to)
                r = sd.sd_bus_message_append(m, "(sv)", "BindsTo", "as", 1, q->bind_to);
        /* a service whose one process sleeps: its cgroup lives as long (an
         * exited service's cgroup is removed, RemainAfterExit=yes or not) */
        if (r >= 0 && q->keeper)
                r = sd.sd_bus_message_append(m, "(sv)(sv)", "Type", "s", "exec", "ExecStart", "a(sasb)", 1, q->keeper,
                                             2, q->keeper, "infinity", 0);
        else if (r >= 0)
                r = pidfd >= 0 ? sd.sd_bus_message_append(m, "(sv)", "PIDFDs", "ah", 1, pidfd)
                               : sd.sd_bus_message_append(m, "(sv)", "PIDs", "au", 1, (uint32_t) pid);
        if (r >= 0)
                r = sd.sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd.sd_bus_message_append(m, "a(sa(sv))", 0);
        if (r < 0)
                return r;
        *ret = m;
        m = NULL;
        return 0;
}

/* An error that says the manager does not know PIDFDs (systemd 252 says
 * PropertyReadOnly: "Cannot set property PIDFDs, or unknown property"). */
static bool unknown_property(const sd_bus_error *e) {
        return sd.sd_bus_error_has_name(e, "org.freedesktop.DBus.Error.PropertyReadOnly") ||
               sd.sd_bus_error_has_name(e, "org.freedesktop.DBus.Error.UnknownProperty") ||
               sd.sd_bus_error_has_name(e, "org.freedesktop.DBus.Error.InvalidArgs");
}

static int call_start(sd_bus *b, const struct systemd_scope_request *q, pid_t pid, int pidfd, struct job_wait *w,
                      char *what, size_t what_size, bool *ret_retry) {
        _cleanup_(msg_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        _cleanup_(error_freep) sd_bus_error e = SD_BUS_ERROR_NULL;
        const char *job;
        int r;

        *ret_retry = false;
        r = scope_message(b, q, pid, pidfd, &m);
        if (r < 0) {
                *ret_retry = pidfd >= 0; /* e.g. a connection without fd passing */
                return r;
        }
        r = sd.sd_bus_call(b, m, 30 * USEC_PER_SEC, &e, &reply);
        if (r < 0) {
                *ret_retry = pidfd >= 0 && unknown_property(&e);
                if (what && e.message)
                        snprintf(what, what_size, "%s", e.message);
                if (sd.sd_bus_error_has_name(&e, "org.freedesktop.systemd1.UnitExists"))
                        return -EEXIST;
                return r;
        }
        r = sd.sd_bus_message_read(reply, "o", &job);
        if (r < 0)
                return r;
        /* before the path is set: no stale match */
        w->result[0] = '\0';
        w->done = false;
        w->job = strdup(job);
        return w->job ? 0 : -ENOMEM;
}

/* Processes the connection's messages until *done (a callback set it), for
 * at most 30 s. */
static int bus_run_until(sd_bus *b, const bool *done) {
        uint64_t deadline = now_ns(CLOCK_MONOTONIC) + 30 * NSEC_PER_SEC;
        while (!*done) {
                uint64_t now = now_ns(CLOCK_MONOTONIC);
                int r = sd.sd_bus_process(b, NULL);
                if (r < 0)
                        return r;
                if (r > 0)
                        continue;
                if (now >= deadline)
                        return -ETIMEDOUT;
                r = sd.sd_bus_wait(b, (deadline - now) / NSEC_PER_USEC);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int wait_job(sd_bus *b, struct job_wait *w) {
        int r = bus_run_until(b, &w->done);
        return r < 0 ? r : strcmp(w->result, "done") == 0 ? 0 : -EIO;
}

/* The D-Bus interface that holds a unit type's Delegate property. */
static const char *unit_interface(const char *unit) {
        static const char *const types[][2] = {
                {".scope", "org.freedesktop.systemd1.Scope"},
                {".service", "org.freedesktop.systemd1.Service"},
                {".slice", "org.freedesktop.systemd1.Slice"},
        };
        size_t n = strlen(unit);

        for (size_t i = 0; i < ELEMENTSOF(types); i++) {
                size_t s = strlen(types[i][0]);
                if (n > s && strcmp(unit + n - s, types[i][0]) == 0)
                        return types[i][1];
        }
        return NULL;
}

/* The object path of a loaded unit (valid while *reply lives). */
static int unit_path(sd_bus *b, const char *unit, sd_bus_message **reply, const char **ret) {
        _cleanup_(error_freep) sd_bus_error e = SD_BUS_ERROR_NULL;
        int r = sd.sd_bus_call_method(b, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                      "org.freedesktop.systemd1.Manager", "GetUnit", &e, reply, "s", unit);
        return r < 0 ? r : sd.sd_bus_message_read(*reply, "o", ret);
}

/* Whether unit is active (or starting, or reloading): BindsTo= on a unit
 * that is not would start it (a process left behind by a stopped service
 * must not restart it) or stop the new scope at once. */
static bool unit_running(sd_bus *b, const char *unit) {
        _cleanup_(msg_unrefp) sd_bus_message *reply = NULL, *prop = NULL;
        _cleanup_(error_freep) sd_bus_error e = SD_BUS_ERROR_NULL;
        const char *path, *state;

        if (unit_path(b, unit, &reply, &path) < 0 ||
            sd.sd_bus_get_property(b, "org.freedesktop.systemd1", path, "org.freedesktop.systemd1.Unit", "ActiveState",
                                   &e, &prop, "s") < 0 ||
            sd.sd_bus_message_read(prop, "s", &state) < 0)
                return false;
        return strcmp(state, "active") == 0 || strcmp(state, "activating") == 0 || strcmp(state, "reloading") == 0;
}

/* libsystemd loaded, or why not (in what) */
static int sd_ready(char *what, size_t what_size) {
        if (what && what_size)
                what[0] = '\0';
        pthread_once(&sd_once, sd_load);
        if (sd_loaded < 0 && what && what_size && sd_why[0])
                snprintf(what, what_size, "%s", sd_why);
        return sd_loaded < 0 ? sd_loaded : 0;
}

/* libsystemd loaded and the manager connected, or why not (in what) */
static int sd_open(bool user, sd_bus **b, bool *client, char *what, size_t what_size) {
        int r = sd_ready(what, what_size);

        return r < 0 ? r : manager_connect(user, b, client);
}

int systemd_start_scope(bool user, const struct systemd_scope_request *want, pid_t pid, char *what, size_t what_size) {
        struct systemd_scope_request q_bound = *want, *q = &q_bound;
        _cleanup_(bus_closep) sd_bus *b = NULL;
        _cleanup_(slot_unrefp) sd_bus_slot *slot = NULL;
        _cleanup_(closep) int pidfd = -1;
        struct job_wait w = {0};
        bool client, retry;
        int r;

        r = sd_open(user, &b, &client, what, what_size);
        if (r < 0)
                return r;
        /* before the call, so that a JobRemoved that comes first is not lost */
        r = sd.sd_bus_add_match(b, &slot,
                                client ? "type='signal',sender='org.freedesktop.systemd1',"
                                         "path='/org/freedesktop/systemd1',"
                                         "interface='org.freedesktop.systemd1.Manager',member='JobRemoved'"
                                       : "type='signal',path='/org/freedesktop/systemd1',"
                                         "interface='org.freedesktop.systemd1.Manager',member='JobRemoved'",
                                on_job_removed, &w);
        if (r < 0)
                return r;
        if (q->bind_to && !unit_running(b, q->bind_to))
                q->bind_to = NULL;
        pidfd = q->keeper ? -1 : (int) syscall(SYS_pidfd_open, pid, 0);
        r = call_start(b, q, pid, pidfd, &w, what, what_size, &retry);
        if (r < 0 && retry)
                r = call_start(b, q, pid, -1, &w, what, what_size, &retry);
        if (r >= 0)
                r = wait_job(b, &w);
        free((char *) w.job);
        return r;
}

int systemd_unit_delegates(bool user, const char *unit) {
        _cleanup_(bus_closep) sd_bus *b = NULL;
        _cleanup_(msg_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(error_freep) sd_bus_error e = SD_BUS_ERROR_NULL;
        const char *iface = unit_interface(unit), *path;
        bool client;
        int r, v = 0;

        if (!iface)
                return -EINVAL;
        r = sd_open(user, &b, &client, NULL, 0);
        if (r < 0)
                return r;
        r = unit_path(b, unit, &reply, &path);
        if (r < 0)
                return r;
        r = sd.sd_bus_get_property_trivial(b, "org.freedesktop.systemd1", path, iface, "Delegate", &e, 'b', &v);
        return r < 0 ? r : v != 0;
}

/* A method call in flight: its connection, its slot, and its reply's
 * outcome once it came (done). */
struct systemd_call {
        sd_bus *bus;
        sd_bus_slot *slot;
        bool done;
        int error;         /* -errno of an error reply */
        char message[256]; /* the manager's words in an error reply */
};

static int on_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        struct systemd_call *c = userdata;
        const sd_bus_error *e = sd.sd_bus_message_get_error(m);
        (void) ret_error;
        c->done = true;
        if (e) {
                c->error = -sd.sd_bus_error_get_errno(e);
                if (c->error >= 0)
                        c->error = -EIO;
                snprintf(c->message, sizeof c->message, "%s", e->message ? e->message : e->name ? e->name : "");
        }
        return 0;
}

void systemd_call_free(struct systemd_call *c) {
        if (!c)
                return;
        if (c->slot)
                sd.sd_bus_slot_unref(c->slot);
        if (c->bus)
                sd.sd_bus_flush_close_unref(c->bus);
        free(c);
}

int systemd_attach_send(bool user, const char *unit, const char *subcgroup, pid_t pid, struct systemd_call **ret,
                        char *what, size_t what_size) {
        _cleanup_(msg_unrefp) sd_bus_message *m = NULL;
        struct systemd_call *c;
        bool client;
        int r = sd_ready(what, what_size);

        if (r < 0)
                return r;
        c = calloc(1, sizeof *c);
        if (!c)
                return -ENOMEM;
        r = manager_connect(user, &c->bus, &client);
        if (r >= 0)
                r = sd.sd_bus_message_new_method_call(c->bus, &m, "org.freedesktop.systemd1",
                                                      "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager",
                                                      "AttachProcessesToUnit");
        if (r >= 0)
                r = sd.sd_bus_message_append(m, "ssau", unit, subcgroup, 1, (uint32_t) pid);
        /* the manager works on it while the caller goes on
         * (systemd_call_wait reads the reply) */
        if (r >= 0)
                r = sd.sd_bus_call_async(c->bus, &c->slot, m, on_reply, c, 30 * USEC_PER_SEC);
        /* the connection authenticated and the call written out (sd_bus_start
         * only began the handshake; sd_bus_call_async may only queue) */
        if (r >= 0)
                r = sd.sd_bus_flush(c->bus);
        if (r < 0) {
                systemd_call_free(c);
                return r;
        }
        *ret = c;
        return 0;
}

int systemd_call_wait(struct systemd_call *c, char *what, size_t what_size) {
        int r = bus_run_until(c->bus, &c->done);

        if (what && what_size)
                what[0] = '\0';
        if (r < 0)
                return r;
        if (c->error < 0 && what && what_size)
                snprintf(what, what_size, "%s", c->message);
        return c->error;
}

#else /* no <systemd/sd-bus.h> at build time */

int systemd_start_scope(bool user, const struct systemd_scope_request *q, pid_t pid, char *what, size_t what_size) {
        (void) user, (void) q, (void) pid;
        if (what && what_size)
                what[0] = '\0';
        return -ENOPKG;
}

int systemd_unit_delegates(bool user, const char *unit) {
        (void) user, (void) unit;
        return -ENOPKG;
}

int systemd_attach_send(bool user, const char *unit, const char *subcgroup, pid_t pid, struct systemd_call **ret,
                        char *what, size_t what_size) {
        (void) user, (void) unit, (void) subcgroup, (void) pid, (void) ret;
        if (what && what_size)
                what[0] = '\0';
        return -ENOPKG;
}

int systemd_call_wait(struct systemd_call *c, char *what, size_t what_size) {
        (void) c, (void) what, (void) what_size;
        return -ENOPKG;
}

void systemd_call_free(struct systemd_call *c) {
        (void) c;
}

#endif
