#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# leash ps and stat under systemd, as root and (user-47-ps.sh) as uid 1000: a running
# job, placed where leash run puts it with no --cgroup-parent (the shared leash-jobs.service),
# is listed by `leash ps` with no option, found by `leash stat` by its pid, and the
# placement ps names is the one the job's report names.

. "$(dirname "$0")/lib.sh"

"$LEASH" run -n ps-probe -o "$TMP/bg.json" -- sleep 30 >/dev/null 2>&1 &
BG=$!
wait_for 20 grep -q leash "/proc/$BG/cgroup" 2>/dev/null
job_pid() { pgrep -P "$BG" -x sleep; }
wait_for 20 job_pid >/dev/null
JPID=$(job_pid)
tap_check "the job runs (leash $BG, sleep ${JPID:-none})" test -n "$JPID"
JCG=$(sed -n 's/^0:://p' "/proc/$JPID/cgroup" 2>/dev/null)
echo "# the job's cgroup: $JCG"

"$LEASH" ps >"$TMP/ps.txt" 2>"$TMP/ps.err"
tap_is "$?" 0 "leash ps exits 0 ($(head -1 "$TMP/ps.err"))"
sed 's/^/# ps: /' "$TMP/ps.txt"
tap_check "leash ps lists the job by its name, with its leash and main pids" \
	grep -qE "^ps-probe +$BG +$JPID " "$TMP/ps.txt"
"$LEASH" ps -o json >"$TMP/ps.json" 2>"$TMP/ps.err"
tap_check "leash ps -o json: the job among its jobs" "$PY" -c '
import json, sys
ps = json.load(open(sys.argv[1]))
sys.exit(0 if any(j.get("cgroup", "").endswith("/" + sys.argv[2]) or j.get("name") == sys.argv[2] for j in ps["jobs"]) else 1)' \
	"$TMP/ps.json" "$(basename "$JCG")"
"$LEASH" stat "$JPID" >"$TMP/stat.txt" 2>"$TMP/stat.err"
tap_is "$?" 0 "leash stat PID finds the job ($(head -1 "$TMP/stat.err"))"
kill "$BG"
wait "$BG"
where=$(jget "$TMP/bg.json" placement.path)
tap_check "and its report placed it where ps looked ($where)" grep -qE "^placement: systemd $where " "$TMP/ps.txt"
tap_plan "$_tap_n"
tap_done
