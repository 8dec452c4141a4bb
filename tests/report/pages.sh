#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Issue 39 item 3: the pages say what the JSON says. Real jobs are run (no
# fixture written by hand), each report is rendered as text, HTML and
# Markdown, and each page's statements are checked against the JSON: who
# ended the job (reason, the signal leash sent and when), and how each limit
# was enforced (limits.*.enforced_by). Before this test, the same reports
# read "the kernel's OOM killer ended it" and "memory 100 MiB — asked, not
# enforced" for --limit memory=100M --sample 100ms (a SIGXCPU leash sent,
# oom_kills null), "(none asked for)" under --limit procs=3 and --limit
# disk=, "Killed by SIGXFSZ (a signal leash did not send)" for --fsize, and
# an RLIMIT_AS failure without the hint stderr gives.
. "$LEASH_SRCDIR/tests/integration/lib.sh"

# render NAME: $TMP/NAME.json as text, HTML and Markdown, the three pages
# with their markup taken out into $TMP/NAME.txt, .html.txt, .md.txt
render() {
        "$LEASH" report --text "$TMP/$1.json" >"$TMP/$1.txt" 2>"$TMP/$1.rerr"
        "$LEASH" report -o "$TMP/$1.html" "$TMP/$1.json" 2>>"$TMP/$1.rerr"
        sed -e 's/<[^>]*>/ /g' -e 's/&quot;/"/g' -e 's/&amp;/\&/g' "$TMP/$1.html" >"$TMP/$1.html.txt"
        mkdir -p "$TMP/md-$1"
        "$LEASH" report --markdown -o "$TMP/md-$1/$1.md" "$TMP/$1.json" 2>>"$TMP/$1.rerr"
        sed -e 's/\\//g' "$TMP/md-$1/$1.md" >"$TMP/$1.md.txt"
}
# pages NAME DESC CMD...: CMD (a grep over a page) holds on all three pages
pages() {
        local name=$1 desc=$2 p bad=
        shift 2
        for p in "$TMP/$name.txt" "$TMP/$name.html.txt" "$TMP/$name.md.txt"; do
                "$@" "$p" || bad="$bad ${p##*/}"
        done
        check "$name: $desc${bad:+ (not on:$bad)}" test -z "$bad"
}
has() { grep -qF -- "$1" "$2"; }
hasnt() { ! grep -qF -- "$1" "$2"; }
# at3 SECONDS: a JSON time as the pages print it, to 3 places. awk rounds a
# double, as the renderer does; bash's printf rounds a long double, and the
# two part on a tie (0.7495 is 0.74950000000000005 as a double: 0.750;
# 0.749 as bash prints it).
at3() { awk -v x="$1" 'BEGIN { printf "%.3f", x }'; }

# 1. a sampled memory limit: leash sent the soft signal, the kernel killed nothing
run_leash --limit memory=100M --sample 100ms -o "$TMP/mem.json" -- "$PY" -c '
import time
a = []
while True:
    a.append(bytearray(10 << 20)); time.sleep(0.05)'
render mem
sig=$(jget "$TMP/mem.json" signals.0.signal) at=$(jget "$TMP/mem.json" signals.0.at_s)
check "mem: the JSON says sampling, no OOM kill, leash's $sig ($(jget "$TMP/mem.json" reason), $(jget "$TMP/mem.json" limits.memory.enforced_by), oom_kills $(jget "$TMP/mem.json" usage.oom_kills))" \
        test "$(jget "$TMP/mem.json" reason)" = memory -a "$(jget "$TMP/mem.json" limits.memory.enforced_by)" = sampling \
        -a "$(jget "$TMP/mem.json" usage.oom_kills)" = null -a "$(jget "$TMP/mem.json" signals.0.why)" = memory
pages mem "no OOM killer named" hasnt "OOM killer"
pages mem "the limit is not 'asked, not enforced'" hasnt "asked, not enforced"
pages mem "the verdict: passed, checked by leash at each sample" has "Passed its memory limit (100 MiB, checked by leash at each sample"
pages mem "leash's signal and its time, as in the JSON (SIG$sig at $at)" has "leash sent SIG$sig at $(at3 "$at") s"
pages mem "the limits table: memory, leash, sampled" has "leash, sampled every 100 ms"

