/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The report writer: JSON that parses back to what was put in, nulls for
 * figures the kernel did not give, kv lines that mirror the JSON. */
#include <json-c/json.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>

#include "engine/cgroup/account.h"
#include "engine/leash.h"
#include "json-get.h"
#include "tap.h"

int main(void) {
        char a0[] = "python3", a1[] = "-c", a2[] = "print(\"a\\nb\")";
        char *argv[] = {a0, a1, a2, NULL};
        struct leash_spec c;
        struct leash_result r;
        json_object *root, *v;
        char *text = NULL;

        leash_spec_init(&c);
        c.argv = argv;
        leash_spec_set_limit(&c, LEASH_LIMIT_WALL_TIME, 2000000000ULL);
        leash_spec_set_limit(&c, LEASH_LIMIT_MEMORY, 64ULL << 20);
        memset(&r, 0, sizeof r);
        account_usage_init(&r.usage);
        r.reason = LEASH_REASON_WALL_TIME;
        r.exit_code = 124;
        r.status_code = -1;
        r.term_signal = SIGKILL;
        r.pid = 4242;
        r.started_realtime_ns = 1795000000000000000ULL;
        snprintf(r.cgroup, sizeof r.cgroup, "/sys/fs/cgroup/leash/python3@1");
        r.enforced[LEASH_LIMIT_WALL_TIME] = LEASH_BY_LEASH;
        r.enforced[LEASH_LIMIT_MEMORY] = LEASH_BY_RLIMIT;
        r.enforce_note[LEASH_LIMIT_MEMORY] = "no memory controller";
        r.usage.wall_ns = 7001000000ULL;
        r.usage.cpu_usage_us = 1500000;
        r.usage.cpu_user_us = 1000000;
        r.usage.cpu_system_us = 500000;
        r.signals[0] = (struct leash_signal_event){SIGXCPU, 2000100000ULL, "wall_time"};
        r.signals[1] = (struct leash_signal_event){SIGKILL, 7000200000ULL, "grace"};
        r.n_signals = 2;

        ok(leash_report_format(&c, &r, LEASH_FORMAT_JSON, &text) == 0 && text, "JSON report written");
        root = json_tokener_parse(text);
        ok(root != NULL, "JSON report parses");
        ok(json_object_get_int(get(root, "schema")) == 1, "schema 1");
        is_str(json_object_get_string(get(root, "reason")), "wall_time", "reason");
        ok(json_object_get_int(get(root, "exit.code")) == 124, "exit code");
        is_str(json_object_get_string(get(root, "exit.signal")), "KILL", "exit signal by name");
        ok(get(root, "exit.status") == NULL, "no exit status when killed: null");
        is_str(json_object_get_string(json_object_array_get_idx(get(root, "command"), 2)), "print(\"a\\nb\")",
               "command argument with quotes and newline round-trips");
        is_str(json_object_get_string(get(root, "limits.memory.enforced_by")), "rlimit", "memory enforced_by");
        is_str(json_object_get_string(get(root, "limits.memory.note")), "no memory controller", "memory note");
        ok(json_object_get_uint64(get(root, "limits.memory.value")) == 64ULL << 20, "memory value in bytes");
        ok(json_object_get_double(get(root, "limits.wall_time.value")) == 2.0, "wall value in seconds");
        ok(get(root, "limits.pids") == NULL, "a limit not asked for is absent");
        ok(json_object_get_double(get(root, "usage.cpu_time_s")) == 1.5, "cpu time");
        ok(json_object_get_double(get(root, "usage.wall_time_s")) == 7.001, "wall time");
        v = get(root, "usage");
        ok(json_object_object_get_ex(v, "memory_peak_bytes", &v) && v == NULL, "missing figure is null, and present");
        ok(json_object_array_length(get(root, "signals")) == 2, "two signals");
        is_str(json_object_get_string(get(json_object_array_get_idx(get(root, "signals"), 0), "signal")), "XCPU",
               "first signal XCPU");
        ok(json_object_get_double(get(json_object_array_get_idx(get(root, "signals"), 1), "at_s")) == 7.0002,
           "second signal time");
        is_str(json_object_get_string(get(root, "started")), "2026-11-18T11:06:40.000000Z", "started in UTC ISO 8601");
        json_object_put(root);
        free(text);

        text = NULL;
        ok(leash_report_format(&c, &r, LEASH_FORMAT_KV, &text) == 0 && text, "kv report written");
        ok(strstr(text, "\nreason:wall_time\n") != NULL, "kv reason line");
        ok(strstr(text, "\nexit.code:124\n") != NULL, "kv exit code line");
        ok(strstr(text, "command.2:print(\"a\\\\nb\")\n") != NULL, "kv escapes newline and backslash");
        ok(strstr(text, "memory_peak_bytes") == NULL, "kv omits nulls");
        ok(strstr(text, "\nsignals.1.signal:KILL\n") != NULL, "kv array index");
        free(text);

        text = NULL;
        ok(leash_report_format(&c, &r, LEASH_FORMAT_TEXT, &text) == 0 && strstr(text, "reason:    wall_time (exit 124"),
           "text report");
        free(text);
        text = NULL;
        ok(leash_report_summary(&c, &r, &text) == 0 && text && strstr(text, "wall_time limit 2s reached: sent SIGXCPU"),
           "summary line");
        free(text);
        r.reason = LEASH_REASON_OK;
        text = (char *) 1;
        ok(leash_report_summary(&c, &r, &text) == 0 && text == NULL, "no summary for an ordinary exit");
        return tap_done();
}
