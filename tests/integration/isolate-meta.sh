#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# -f isolate (issue 41.6): a judge built on isolate(1) reads leash's report as
# isolate's meta file. Five programs as a contest judge runs them (ok, TLE,
# MLE, RE, output limit), under isolate's conventions (a CPU time limit with
# a wall time well above it, a memory limit, a file size limit), give the
# meta lines such a judge expects, and a verdict function written against
# isolate's documented keys alone (isolate.1, META-FILES) gives the verdict
# each program earned. Where memory is only a per-process RLIMIT_AS (no
# memory controller, as with isolate without --cg), the MLE is said in
# message; with a controller, by cg-oom-killed as isolate --cg says it.
. "$(dirname "$0")/lib.sh"

# isolate's keys (isolate.1, META-FILES): nothing else may appear
KEYS='cg-mem cg-oom-killed csw-forced csw-voluntary exitcode exitsig killed max-rss message status time time-wall'

# meta PROGRAM...: leash run -f isolate -o $TMP/meta with a judge's limits
meta() {
        rm -f "$TMP/meta"
        run_leash -q -f isolate -o "$TMP/meta" --cpu-time 1s --wall-time 20s --grace 0.2 --memory 64M \
                --fsize 1M "$@"
        sed 's/^/#   /' "$TMP/meta"
}
key() { sed -n "s/^$1://p" "$TMP/meta"; }
# a judge's verdict from isolate's keys only (as CMS and others read them)
verdict() {
        local st ex sig
        st=$(key status) ex=$(key exitcode) sig=$(key exitsig)
        if [ "$st" = TO ]; then echo TLE
        elif [ -n "$(key cg-oom-killed)" ]; then echo MLE
        elif [ "$sig" = 25 ]; then echo OLE # SIGXFSZ: the file size limit
        elif [ "$st" = RE ] || [ "$st" = SG ]; then echo RE
        elif [ "$st" = XX ]; then echo XX
        elif [ "$ex" = 0 ]; then echo OK
        else echo "?"
        fi
}
well_formed() { # every line key:value, every key isolate's, time and time-wall there
        local k
        while IFS= read -r line; do
                [[ $line =~ ^([a-z-]+):(.*)$ ]] || return 1
                k=${BASH_REMATCH[1]}
                [[ " $KEYS " == *" $k "* ]] || { echo "# not an isolate key: $k"; return 1; }
        done <"$TMP/meta"
        [[ $(key time) =~ ^[0-9]+\.[0-9]{3}$ ]] && [[ $(key time-wall) =~ ^[0-9]+\.[0-9]{3}$ ]]
}

diag "ok"
meta -- true
check "ok: exit 0" test "$RC" = 0
check "ok: the meta file is isolate's (key:value, its keys only, time and time-wall as N.NNN)" well_formed
check "ok: exitcode:0, no status, no message, not killed" \
        test "$(key exitcode)/$(key status)/$(key message)/$(key killed)" = "0///"
check "ok: max-rss in KiB, csw-voluntary and csw-forced" \
        bash -c "[[ '$(key max-rss)' =~ ^[1-9][0-9]*$ ]] && [[ '$(key csw-voluntary)' =~ ^[0-9]+$ ]] && [[ '$(key csw-forced)' =~ ^[0-9]+$ ]]"
check "ok: the judge says OK" test "$(verdict)" = OK

diag "TLE: spins past --cpu-time 1s"
meta -- "$HELPERS/lh-spin" inf
check "TLE: leash exits 124" test "$RC" = 124
check "TLE: well formed" well_formed
check "TLE: status:TO, message 'Time limit exceeded', killed:1" \
        test "$(key status)/$(key message)/$(key killed)" = "TO/Time limit exceeded/1"
check "TLE: time at least the limit ($(key time))" fcmp "$(key time) >= 1.0"
check "TLE: neither exitcode nor exitsig (isolate says killed)" test -z "$(key exitcode)$(key exitsig)"
check "TLE: the judge says TLE" test "$(verdict)" = TLE

diag "MLE: allocates 200 MiB under --memory 64M"
meta -- "$HELPERS/lh-alloc" 200
check "MLE: well formed" well_formed
if has_controller memory; then
        check "MLE: cg-oom-killed:1, as isolate --cg says it" test "$(key cg-oom-killed)" = 1
        check "MLE: cg-mem in KiB, near the limit ($(key cg-mem))" fcmp "60 * 1024 <= $(key cg-mem) <= 64 * 1024 + 64"
        check "MLE: the judge says MLE" test "$(verdict)" = MLE
else
        # RLIMIT_AS, as isolate's --mem: the allocation fails, the program
        # ends as it chooses; the message says why (isolate's does not)
        check "MLE without a memory controller: status RE or SG ($(key status))" \
                bash -c "[ '$(key status)' = RE ] || [ '$(key status)' = SG ]"
        check "MLE without a memory controller: the message says memory is a per-process RLIMIT_AS ($(key message))" \
                bash -c "grep -q 'memory is limited per process by RLIMIT_AS (64.0 MiB) here' <<<'$(key message)'"
        check "MLE without a memory controller: no cg-oom-killed or cg-mem (no cgroup said it)" \
                test -z "$(key cg-oom-killed)$(key cg-mem)"
        check "MLE without a memory controller: the judge says RE, as with isolate --mem" test "$(verdict)" = RE
fi

diag "RE: exits 3"
meta -- sh -c 'exit 3'
check "RE: well formed" well_formed
# (the message goes on with leash's memory hint: --memory is a per-process
# RLIMIT_AS where there is no controller; not for machines, as isolate says)
check "RE: exitcode:3, status:RE, message 'Exited with error status 3...', not killed" \
        test "$(key exitcode)/$(key status)/$(key message | cut -c1-26)/$(key killed)" = "3/RE/Exited with error status 3/"
check "RE: the judge says RE" test "$(verdict)" = RE
meta -- sh -c 'kill -SEGV $$'
check "RE by a signal: exitsig:11, status:SG, 'Caught fatal signal 11...'" \
        test "$(key exitsig)/$(key status)/$(key message | cut -c1-22)" = "11/SG/Caught fatal signal 11"

diag "output limit: writes 3 MB under --fsize 1M"
meta -- sh -c "exec head -c 3000000 /dev/zero >'$TMP/big'"
check "OLE: well formed" well_formed
check "OLE: exitsig:25 (SIGXFSZ), status:SG" test "$(key exitsig)/$(key status)" = "25/SG"
check "OLE: the file stopped at the limit ($(stat -c %s "$TMP/big"))" test "$(stat -c %s "$TMP/big")" = 1048576
check "OLE: the judge says OLE" test "$(verdict)" = OLE

diag "leash could not run it"
meta -- "$TMP/no-such-program"
check "not found: status:XX, a message, exit 127" \
        bash -c "[ '$(key status)' = XX ] && [ -n '$(key message)' ] && [ $RC = 127 ]"
check "control: -f json for the same run is no meta file" \
        bash -c "'$LEASH' run -q -f json -o '$TMP/j' --cgroup-parent '$PARENT' -- true && ! grep -q '^status:' '$TMP/j' && grep -q '\"reason\"' '$TMP/j'"
rm -f "$TMP/big"
finish
