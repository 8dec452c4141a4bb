#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Issue 9.2: the report destination. Every problem with it is found before the
# job starts (125, the job never runs, nothing created); spellings of one
# descriptor behave alike; and a root leash never writes through what a
# --user nobody job planted in a directory it can write. Each attack has a
# control run showing that the planted thing would work on a naive writer.
. "$(dirname "$0")/lib.sh"

# refused DESCRIPTION EXPECTED_TEXT ARGS...: 125, one line naming it, the job
# (touch $TMP/ran) never ran, no cgroup made
refused() {
        local what=$1 expect=$2
        shift 2
        rm -f "$TMP/ran"
        run_leash "$@" -- touch "$TMP/ran"
        if [ "$RC" = 125 ] && [ ! -e "$TMP/ran" ] && [[ "$ERR" == *"$expect"* ]] &&
                [ "$(grep -c '^leash: ' <<<"$ERR")" = 1 ] && no_leftover_cgroups; then
                ok "$what"
        else
                not_ok "$what (rc=$RC, ran=$([ -e "$TMP/ran" ] && echo yes || echo no), stderr: $ERR)"
        fi
}

# --- spellings of one descriptor ----------------------------------------------------------
for spelling in /dev/stdout /dev/./stdout /dev//stdout /proc/self/fd/1 /proc/thread-self/fd/1 /dev/fd/1 fd:1; do
        "$LEASH" run --cgroup-parent "$PARENT" -f kv -o "$spelling" -- echo job-output >"$TMP/s.txt" 2>"$TMP/s.err"
        check "-o $spelling: the report follows the job's output on stdout" \
                bash -c "head -1 '$TMP/s.txt' | grep -qx job-output && grep -qx 'reason:ok' '$TMP/s.txt'"
done
"$LEASH" run --cgroup-parent "$PARENT" -f kv -o /dev/.//stderr -- true 2>"$TMP/s.err"
check "-o /dev/.//stderr is descriptor 2" grep -qx 'reason:ok' "$TMP/s.err"

# --- problems found before the job starts -------------------------------------------------
echo x >"$TMP/ro"
for spelling in /dev/stdout /dev/./stdout fd:1; do
        rm -f "$TMP/ran"
        "$LEASH" run --cgroup-parent "$PARENT" -o $spelling -- touch "$TMP/ran" 1<"$TMP/ro" 2>"$TMP/err"
        rc=$?
        check "-o $spelling with stdout open read-only: 125 before the job, says so" \
                bash -c "[ $rc = 125 ] && [ ! -e '$TMP/ran' ] && grep -q 'descriptor 1 is open read-only' '$TMP/err'"
done
mkfifo "$TMP/fifo"
t0=$SECONDS
refused "a FIFO with no reader: 125 at once, not a hang" "no one reads it" -o "$TMP/fifo"
check "... within 10 s (it used to block in open)" test $((SECONDS - t0)) -lt 10
refused "/proc/version: 125 before the job" "/proc/version" -o /proc/version
refused "a directory: 125" "is a directory" -o "$TMP"
refused "a path ending in /.: 125" "names a directory" -o "$TMP/."
refused "a missing directory: 125" "no such directory" -o "$TMP/none/r.json"
refused "a file in a directory nobody may create files in (sysfs)" "/sys/leash-report-test.json" \
        -o /sys/leash-report-test.json
check "... and nothing was created there" test ! -e /sys/leash-report-test.json
# a FIFO with a reader works, and gets the whole report
# (the reader is this shell, holding the FIFO open before leash looks at it;
# the report is smaller than the pipe's buffer)
exec 7<>"$TMP/fifo"
run_leash -f kv -o "$TMP/fifo" -- true
timeout 2 cat <&7 >"$TMP/fifo.out"
exec 7<&-
check "a FIFO with a reader gets the report" grep -qx 'reason:ok' "$TMP/fifo.out"

# issue 22.12: the report's file is also leash's stdout (`-o out.txt >out.txt`):
# the report, renamed over it, would replace the job's output; refused at once
: >"$TMP/same.txt"
"$LEASH" run --cgroup-parent "$PARENT" -o "$TMP/same.txt" -- sh -c 'echo job-output' >"$TMP/same.txt" 2>"$TMP/err"
rc=$?
check "-o out.txt >out.txt: refused (125) before the job runs" test "$rc/$(cat "$TMP/same.txt")" = 125/
check "... saying why" grep -q "is also leash's standard output" "$TMP/err"
"$LEASH" run --cgroup-parent "$PARENT" -o "$TMP/same.json" -- sh -c 'echo job-output' >"$TMP/same.txt" 2>"$TMP/err"
check "... another name: the job's output and the report, each in its file" \
        test "$(cat "$TMP/same.txt")/$(jget "$TMP/same.json" reason)" = job-output/ok

