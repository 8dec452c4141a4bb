#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Many jobs at once, all with the same name: unique cgroups, every exit status
# right, every report its own, nothing left behind.
. "$(dirname "$0")/lib.sh"

# 1,000 on a host; the VM tier (one emulated CPU) sets fewer
N=${LEASH_TEST_CONCURRENT_JOBS:-1000}
for i in $(seq $N); do
        "$LEASH" run --cgroup-parent "$PARENT" -n same -o "$TMP/r$i.json" -- \
                sh -c "sleep 0.2; exit $((i % 5))" >/dev/null 2>&1 &
        pids[$i]=$!
done
bad=0
for i in $(seq $N); do
        wait "${pids[$i]}"
        [ $? = $((i % 5)) ] || bad=$((bad + 1))
done
check "$N concurrent jobs: every exit status right" test $bad = 0
cgs=$(cat "$TMP"/r*.json | "$PY" -c "
import json, sys
text = sys.stdin.read()
dec = json.JSONDecoder(); i = 0; names = []
while i < len(text):
    while i < len(text) and text[i].isspace(): i += 1
    if i >= len(text): break
    o, i = dec.raw_decode(text, i); names.append(o['cgroup'])
print(len(names), len(set(names)))")
check "$N concurrent jobs: $N reports, $N distinct cgroups ($cgs)" test "$cgs" = "$N $N"
finish
