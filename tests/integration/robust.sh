#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Issue 10, defects 4-6: descriptors 0-2 at the edges, report encoding of bytes
# that are not UTF-8 or are control characters, and the messages that lied.
# Each check here failed on the main of before the fix (see the commit).
. "$(dirname "$0")/lib.sh"

# strict_json FILE: the file is UTF-8 (strict) and one JSON document
strict_json() {
        "$PY" -c 'import json, sys; json.loads(open(sys.argv[1], "rb").read().decode("utf-8", "strict"))' "$1" 2>/dev/null
}

# --- 10.4: fds 0-2 closed when leash starts ------------------------------------------
# With fd 2 closed, the report's file used to become "stderr": leash's own
# error line (the command was not found) landed inside the JSON report.
"$LEASH" run --cgroup-parent "$PARENT" -q -o "$TMP/closed.json" -- "$TMP/no-such-command" 2>&-
rc=$?
check "stderr closed: the exit status is still 127 ($rc)" test "$rc" = 127
check "stderr closed: the report is one valid JSON document, no error line in it" strict_json "$TMP/closed.json"
check "stderr closed: the report says not found" test "$(jget "$TMP/closed.json" exit.code)" = 127
# all three closed: the job sees /dev/null, not a file leash opened
"$LEASH" run --cgroup-parent "$PARENT" -q -o "$TMP/c3.json" -- sh -c 'echo job-line; echo job-err >&2' <&- >&- 2>&-
check "fds 0-2 closed: the job's output never reaches the report" strict_json "$TMP/c3.json"
# stdin open but O_PATH: poll() calls it closed (POLLNVAL) where it is not; the
# probe confirms with fcntl, or /dev/null would land on fd 3 and leash refuse
"$PY" -c 'import os, sys
fd = os.open("/", os.O_PATH)
os.dup2(fd, 0)
os.execv(sys.argv[1], sys.argv[1:])' "$LEASH" run --cgroup-parent "$PARENT" -q -o "$TMP/opath.json" -- true
rc=$?
check "stdin an O_PATH descriptor: leash runs the job ($rc)" test "$rc" = 0

# --- 10.5: report encoding ----------------------------------------------------------------
args=(true $'\xff' $'a\e[31mb\r\x01' 'é' $'\xc2\x9b')
run_leash -q -o "$TMP/u.json" -- "${args[@]}"
check "a non-UTF-8 argument: the JSON report is strict UTF-8 and valid JSON" strict_json "$TMP/u.json"
check "the bad byte is U+FFFD, valid text is kept" \
        "$PY" -c 'import json,sys; c=json.load(open(sys.argv[1]))["command"]; sys.exit(c[1:4] != ["\ufffd", "a\x1b[31mb\r\x01", "\u00e9"])' "$TMP/u.json"
check "command_base64 keeps every argument's exact bytes" \
        "$PY" -c 'import json,sys,base64; d=json.load(open(sys.argv[1])); a=[base64.b64decode(x) for x in d["command_base64"]]; sys.exit(a != [b"true", b"\xff", b"a\x1b[31mb\r\x01", "é".encode(), b"\xc2\x9b"])' "$TMP/u.json"
run_leash -q -o "$TMP/a.json" -- true plain
check "command_base64 only when an argument is not UTF-8" test "$(jget "$TMP/a.json" command_base64)" = null
run_leash -q -f kv -o "$TMP/u.kv" -- "${args[@]}"
check "kv: ESC, CR and control bytes escaped (\\x1b, \\r, \\x01)" grep -qxF 'command.2:a\x1b[31mb\r\x01' "$TMP/u.kv"
check "kv: no raw control byte in the file (C0, DEL)" bash -c "! LC_ALL=C grep -q '[[:cntrl:]]' <(tr -d '\n' <'$TMP/u.kv')"
run_leash -q -f text -o "$TMP/u.txt" -- "${args[@]}"
check "text: the command without raw ESC, CR, control bytes or C1 controls (bash's \$'...' quoting)" \
        grep -qxF "command:   true \$'\\xff' \$'a\\x1b[31mb\\x0d\\x01' é \$'\\xc2\\x9b'" "$TMP/u.txt"
eval "set -- $(sed -n 's/^command:   //p' "$TMP/u.txt")"
check "text: the command pasted into bash gives the exact arguments back" \
        test "$(printf '%s\0' "$@" | od -An -tx1)" = "$(printf '%s\0' "${args[@]}" | od -An -tx1)"
check "text: no raw control byte at all" bash -c "! LC_ALL=C grep -q '[[:cntrl:]]' <(tr -d '\n' <'$TMP/u.txt')"
# --- 10.6: messages and small lies ----------------------------------------------------------
run_leash --strict=true -- true
check "--strict=true is accepted (it printed \"(null)\" and failed)" test "$RC" = 0 -a -z "$(grep -F '(null)' <<<"$ERR")"
run_leash --strict=maybe -- true
check "--strict=maybe: one clear line, 125" \
        test "$RC/$ERR" = "125/leash: --strict: 'maybe': expected true or false