# issue 38.13: the report's file is also the job's standard input (`-o in.txt
# <in.txt`, `-o /dev/stdin <in.txt`): before, 0 and the input replaced by the
# report (a new inode); refused at once, the input untouched. The control:
# the same run with another name reads the input and writes the report.
stdin_refused() { # WHAT ARGS...: 125 before the job, one line naming the path, in.txt untouched
        local what=$1
        shift
        echo job-input >"$TMP/in.txt"
        local ino=$(stat -c %i "$TMP/in.txt")
        rm -f "$TMP/ran"
        "$LEASH" run --cgroup-parent "$PARENT" "$@" -- sh -c "touch '$TMP/ran'; cat >/dev/null" \
                <"$TMP/in.txt" >/dev/null 2>"$TMP/err"
        local rc=$?
        local seen="rc=$rc ran=$([ -e "$TMP/ran" ] && echo yes || echo no) in=$(cat "$TMP/in.txt")"
        seen="$seen ino=$(stat -c %i "$TMP/in.txt")/$ino err=$(cat "$TMP/err")"
        if [ "$rc" = 125 ] && [ ! -e "$TMP/ran" ] && [ "$(cat "$TMP/in.txt")" = job-input ] &&
                [ "$(stat -c %i "$TMP/in.txt")" = "$ino" ] && [ "$(grep -c '^leash: ' "$TMP/err")" = 1 ] &&
                grep -qF "'$2' is also the job's standard input" "$TMP/err" && no_leftover_cgroups &&
                [ -z "$(find "$TMP" -maxdepth 1 -name '.leash-report-*')" ]; then
                ok "$what: refused, the input untouched"
        else
                not_ok "$what: refused, the input untouched ($seen)"
        fi
}
stdin_refused "-o in.txt <in.txt" -o "$TMP/in.txt"
stdin_refused "-o in.txt <in.txt, kv" -o "$TMP/in.txt" -f kv
stdin_refused "-o /dev/stdin <in.txt" -o /dev/stdin
stdin_refused "-o fd:0 <in.txt" -o fd:0
stdin_refused "--series in.txt <in.txt" --series "$TMP/in.txt" --sample 1s
exec 8<>"$TMP/in.txt"
stdin_refused "-o fd:8, the same file as stdin" -o fd:8
exec 8>&-
mkfifo "$TMP/in.fifo"
exec 8<>"$TMP/in.fifo" # a writer, so that opening it to read does not wait
rm -f "$TMP/ran"
"$LEASH" run --cgroup-parent "$PARENT" -o "$TMP/in.fifo" -- touch "$TMP/ran" <"$TMP/in.fifo" 2>"$TMP/err"
rc=$?
check "-o in.fifo <in.fifo: refused (125) before the job, says why ($rc)" \
        bash -c '[ "$1" = 125 ] && [ ! -e "$2/ran" ] && grep -q "is also the job.s standard input" "$2/err"' - $rc "$TMP"
exec 8>&-
rm -f "$TMP/in.fifo"
echo job-input >"$TMP/in.txt"
"$LEASH" run --cgroup-parent "$PARENT" -o "$TMP/in.json" -- cat <"$TMP/in.txt" >"$TMP/in.out" 2>"$TMP/err"
check "control: another name: the job reads its input, the report is written ($?, $(cat "$TMP/in.out"))" \
        test "$(cat "$TMP/in.out")/$(jget "$TMP/in.json" reason)/$(cat "$TMP/in.txt")" = job-input/ok/job-input

# --- a hostile job as --user nobody (root only) --------------------------------------------
if [ "$(id -u)" != 0 ]; then
        SKIP_WHY="needs root (the attacks are on a root leash)"
        skip "symlink and temporary-name attacks"
        finish
fi
if ! getent passwd nobody >/dev/null || ! command -v setpriv >/dev/null; then
        SKIP_WHY="no user nobody or no setpriv on this machine"
        skip "symlink and temporary-name attacks"
        finish
fi
# the job's directories in one nobody can reach ($TMP may sit in a package
# build's 0700 directory)
if ! nobody_dir; then
        skip "symlink and temporary-name attacks"
        finish
fi
nob=$(id -u nobody)
BOX=$NOBODY_DIR/box # a shared, root-owned directory every job may write (like /tmp)
mkdir -m 1777 "$BOX"
SECRET=$NOBODY_DIR/secret
reset_secret() { rm -f "$SECRET"; echo secret >"$SECRET"; chmod 600 "$SECRET"; }
secret_intact() { [ "$(cat "$SECRET")" = secret ] && [ "$(stat -c %a "$SECRET")" = 600 ]; }

# control: the job can plant a symlink where the report will go, and a naive
# root writer (what leash did: resolve the link, write its target) overwrites
# the target through it
reset_secret
run_leash --user nobody -- ln -s "$SECRET" "$BOX/m.json"
check "control: the nobody job planted a symlink it owns" test -L "$BOX/m.json" -a "$(stat -c %u "$BOX/m.json")" = "$nob"
printf '{"naive": true}\n' >"$(realpath "$BOX/m.json")"
check "control: a naive root writer overwrites the target through it" test "$(cat "$SECRET")" = '{"naive": true}'
reset_secret
refused "-o BOX/m.json with the job's symlink there: refused, names the owner" \
        "'m.json' is a symlink owned by uid $nob" -o "$BOX/m.json"
