#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# leash suggest on synthetic report sets whose right answer is known: one
# worked by hand (below), and random ones checked against synth.py, which
# computes the model of leash(1) SUGGEST independently of leash's C code.
set -u
: "${LEASH:?}" "${LEASH_SRCDIR:?}"
PY=/usr/bin/python3
[ -x $PY ] || { echo "1..0 # SKIP needs /usr/bin/python3"; exit 0; }
T=$(mktemp -d "${TMPDIR:-/tmp}/leash-suggest.XXXXXX")
trap 'rm -rf "$T"' EXIT
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
check() { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }
synth() { $PY "$LEASH_SRCDIR/tests/report/synth.py" "$@"; }
jq_() { $PY -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {"d": d}))' "$@"; }

# By hand: nine jobs need 100 MiB for 1 s, one needs 1000 MiB for 1 s.
#   max-seen  a = 1000: cost 1000/job; used (9*100 + 1000)/10 = 190; waste 810
#   min-waste a = 100: cost (10*100 + 1000)/10 = 200; waste 10; kills 1
#   quantile 0.9: the 9th of 10 sorted needs = 100
mkdir "$T/hand"
$PY - "$T/hand.json" <<'PY'
import json, sys
spec = [{"mem": 100, "cpu": 1, "wall": 1, "pids": 1} for _ in range(9)] + [{"mem": 1000, "cpu": 1, "wall": 1, "pids": 1}]
json.dump(spec, open(sys.argv[1], "w"))
PY
synth write "$T/hand" "$T/hand.json"
"$LEASH" suggest --headroom 0 --quantile 0.9 --format json "$T/hand" >"$T/hand.out" 2>"$T/err"
check "suggest --format json on 10 reports: exit 0" test $? = 0
m='d["resources"]["memory"]["strategies"]'
check "by hand: max-seen proposes 1000 MiB" test "$(jq_ "$T/hand.out" "$m[\"max-seen\"][\"limit\"]/2**20")" = 1000.0
check "by hand: max-seen wastes 810 MiB*s per job" test "$(jq_ "$T/hand.out" "round($m[\"max-seen\"][\"waste\"]/2**20, 6)")" = 810.0
check "by hand: min-waste proposes 100 MiB" test "$(jq_ "$T/hand.out" "$m[\"min-waste\"][\"limit\"]/2**20")" = 100.0
check "by hand: min-waste kills 1 of 10 and wastes 10 MiB*s per job" \
        test "$(jq_ "$T/hand.out" "($m[\"min-waste\"][\"killed\"], round($m[\"min-waste\"][\"waste\"]/2**20, 6))")" = "(1, 10.0)"
check "by hand: quantile 0.9 proposes 100 MiB" test "$(jq_ "$T/hand.out" "$m[\"quantile\"][\"limit\"]/2**20")" = 100.0
check "by hand: --quantile selects the quantile strategy" test "$(jq_ "$T/hand.out" 'd["strategy"]')" = quantile

# Censored: two jobs ended at a 300 MiB memory limit; their need is at least
# 300 MiB, so the largest need seen is a lower bound and they are never "fits".
mkdir "$T/cens"
$PY - "$T/cens.json" <<'PY'
import json, sys
spec = [{"mem": 50 + 10 * i, "cpu": 2, "wall": 3, "pids": 4, "limits": {"memory": 300}} for i in range(18)]
spec += [{"mem": 290, "cpu": 1, "wall": 1.5, "pids": 4, "reason": "memory", "limits": {"memory": 300}} for _ in range(2)]
json.dump(spec, open(sys.argv[1], "w"))
PY
synth write "$T/cens" "$T/cens.json"
"$LEASH" suggest --headroom 10 --format json "$T/cens" >"$T/cens.out"
m='d["resources"]["memory"]'
check "censored: both OOM-killed jobs counted censored" test "$(jq_ "$T/cens.out" "$m[\"censored\"]")" = 2
check "censored: their need is the limit, not what they used" test "$(jq_ "$T/cens.out" "$m[\"max\"]/2**20")" = 300.0
check "censored: the max-seen proposal says it is a lower bound" test "$(jq_ "$T/cens.out" "$m[\"retry_lower_bound\"]")" = True
check "censored: they are censored in time too (stopped early)" test "$(jq_ "$T/cens.out" 'd["resources"]["wall-time"]["censored"]')" = 2
check "censored: cores are not censored" test "$(jq_ "$T/cens.out" 'd["resources"]["cpus"]["censored"]')" = 0

# Random sets against the independent model, at two headrooms and quantiles.
for seed in 1 2 3; do
        mkdir "$T/r$seed"
        $PY - "$T/r$seed.json" $seed <<'PY'
import json, random, sys
rng = random.Random(int(sys.argv[2]))
spec = []
for i in range(60):
    wall = round(rng.uniform(0.5, 20), 3)
    j = {"mem": rng.choice([rng.randint(20, 200), rng.randint(200, 900)]), "wall": wall,
         "cpu": round(wall * rng.uniform(0.2, 1.9), 3), "pids": rng.randint(1, 40),
         "limits": {"memory": 800, "wall_time": 18, "pids": 38}}
    if j["mem"] > 800: j.update(mem=790, reason="memory")
    elif wall > 18: j.update(wall=18.002, reason="wall_time")
    elif j["pids"] > 38: j.update(pids=38, reason="pids")
    spec.append(j)
json.dump(spec, open(sys.argv[1], "w"))
PY
        synth write "$T/r$seed" "$T/r$seed.json"
        for hq in "0 0.5" "15 0.9"; do
                set -- $hq
                "$LEASH" suggest --headroom "$1" --quantile "$2" --format json "$T/r$seed" >"$T/got" 2>>"$T/err"
                synth expect "$T/r$seed.json" "$1" "$2" >"$T/want"
                if $PY - "$T/got" "$T/want" <<'PY'
import json, sys
got, want = json.load(open(sys.argv[1]))["resources"], json.load(open(sys.argv[2]))
bad = []
for r, w in want.items():
    g = got[r]
    for k in ("jobs", "censored", "retry"):
        if abs(g[k] - w[k]) > 1e-9 * max(1, abs(w[k])): bad.append((r, k, g[k], w[k]))
    for s, ws in w["strategies"].items():
        gs = g["strategies"][s]
        for k in ("limit", "killed", "unknown", "waste"):
            if abs(gs[k] - ws[k]) > 1e-6 * max(1, abs(ws[k])): bad.append((r, s, k, gs[k], ws[k]))
for b in bad: print("# %r" % (b,))
sys.exit(1 if bad else 0)
PY
                then ok "random set $seed, headroom $1 %, quantile $2: every proposal, kill count and waste as computed independently"
                else not_ok "random set $seed, headroom $1 %, quantile $2: as computed independently"; fi
        done
done

# INI: a profile section that leash profiles check accepts.
"$LEASH" suggest --name synth --strategy min-waste --format ini "$T/r1" >"$T/p.ini"
check "--format ini: exit 0, a [synth] section" grep -qx '\[synth\]' "$T/p.ini"
check "--format ini: the reasoning as comments" grep -q '^; memory: 60 jobs' "$T/p.ini"
# every resource but cpus: no job of r1 asked for a cpus limit (issue 39 item 6)
check "--format ini: every resource asked for" test "$(grep -cE '^(memory|cpu-time|wall-time|pids) = ' "$T/p.ini")" = 4
check "--format ini: no cpus key where no job asked for cpus, and says why" \
        bash -c "! grep -q '^cpus = ' '$T/p.ini' && grep -q '^;   not proposed: no job of these ran under a cpus limit' '$T/p.ini'"
"$LEASH" profiles check "$T/p.ini" >"$T/chk" 2>&1
check "--format ini: leash profiles check accepts it" test $? = 0
"$LEASH" suggest "$T/r1" >"$T/text"
check "text: says how many jobs, the distribution and the kills" \
        grep -q 'max-seen.*kills 0 of 60' "$T/text"

# Issue 39 item 6. Before: without --name the jobs of every name made one
# profile; min-waste proposed a limit that killed past jobs, "retried" by a
# leash that never retries; cpus = 1.09 where no job asked for cores; "pids:
# no report has this figure" where the reports had sampled process peaks;
# JSON figures such as 0.062164999999999998.
mkdir "$T/mixed"
$PY - "$T/mixed.json" <<'PY'
import json, sys
spec = [{"name": "sleep", "mem": 1, "cpu": 0.001, "wall": 1.0, "pids": 1} for _ in range(4)]
spec += [{"name": "dd", "mem": 3, "cpu": 0.062165, "wall": 0.5, "pids": None, "tasks": 2} for _ in range(3)]
spec += [{"name": "trial", "mem": 100, "cpu": 0.9, "wall": 0.9, "pids": 1, "limits": {"wall_time": 1}} for _ in range(5)]
spec += [{"name": "trial", "mem": 100, "cpu": 1.0, "wall": 1.0, "pids": 1, "reason": "wall_time", "limits": {"wall_time": 1}} for _ in range(2)]
json.dump(spec, open(sys.argv[1], "w"))
PY
synth write "$T/mixed" "$T/mixed.json"
"$LEASH" suggest --format ini "$T/mixed" >"$T/mixed.ini" 2>"$T/err"
check "mixed names: exit 0" test $? = 0
check "mixed names: one section per job name, never one merged" \
        test "$(grep -E '^\[' "$T/mixed.ini" | tr '\n' ' ')" = "[dd] [sleep] [trial] "
check "mixed names: each group counts only its own jobs" \
        test "$(grep -c "^; leash suggest: 3 jobs of name 'dd'\|^; leash suggest: 4 jobs of name 'sleep'\|^; leash suggest: 7 jobs of name 'trial'" "$T/mixed.ini")" = 3
"$LEASH" profiles check "$T/mixed.ini" >"$T/chk2" 2>&1
check "mixed names: leash profiles check accepts the sections" test $? = 0
"$LEASH" suggest --format json "$T/mixed" >"$T/mixed.out"
check "mixed names, JSON: one object per group" \
        test "$(jq_ "$T/mixed.out" '[g["selected_by"]["name"] for g in d["groups"]]')" = "['dd', 'sleep', 'trial']"
check "no cpus proposal where no job asked for cores" \
        test "$(jq_ "$T/mixed.out" '[g["resources"]["cpus"]["proposed"] for g in d["groups"]]')" = "[None, None, None]"
check "pids from the sampled peaks of tasks where pids.peak is absent (dd: 2, 3 of them sampled)" \
        test "$(jq_ "$T/mixed.out" '(d["groups"][0]["resources"]["pids"]["max"], d["groups"][0]["resources"]["pids"]["sampled_peaks"])')" = "(2, 3)"
check "JSON numbers are rounded to millionths: no float noise" \
        $PY -c 'import re, sys; t = open(sys.argv[1]).read(); sys.exit(bool(re.search(r"[0-9][.][0-9]{7,}", t)) or "\"max\": 0.062165," not in t)' "$T/mixed.out"
# trial: two jobs ended at the 1 s wall-time limit; with no headroom max-seen
# would be 1 s, the limit that ended them: not proposed unless asked
"$LEASH" suggest --name trial --headroom 0 --format ini "$T/mixed" >"$T/trial.ini"
check "a limit history shows ending jobs is not proposed unless asked" \
        bash -c "! grep -q '^wall-time = ' '$T/trial.ini' && grep -q 'not proposed: 1 s would have ended 2 of the past jobs' '$T/trial.ini'"
"$LEASH" suggest --name trial --headroom 0 --strategy max-seen --format ini "$T/mixed" >"$T/trial2.ini"
check "... and proposed when asked (--strategy max-seen)" grep -qx 'wall-time = 1s' "$T/trial2.ini"
"$LEASH" suggest --name trial --strategy min-waste "$T/mixed" >"$T/trial.txt"
check "min-waste never says leash retries" bash -c "! grep -q 'retried' '$T/trial.txt'"
# the control: the same groups' figures with --name each, which never merged
"$LEASH" suggest --name sleep --format json "$T/mixed" >"$T/sleep.out"
check "control: --name sleep gives the sleep group's figures" \
        test "$(jq_ "$T/sleep.out" 'd["resources"]["memory"]["max"]')" = "$(jq_ "$T/mixed.out" 'd["groups"][1]["resources"]["memory"]["max"]')"

# Bad input: one line naming the value, exit 125.
for bad in "--quantile 0" "--quantile 1.5" "--headroom -3" "--format yaml" "--strategy guess" "--name a --profile b"; do
        # shellcheck disable=SC2086
        "$LEASH" suggest $bad "$T/r1" >/dev/null 2>"$T/err"
        rc=$?
        check "suggest $bad: exit 125 with one error line" test "$rc" = 125 -a "$(grep -c '^leash:' "$T/err")" = 1
done
"$LEASH" suggest --name nosuch "$T/r1" >/dev/null 2>"$T/err"
check "a name no report has: exit 125, says so" test $? = 125 -a -n "$(grep "nosuch" "$T/err")"
echo '{"schema": 1' >"$T/broken.json"
"$LEASH" suggest "$T/broken.json" >/dev/null 2>"$T/err"
check "a broken report: exit 125 naming the file" grep -q "broken.json: not JSON" "$T/err"

echo "1..$n"
[ $failed = 0 ]
