#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The report: formats, destinations, and figures against ground truths.
. "$(dirname "$0")/lib.sh"

run_leash -o "$TMP/r.json" -- sh -c 'echo hi'
check "JSON report is valid JSON" "$PY" -c "import json,sys; json.load(open('$TMP/r.json'))"
for key in schema leash_version command cgroup started reason exit.code limits usage.wall_time_s \
        usage.cpu_time_s usage.cpu_user_s usage.cpu_system_s usage.memory_peak_bytes usage.memory_peak_basis signals; do
        check "report has $key" "$PY" -c "
import json
v = json.load(open('$TMP/r.json'))
for k in '$key'.split('.'):
    assert k in v, k
    v = v[k]"
done
check "schema is 1" test "$(jget "$TMP/r.json" schema)" = 1
check "job output untouched by the report" test "$OUT" = hi
check "no temporary report file left" bash -c "[ -z \"\$(ls '$TMP' | grep -v '^r.json$' | grep -v '^out$' | grep -v '^err$')\" ]"
check "report cgroup names the job cgroup" bash -c "[[ '$(jget "$TMP/r.json" cgroup)' == '$PARENT/sh@'* ]]"
check "main process figures present" test "$(jget "$TMP/r.json" usage.main_process.maxrss_bytes)" != null

# absent kernel files are null, never invented
if has_controller memory; then
        check "memory.peak basis with the controller" test "$(jget "$TMP/r.json" usage.memory_peak_basis)" = memory.peak
else
        check "without a memory controller: basis is the main rusage" test "$(jget "$TMP/r.json" usage.memory_peak_basis)" = rusage_maxrss_main
        check "without a memory controller: oom_kills is null" test "$(jget "$TMP/r.json" usage.oom_kills)" = null
fi
if has_controller pids; then :; else
        check "without a pids controller: pids_peak is null" test "$(jget "$TMP/r.json" usage.pids_peak)" = null
fi

# a report replaces an existing file atomically
echo old >"$TMP/r2.json"
run_leash -o "$TMP/r2.json" -- true
check "existing report file replaced" "$PY" -c "import json; json.load(open('$TMP/r2.json'))"

run_leash -f kv -o "$TMP/r.kv" -- sh -c 'exit 2'
check "kv: reason line" grep -qx 'reason:exit' "$TMP/r.kv"
check "kv: exit code line" grep -qx 'exit.code:2' "$TMP/r.kv"
check "kv: no null values" bash -c "! grep -q ':null$' '$TMP/r.kv'"
run_leash -f text -o "$TMP/r.txt" -- true
check "text report" grep -q '^reason: *ok (exit 0)' "$TMP/r.txt"
# issue 41.3: titled, each limit with its value and enforcer, the command
# shell-quoted so that pasting it runs the same
run_leash -f text -o "$TMP/r.txt" -n titled -w 5s -t 1m30s -m 512M -c 1.5 -P 100 --nofile 64 -- sh -c 'echo "a b"; echo "it'\''s"'
sed 's/^/# /' "$TMP/r.txt"
check "text: titled with the job's name" test "$(head -1 "$TMP/r.txt")" = "leash report: titled"
check "text: wall_time 5s by leash" grep -qx 'limit: *wall_time 5s by leash' "$TMP/r.txt"
check "text: cpu_time 90s, with its enforcer" grep -qE '^limit: +cpu_time 90s by [a-z]' "$TMP/r.txt"
check "text: memory 512M, cpus 1.5 cores, pids 100, nofile 64, each by something" \
        test "$(grep -cE '^limit: +(memory 512M|cpus 1\.5 cores|pids 100|nofile 64) by [a-z]' "$TMP/r.txt")" = 4
check "text: the command shell-quoted" grep -qxF "command:   sh -c 'echo \"a b\"; echo \"it'\\''s\"'" "$TMP/r.txt"
check "text: pasted into a shell it prints what the job printed" \
        test "$(eval "$(sed -n 's/^command:   //p' "$TMP/r.txt")")" = "$(printf 'a b\nit'\''s')"
run_leash -f text -o "$TMP/r.txt" -- /bin/true
check "text: without --name, titled with the command's base name" test "$(head -1 "$TMP/r.txt")" = "leash report: true"

"$LEASH" run --cgroup-parent "$PARENT" -o fd:3 -- true 3>"$TMP/fd3.json"
check "report to fd:3" "$PY" -c "import json; assert json.load(open('$TMP/fd3.json'))['reason'] == 'ok'"

# /dev/stdout means the descriptor: appended to what the job wrote, and the
# /dev/stdout symlink itself is never replaced
# (what /dev/stdout and /dev/stderr are on this machine is recorded first: a
# container may make them something other than udev's symlinks)
dev_was=$(stat -c '%F %N' /dev/stdout /dev/stderr 2>&1)
"$LEASH" run --cgroup-parent "$PARENT" -f kv -o /dev/stdout -- echo job-output >"$TMP/stdout.txt"
check "report to /dev/stdout follows the job's output" bash -c "head -1 '$TMP/stdout.txt' | grep -qx job-output && grep -qx 'reason:ok' '$TMP/stdout.txt'"
"$LEASH" run --cgroup-parent "$PARENT" -f kv -o /dev/stderr -- true 2>"$TMP/stderr.txt"
check "report to /dev/stderr" grep -qx 'reason:ok' "$TMP/stderr.txt"
check "/dev/stdout and /dev/stderr are what they were ($(head -1 <<<"$dev_was"))" test "$(stat -c '%F %N' /dev/stdout /dev/stderr 2>&1)" = "$dev_was"

# a symlink is followed: its target is replaced, the link stays
echo old >"$TMP/target.json"
ln -s "$TMP/target.json" "$TMP/link.json"
run_leash -o "$TMP/link.json" -- true
check "report through a symlink: the link stays a link" test -L "$TMP/link.json"
check "report through a symlink: the target holds the report" "$PY" -c "import json; json.load(open('$TMP/target.json'))"

# without --report, a limit kill gets one summary line on stderr; -q silences it
run_leash -w 0.1 -g 0 -- sleep 5
check "summary line on stderr" bash -c "[[ \"$ERR\" == 'leash: wall_time limit 100ms reached'* ]]"
run_leash -q -w 0.1 -g 0 -- sleep 5
check "-q: no summary" test -z "$ERR"
run_leash -- true
check "no summary for an ordinary run" test -z "$ERR"

# CPU time against a ground truth: 100 children burning ~4 ms each, counted
# by a subreaper inside the job: getrusage of its children plus its own
run_leash -o "$TMP/r.json" -- "$HELPERS/lh-children" 100 4
truth=$(sed -n 's/^tree_cpu_s=//p' <<<"$OUT")
got=$(jget "$TMP/r.json" usage.cpu_time_s)
diag "cpu_time_s=$got ground truth=$truth"
check "cpu_time_s matches the ground truth within 5%" fcmp "abs($got - $truth) <= 0.05 * $truth + 0.002"

# memory figure against a ground truth: 64 MiB touched
run_leash -o "$TMP/r.json" -- "$HELPERS/lh-alloc" 64
peak=$(jget "$TMP/r.json" usage.memory_peak_bytes)
check "memory_peak_bytes >= 64 MiB touched" fcmp "$peak >= 64 * 1048576"
check "memory_peak_bytes < 64 MiB + 16 MiB" fcmp "$peak < 80 * 1048576"
finish
