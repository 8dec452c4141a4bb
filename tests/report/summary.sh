#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Issue 42: the summary of a study's 10,000 reports stays readable. The page
# keeps its distributions over every job and lists the RENDER_WORST (20)
# worst jobs, worst first, saying how many it left out, instead of a row per
# job (10,000 rows before: 1,047 lines of text for 1,000 reports). Synthetic
# reports (synth.py) with planted bad jobs far down the directory's order.
set -u
: "${LEASH:?}" "${LEASH_SRCDIR:?}"
PY=${PYTHON:-/usr/bin/python3}
T=$(mktemp -d "${TMPDIR:-/tmp}/leash-summary.XXXXXX")
trap 'rm -rf "$T"' EXIT
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
check() { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }
if ! "$PY" -c 'import json' 2>/dev/null; then
        echo "1..0 # SKIP no Python to write the synthetic reports"
        exit 0
fi

# spec N DIR: N jobs under memory 512M / wall 10 s, using 10..409 MiB (80 %
# at most), and planted: job 5000 ended by memory, 9990 by wall_time, 7000
# exited 3, 8000 ok at 511 MiB (99.8 % of its limit), 6000 ok at 460 MiB (90 %)
spec() {
        "$PY" - "$1" >"$2/spec.json" <<'PYEOF'
import json, sys
n = int(sys.argv[1])
spec = [{"mem": 10 + i % 400, "cpu": 1.0, "wall": 2.0, "pids": 3, "limits": {"memory": 512, "wall_time": 10}}
        for i in range(n)]
plant = {5000: {"reason": "memory", "mem": 512}, 9990: {"reason": "wall_time", "wall": 10},
         7000: {"reason": "exit", "exit": 3}, 8000: {"mem": 511}, 6000: {"mem": 460}}
for i, p in plant.items():
    if i < n:
        spec[i].update(p)
json.dump(spec, sys.stdout)
PYEOF
        mkdir "$2/d" && "$PY" "$LEASH_SRCDIR/tests/report/synth.py" write "$2/d" "$2/spec.json"
}

mkdir "$T/big" && spec 10000 "$T/big"
check "10,000 synthetic reports written" test "$(ls "$T/big/d" | wc -l)" = 10000
"$LEASH" report --text "$T/big/d" >"$T/big.txt" 2>"$T/err"
check "text: exit 0" test $? = 0
check "text: the distributions count every job" grep -qE '^  wall time +10000 ' "$T/big.txt"
check "text: the reasons line counts every job" grep -q '^10000 jobs: ' "$T/big.txt"
check "text: says how many jobs it left out" grep -q '^The 20 worst of 10000 jobs .*; 9980 not shown' "$T/big.txt"
rows=$(grep -c '^  synth@' "$T/big.txt")
check "text: 20 rows, not 10000 (got $rows)" test "$rows" = 20
check "text: the page stays short ($(wc -l <"$T/big.txt") lines)" test "$(wc -l <"$T/big.txt")" -lt 200
# worst first: the ends by a limit, then the failed exit, then the nearest
# to a limit; synth.py names job i synth@(1000+i)
order=$(grep -o '^  synth@[0-9]*' "$T/big.txt" | head -5 | tr -d ' ' | tr '\n' ' ')
check "text: worst first: $order" test "$order" = "synth@10990 synth@6000 synth@8000 synth@9000 synth@7000 "
check "text: the nearest limit is named with its share" grep -qE '^  synth@9000 .*memory 100 %' "$T/big.txt"
# control: the planted jobs are not among the directory's first 20 reports,
# so a table cut in the directory's order would have missed every one
first=$(ls "$T/big/d" | head -20 | tr '\n' ' ')
check "control: the directory's first 20 hold none of the planted jobs" \
        test -z "$(echo "$first" | grep -E 'job-(5000|9990|7000|8000)\.')"

"$LEASH" report -o "$T/big.html" "$T/big/d" 2>"$T/err"
check "HTML: exit 0" test $? = 0
check "HTML: 20 rows in the jobs table" test "$(grep -c '^<tr><th scope="row" data-v="synth@' "$T/big.html")" = 20
check "HTML: the caption says how many were left out" grep -q '<caption>The 20 worst of 10000 jobs.*9980 not shown' \
        "$T/big.html"

mkdir "$T/md"
"$LEASH" report --markdown -o "$T/md/big.md" "$T/big/d" 2>"$T/err"
check "Markdown: exit 0, 20 rows" test $? = 0 -a "$(grep -c '^| synth@' "$T/md/big.md")" = 20

# control: a directory of 20 jobs shows every one, and leaves out nothing
mkdir "$T/small" && spec 20 "$T/small"
"$LEASH" report --text "$T/small/d" >"$T/small.txt" 2>"$T/err"
check "20 jobs: every job shown" test "$(grep -c '^  synth@' "$T/small.txt")" = 20
check "20 jobs: nothing said to be left out" test "$(grep -c 'not shown' "$T/small.txt")" = 0

echo "1..$n"
[ $failed = 0 ]
