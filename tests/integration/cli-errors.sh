#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every bad input: exit 125, one clear line naming the option and the value,
# and nothing created (no cgroup, no process, no report file).
. "$(dirname "$0")/lib.sh"

bad() { # bad DESCRIPTION EXPECTED_TEXT ARGS...
        local what=$1 expect=$2
        shift 2
        local before
        before=$(find "$PARENT" -mindepth 1 -type d | wc -l)
        run_leash "$@"
        local lines
        lines=$(printf '%s\n' "$ERR" | grep -c '^leash: ')
        if [ "$RC" = 125 ] && [ "$lines" = 1 ] && [[ "$ERR" == *"$expect"* ]] && [ -z "$OUT" ] &&
                [ "$(find "$PARENT" -mindepth 1 -type d | wc -l)" = "$before" ]; then
                ok "$what"
        else
                not_ok "$what (rc=$RC, stderr: $ERR)"
        fi
}

bad "memory with unknown unit" "--memory: '12Q'" --memory 12Q -- true
bad "memory zero" "--memory: '0'" --memory 0 -- true
bad "memory negative" "--memory: '-5M'" -m -5M -- true
bad "memory overflow" "--memory: '99999999999T'" --memory 99999999999T -- true
bad "pids zero" "--pids: '0'" --pids 0 -- true
bad "pids not a number" "--pids: 'many'" -P many -- true
bad "cpus below 0.01" "--cpus: '0.001'" --cpus 0.001 -- true
bad "cpus garbage" "--cpus: '1,5'" -c 1,5 -- true
bad "cpu-time zero" "--cpu-time: '0'" --cpu-time 0 -- true
bad "wall-time bad unit" "--wall-time: '5x'" --wall-time 5x -- true
bad "wall-time overflow" "--wall-time: '99999999999h'" -w 99999999999h -- true
bad "grace negative" "--grace: '-1s'" --grace=-1s -- true
# issue 10.1: values that fit in 64 bits but overflow deadline arithmetic or
# equal a sentinel (LEASH_UNSET = 2^64 - 2) are refused with the bound
big="expected a duration of at most 3650d"
bad "wall-time 18446744073s (killed the job after 4 ms)" "--wall-time: '18446744073s': $big" -w 18446744073s -- true
bad "grace 18446744073s (SIGKILL 0.2 ms after the soft signal)" "--grace: '18446744073s': $big" -g 18446744073s -- true
bad "cpu-time 18446744073s (leash spun)" "--cpu-time: '18446744073s': $big" -t 18446744073s -- true
bad "wall-time equal to the unset sentinel" "--wall-time: '18446744073709551614ns': $big" -w 18446744073709551614ns -- true
bad "wall-time 3651d" "--wall-time: '3651d'" -w 3651d -- true
bad "memory equal to the unset sentinel" "--memory: '18446744073709551614': expected a size of at most 1048576T" \
        -m 18446744073709551614 -- true
bad "pids equal to the unset sentinel" "--pids: '18446744073709551614': expected a count of at most 2147483647" \
        -P 18446744073709551614 -- true
bad "pids above the kernel's pid limit" "--pids: '5000000': expected at most 4194304" -P 5000000 -- true
bad "nofile 2^31" "--nofile: '2147483648'" --nofile 2147483648 -- true
run_leash -q -w 3650d -g 3650d -o "$TMP/big.json" -- true
check "the largest durations are accepted and reported (wall_time 315360000 s)" \
        test "$RC/$(jget "$TMP/big.json" limits.wall_time.value)" = 0/315360000.0
bad "unknown signal" "--signal: 'SIGFOO'" --signal SIGFOO -- true
bad "KILL as soft signal" "--signal: 'KILL'" -s KILL -- true
bad "bad format" "--format: 'xml'" -f xml -- true
bad "name with slash" "--name: 'a/b'" --name a/b -- true
bad "name dot dot" "--name: '..'" -n .. -- true
bad "name too long" "--name: '$(printf 'a%.0s' {1..65})'" -n "$(printf 'a%.0s' {1..65})" -- true
bad "unknown option" "unknown option '--frobnicate'" --frobnicate -- true
bad "missing value" "option '--memory' needs a value" --memory
bad "no command" "no command given" --wall-time 1s
bad "nofile zero" "--nofile: '0'" --nofile 0 -- true
bad "fsize garbage" "--fsize: '1.5'" --fsize 1.5 -- true
bad "report into a missing directory" "--report" -o "$TMP/no/such/dir/r.json" -- true
bad "report is a directory" "is a directory" -o "$TMP" -- true
bad "report fd not open" "descriptor 57 is not open" -o fd:57 -- true

# an unwritable report path is found before the job starts: the job never runs
run_leash -o "$TMP/no/such/r.json" -- touch "$TMP/ran"
check "job not started when the report path is bad" test ! -e "$TMP/ran"

"$LEASH" >/dev/null 2>"$TMP/e"; rc=$?
check "no subcommand: 125" test "$rc" = 125
"$LEASH" frob >/dev/null 2>"$TMP/e"; rc=$?
check "unknown subcommand: 125 and says so" grep -q "unknown subcommand 'frob'" "$TMP/e"
"$LEASH" --help >"$TMP/h" 2>&1; rc=$?
check "--help to stdout, exit 0, lists every option" bash -c "[ $rc = 0 ] && grep -q -- '--cpu-time DURATION' '$TMP/h' && grep -q -- '--strict' '$TMP/h'"
"$LEASH" --version >"$TMP/v"; rc=$?
check "--version" bash -c "[ $rc = 0 ] && grep -q '^leash [0-9]' '$TMP/v'"
check "--version names the parts built and the linkage" \
        grep -Eq '^built: seccomp=(yes|no) caps=(yes|no) python=(yes|no) slurm=(yes|no); binary (static-pie|dynamic)$' "$TMP/v"
# the linkage it claims is the binary's own (the ELF interpreter: none when static)
if command -v readelf >/dev/null; then
        if readelf -l "$LEASH" | grep -q 'Requesting program interpreter'; then link=dynamic; else link=static-pie; fi
        check "--version says the binary is $link, as readelf shows" grep -q "; binary $link\$" "$TMP/v"
else
        SKIP_WHY="no readelf (binutils)"
        skip "--version's linkage against readelf"
fi
if [ -e "$(dirname "$0")/../../.git" ] && command -v git >/dev/null; then
        rev=$(git -C "$(dirname "$0")/../.." rev-parse --short=12 HEAD)
        check "--version names the git revision ($rev)" grep -q "^revision: git $rev" "$TMP/v"
else
        SKIP_WHY="not a build from a git checkout"
        skip "--version names the git revision"
fi

# options after the command belong to the command
run_leash -- echo --memory 12Q
check "options after the command are the command's" test "$RC" = 0 -a "$OUT" = "--memory 12Q"
run_leash echo -n hi
check "no -- needed before a command" test "$RC" = 0 -a "$OUT" = "hi"

# --strict refuses before anything exists when a limit cannot be enforced by cgroup
if has_controller memory; then
        SKIP_WHY="the memory controller is available here: --strict would not refuse"
        ok "strict refusal (n/a here: memory controller present) # SKIP"
else
        bad "strict refuses an unenforceable memory limit" "--strict" --strict --memory 64M -- true
fi
finish