check "... the target is untouched (content and mode 0600)" secret_intact
rm -f "$BOX/m.json"

# planted while the job runs (after leash checked the path): replaced, never followed
run_leash --user nobody -o "$BOX/m2.json" -- ln -s "$SECRET" "$BOX/m2.json"
check "symlink planted during the job: leash exits 0" test "$RC" = 0
check "... the target is untouched" secret_intact
check "... the report replaced the symlink: a regular root-owned file" \
        test -f "$BOX/m2.json" -a ! -L "$BOX/m2.json" -a "$(stat -c %u "$BOX/m2.json")" = 0
check "... holding the report" test "$(jget "$BOX/m2.json" reason)" = ok

# a shared --report-dir: the report's name has leash's pid, which a job can
# know in advance (here the shell that execs leash plants it as nobody)
DIR=$NOBODY_DIR/reports
mkdir -m 1777 "$DIR"
plant_and_run() { # plant_and_run CMD...: plant DIR/job-PID.json -> SECRET as nobody, then exec CMD as PID
        bash -c 'setpriv --reuid=nobody --regid=nogroup --clear-groups ln -s "$0" "$1/job-$$.json" || exit 99; shift; exec "$@"' \
                "$SECRET" "$DIR" "$@"
}
plant_and_run bash -c 'echo "{}" >"$(realpath "$0/job-$$.json")"' "$DIR"
check "control: the symlink planted at --report-dir's name redirects a naive root writer" test "$(cat "$SECRET")" = "{}"
reset_secret
rm -f "$DIR"/*
plant_and_run "$LEASH" run --cgroup-parent "$PARENT" --report-dir "$DIR" -n job -- true >"$TMP/out" 2>"$TMP/err"
rc=$?
check "--report-dir with the job's symlink at the name: refused (125)" test "$rc" = 125
check "... saying whose symlink it is" grep -q "symlink owned by uid $nob" "$TMP/err"
check "... the target is untouched" secret_intact

# the temporary name: leash used <report>.leash-<its pid>; a job that created
# that name first made leash lose the report and the job's status (125)
run_leash --user nobody -o "$BOX/m3.json" -- sh -c 'touch "$0.leash-$PPID"' "$BOX/m3.json"
check "control: the job created the old predictable temporary name" \
        bash -c "ls '$BOX' | grep -q '^m3.json.leash-'"
check "a job creating the old temporary name does not make leash lose the report (exit 0)" test "$RC" = 0
check "... the report is there" test "$(jget "$BOX/m3.json" reason)" = ok
check "no temporary file is left in the directory" bash -c "! ls -A '$BOX' | grep -q '^.leash-report-'"

# replacing a report (the names are exchanged, then the old file unlinked:
# no rename-over flush): the new one in place, the old one gone, its mode kept
run_leash -o "$BOX/again.json" -- sh -c 'exit 3'
chmod 640 "$BOX/again.json"
ino_old=$(stat -c %i "$BOX/again.json")
run_leash -o "$BOX/again.json" -- sh -c 'exit 4'
check "a report replaced by the next run holds the new run (exit 4)" \
        test "$RC" = 4 -a "$(jget "$BOX/again.json" exit.code)" = 4
check "... is a new file with one link and the old one's mode (640)" \
        test "$(stat -c '%i %h %a' "$BOX/again.json")" = "$(stat -c %i "$BOX/again.json") 1 640" -a "$(stat -c %i "$BOX/again.json")" != "$ino_old"
check "... and leaves no temporary name behind" bash -c "! ls -A '$BOX' | grep -q '^.leash-report-'"

# as root, another user's directory or file is refused
mkdir "$TMP/nobodys" && chown nobody "$TMP/nobodys"
refused "a directory owned by nobody: refused as root" "its directory is owned by uid $nob" -o "$TMP/nobodys/r.json"
touch "$BOX/theirs.json" && chown nobody "$BOX/theirs.json"
refused "a file owned by nobody: refused as root" "is owned by uid $nob" -o "$BOX/theirs.json"
# issue 22.11: a FIFO the job planted at the report's name, with the job's
# reader on it, gets nothing (it got the whole report, arguments included)
run_leash --user nobody -- mkfifo "$BOX/f.json"
check "control: the nobody job planted a FIFO it owns" test -p "$BOX/f.json" -a "$(stat -c %u "$BOX/f.json")" = "$nob"
exec 8<>"$BOX/f.json"
refused "-o BOX/f.json, the job's FIFO there with a reader: refused, names the owner" \
        "is a FIFO owned by uid $nob" -o "$BOX/f.json"
timeout 1 cat <&8 >"$TMP/stolen"
check "... its reader got nothing" test ! -s "$TMP/stolen"
exec 8<&-
rm -f "$BOX/f.json"
# a symlink root owns is followed (the target is written, the link stays)
ln -s "$TMP/rootsym-target.json" "$BOX/rootsym.json"
run_leash -o "$BOX/rootsym.json" -- true
check "a symlink root owns is followed: target written, link kept" \
        test "$RC/$(jget "$TMP/rootsym-target.json" reason)" = 0/ok -a -L "$BOX/rootsym.json"
finish
