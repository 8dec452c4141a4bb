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
check "text: the command without raw ESC, CR, control bytes or C1 controls" \
        grep -qxF 'command:   true \xff a\x1b[31mb\r\x01 é \xc2\x9b' "$TMP/u.txt"
check "text: no raw control byte at all" bash -c "! LC_ALL=C grep -q '[[:cntrl:]]' <(tr -d '\n' <'$TMP/u.txt')"
finish