Try 'leash --help' for more information."
"$LEASH" check --cgroup-parent >/dev/null 2>"$TMP/e"
rc=$?
check "check --cgroup-parent without a value: 125, says it needs a value (not 'unknown option')" \
        bash -c "[ $rc = 125 ] && grep -q \"option '--cgroup-parent' needs a value\" '$TMP/e'"
run_leash --cgroup-parent /leash-test-not-a-cgroup/x -- true
check "an absolute --cgroup-parent outside the cgroup2 mount is refused, not re-rooted" \
        bash -c "[ $RC = 125 ] && grep -q 'not under the cgroup2 mount' <<<\"\$0\"" "$ERR"
for p in ../memory a/../../memory "$CG2/x/.."; do
        run_leash --cgroup-parent "$p" -- true
        check "--cgroup-parent $p: refused as a path with '..'" \
                bash -c "[ $RC = 125 ] && grep -qF \"'\$1': expected a path without '..'\" <<<\"\$0\"" "$ERR" "$p"
done
nr_open=$(cat /proc/sys/fs/nr_open 2>/dev/null || echo 0)
if [ "$nr_open" -gt 0 ] && [ "$nr_open" -lt 5000000 ]; then
        run_leash --nofile 5000000 -- true
        check "a failed rlimit says which one (RLIMIT_NOFILE = 5000000 (--nofile))" \
                bash -c "[ $RC = 125 ] && grep -qF 'RLIMIT_NOFILE = 5000000 (--nofile)' <<<\"\$0\"" "$ERR"
else
        SKIP_WHY="fs.nr_open is $nr_open here: --nofile 5000000 would not fail"
        skip "a failed rlimit says which one"
fi
for sig in RTMAX-1 RTMAX RTMIN+2 SIGRTMAX-3; do
        run_leash -s "$sig" -- true
        check "-s $sig is accepted" test "$RC" = 0
done
run_leash -s RTMAX-99 -- true
check "-s RTMAX-99 (below RTMIN) is refused" test "$RC" = 125
"$LEASH" check --cgroup-parent "$PARENT/cgroup.procs" >"$TMP/c" 2>&1
rc=$?
check "check --cgroup-parent <a cgroup file>: not 'may create job cgroups: yes'" \
        bash -c "! grep -q 'may create job cgroups: yes' '$TMP/c' && grep -q 'Not a directory' '$TMP/c' && [ $rc = 125 ]"
if [ "$(id -u)" = 0 ] && [ -z "${LEASH_TEST_PARENT:-}" ] && [ -e "$PARENT/cgroup.kill" ]; then
        # leash itself in the root cgroup, asked about the root: it used to probe only
        # the root, which never has cgroup.kill, and said cgroup.kill=no
        bash -c 'echo $$ >"$1/cgroup.procs" && exec "$0" check --cgroup-parent "$1"' "$LEASH" "$CG2" >"$TMP/c" 2>&1
        check "check from the root cgroup: cgroup.kill=yes on a kernel that has it" grep -q 'cgroup.kill=yes' "$TMP/c"
else
        SKIP_WHY="needs root and a kernel with cgroup.kill"
        skip "check from the root cgroup: cgroup.kill"
fi
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
        setpriv --reuid=65534 --regid=65534 --clear-groups "$LEASH" check >"$TMP/c" 2>&1
        rc=$?
        # issue 23: no cgroup is not "nothing can run": jobs run as their process tree
        check "check by a user who has no cgroup: 1, DEGRADED with placement none (not NOTHING CAN RUN)" \
                bash -c "[ $rc = 1 ] && grep -q '^verdict: *DEGRADED' '$TMP/c' && grep -q '^placement: *none' '$TMP/c'"
        # issue 41.8: the host's kernel features are the host's, whoever asks
        # (uid 65534 read cgroup.kill=no ... pressure=no where root read yes);
        # what this user's jobs get is said apart
        "$LEASH" check >"$TMP/croot" 2>&1
        kroot=$(grep '^kernel features:' "$TMP/croot")
        knb=$(grep '^kernel features:' "$TMP/c")
        check "check as uid 65534: the kernel features line is root's ($knb)" test -n "$knb" -a "$knb" = "$kroot"
        if grep -q 'cgroup.kill=yes' <<<"$kroot"; then
                check "...so cgroup.kill=yes there too, where the host has it" grep -q '^kernel features:.*cgroup.kill=yes' "$TMP/c"
        fi
        check "check as uid 65534: says apart that its jobs get none of them" \
                grep -q "^  this user's jobs: none of them (no job cgroup: placement none)" "$TMP/c"
else
        SKIP_WHY="needs root and setpriv to run check as uid 65534"
        skip "check by a user who has no cgroup"
fi
printf '[robust-mine]\nmemory = 1G\n' >"$TMP/mine.ini"
chmod 644 "$TMP/mine.ini"
LEASH_CONFIG_DIR=$TMP/no-config "$LEASH" profiles show robust-mine --profile-file "$TMP/mine.ini" >"$TMP/show" 2>&1
rc=$?
check "profiles show NAME --profile-file P works like show --profile-file P NAME" \
        bash -c "[ $rc = 0 ] && grep -Eq '^memory +1G' '$TMP/show'"
finish