# 2. --limit procs=3 and --limit disk=: in the limits table, named in the verdict
run_leash --limit procs=3 --sample 50ms -o "$TMP/procs.json" -- sh -c 'for i in 1 2 3 4 5 6; do sleep 30 & done; wait'
render procs
check "procs: the JSON says procs, by sampling ($(jget "$TMP/procs.json" reason) $(jget "$TMP/procs.json" limits.procs.enforced_by))" \
        test "$(jget "$TMP/procs.json" reason)" = procs -a "$(jget "$TMP/procs.json" limits.procs.enforced_by)" = sampling
pages procs "the limits table is not empty" hasnt "(none asked for)"
pages procs "the verdict names the procs limit and the count seen ($(jget "$TMP/procs.json" sampling.limit_reached.value))" \
        has "Passed its procs limit (3, checked by leash at each sample, every 50 ms): the sample at $(at3 "$(jget "$TMP/procs.json" sampling.limit_reached.at_s)") s read $(jget "$TMP/procs.json" sampling.limit_reached.value)"
mkdir "$TMP/disk"
run_leash --limit disk=1M --sample-disk "$TMP/disk" --sample 50ms -o "$TMP/disk.json" -- \
        sh -c "head -c 4194304 /dev/zero >'$TMP/disk/x'; sleep 30"
render disk
check "disk: the JSON says disk, by sampling ($(jget "$TMP/disk.json" reason))" \
        test "$(jget "$TMP/disk.json" reason)" = disk -a "$(jget "$TMP/disk.json" limits.disk.enforced_by)" = sampling
pages disk "the limits table has the disk limit" has "leash, sampled every 50 ms"
pages disk "the limits table is not empty" hasnt "(none asked for)"
pages disk "the verdict names the disk limit" has "Passed its disk limit (1.00 MiB"

# 3. --fsize: the verdict names the limit
rm -f "$TMP/big"
run_leash --fsize 1M -o "$TMP/fsize.json" -- dd if=/dev/zero of="$TMP/big" bs=64K count=64
render fsize
check "fsize: the JSON says fsize, by rlimit" \
        test "$(jget "$TMP/fsize.json" reason)" = fsize -a "$(jget "$TMP/fsize.json" limits.fsize.enforced_by)" = rlimit
pages fsize "the verdict names the file-size limit" has "Tried to write past its file-size limit (1.00 MiB, enforced by rlimit)"
pages fsize "not 'a signal leash did not send'" hasnt "a signal leash did not send"
rm -f "$TMP/big"

# 4. memory as RLIMIT_AS (no memory controller): the failure carries the hint
if has_controller memory; then
        SKIP_WHY="the memory controller reaches the test parent: -m is memory.max, no RLIMIT_AS"
        skip "RLIMIT_AS failure hint"
else
        run_leash -m 64M -o "$TMP/as.json" -- "$HELPERS/lh-alloc" 200
        render as
        check "as: the JSON says exit, memory by rlimit ($(jget "$TMP/as.json" reason) $(jget "$TMP/as.json" limits.memory.enforced_by))" \
                test "$(jget "$TMP/as.json" reason)" = exit -a "$(jget "$TMP/as.json" limits.memory.enforced_by)" = rlimit
        pages as "the verdict gives the RLIMIT_AS hint stderr gives" \
                has "memory is limited per process by RLIMIT_AS (64.0 MiB) here: an allocation it refused may be why"
        check "as: stderr gave it too" grep -q "RLIMIT_AS (64.0 MiB) here: an allocation it refused may be why" "$TMP/err"
fi

# -m and --limit memory= together: both limits in the JSON and on the pages
# (before, the sampled one replaced -m's in "limits": -m 200M vanished)
run_leash -m 200M --limit memory=100M --sample 100ms -o "$TMP/both.json" -- true
render both
check "both: limits.memory is -m's, limits.memory_sampled the sampled one ($(jget "$TMP/both.json" limits.memory.value), $(jget "$TMP/both.json" limits.memory_sampled.value))" \
        test "$(jget "$TMP/both.json" limits.memory.value)" = 209715200 -a "$(jget "$TMP/both.json" limits.memory_sampled.value)" = 104857600 \
        -a "$(jget "$TMP/both.json" limits.memory_sampled.enforced_by)" = sampling
pages both "the limits table has -m's 200 MiB" has "200 MiB"
pages both "and the sampled 100 MiB, by leash" has "leash, sampled every 100 ms"

# the control: a job that only exits 3 with no limit gets no hint and no
# limit named: the checks above look at what the report holds
run_leash -o "$TMP/plain.json" -- sh -c 'exit 3'
render plain
pages plain "control: a plain exit 3 names no limit and no hint" hasnt "may be why"
pages plain "control: its limits table says none asked for" has "(none asked for)"
finish
