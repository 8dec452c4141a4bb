#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Sampling (issue 12): the time series against ground truths (a job that
# allocates in steps shows the steps, a job that forks K shows K), limits on
# measured figures (disk, cores_avg, io_write_bytes), the report's sampling
# object, and bad input refused with nothing left behind.
. "$(dirname "$0")/lib.sh"

# series_py FILE PYTHON-EXPR: evaluates EXPR with rows = list of dicts (floats, None for empty)
series_py() {
        /usr/bin/python3 - "$1" "$2" <<'PY'
import csv, json, sys
path, expr = sys.argv[1], sys.argv[2]
def num(v):
    return None if v in ("", None) else float(v)
if path.endswith(".jsonl"):
    rows = [json.loads(l) for l in open(path)]
else:
    rows = [{k: num(v) for k, v in r.items()} for r in csv.DictReader(open(path))]
r = eval(expr)
print(r)
sys.exit(0 if r not in (False, None) else 1)
PY
}
MIB=1048576

# --- a job allocating 5 steps of 16 MiB shows the 5 steps ---------------------
run_leash --sample 100ms --series "$TMP/steps.csv" -o "$TMP/r.json" -- "$HELPERS/lh-steps" alloc 16 5 400
check "steps: the job ran (exit 0)" test "$RC" = 0
basis=$(jget "$TMP/r.json" sampling.peaks.memory_bytes.basis)
diag "memory basis here: $basis"
check "steps: memory peak named by its basis (memory.current or sampled_pss)" \
        bash -c "[ '$basis' = memory.current ] || [ '$basis' = sampled_pss ]"
for k in 1 2 3 4 5; do
        lo=$((k * 16 * MIB))
        hi=$(((k * 16 + 12) * MIB))
        check "steps: a sample sees step $k ($((k * 16)) MiB + at most 12 MiB of the process itself)" \
                series_py "$TMP/steps.csv" "any(r['memory_bytes'] is not None and $lo <= r['memory_bytes'] <= $hi for r in rows)"
done
# memory.current (pure v2) also counts page cache and kernel memory the kernel
# may reclaim meanwhile: a fall of less than half a 16 MiB step is not a step
# going away (seen in the VM as uid 1000 with a 1 MiB tolerance); up to the
# peak only: after it the job is exiting and frees everything (seen in the VM)
series_py "$TMP/steps.csv" "[r['memory_bytes'] for r in rows]" | sed 's/^/# memory_bytes per sample: /'
check "steps: the memory figure never falls by half a step while the job allocates" \
        series_py "$TMP/steps.csv" "all(a['memory_bytes'] <= b['memory_bytes'] + 8 * 1048576 for a, b in zip(rows[:peak], rows[1:peak + 1]) if a['memory_bytes'] and b['memory_bytes']) if (peak := max(range(len(rows)), key=lambda i: rows[i]['memory_bytes'] or 0)) >= 0 else False"
check "steps: exactly one last row, at the end" series_py "$TMP/steps.csv" "[r['last'] for r in rows].count(1) == 1 and rows[-1]['last'] == 1"
# Samples keep to a grid of 100 ms from the start: a sample the host ran
# late is followed by one at the next grid point, however near (a loaded
# machine ran one 60 ms late, then the next 40 ms after it). So: each
# sample in a later slot of the grid than the last, gaps of about the
# interval (median), none of a stall (2 s).
pairs="zip(rows[:-2], rows[1:-1])" # consecutive samples, the last row left out
series_py "$TMP/steps.csv" "[round(b['t_s'] - a['t_s'], 3) for a, b in $pairs]" | sed 's/^/# gaps between samples (s): /'
check "steps: time rises by about the interval (a grid of 100 ms)" \
        series_py "$TMP/steps.csv" "(lambda g: all(int(a['t_s'] / 0.1 + 1e-6) < int(b['t_s'] / 0.1 + 1e-6) for a, b in $pairs) and 0.05 <= sorted(g)[len(g) // 2] <= 0.3 and max(g) < 2.0)([b['t_s'] - a['t_s'] for a, b in $pairs])"
check "steps: report counts the rows as samples" \
        series_py "$TMP/steps.csv" "len(rows) == $(jget "$TMP/r.json" sampling.samples)"
peak=$(jget "$TMP/r.json" usage.memory_peak_bytes)
check "steps: usage.memory_peak_bytes covers the 80 MiB of the whole tree ($peak)" fcmp "$peak >= 80 * $MIB"
if ! has_controller memory; then
        check "steps, no memory controller: memory_peak_basis is sampled_pss, not the main process's rusage" \
                test "$(jget "$TMP/r.json" usage.memory_peak_basis)" = sampled_pss
        check "steps, no memory controller: mem_current_bytes is empty, never invented" \
                series_py "$TMP/steps.csv" "all(r['mem_current_bytes'] is None for r in rows)"
else
        check "steps: memory.peak stays the basis where the kernel has it" \
                test "$(jget "$TMP/r.json" usage.memory_peak_basis)" = memory.peak
fi

# --- a job forking K = 20 children shows K + 1 processes at once -------------------
run_leash --sample 100ms --series "$TMP/fork.jsonl" --series-format jsonl -o "$TMP/r.json" -- "$HELPERS/lh-forkn" 20 1500
check "fork: the job ran" test "$RC" = 0
check "fork: a sample sees 21 processes (20 children + the parent)" \
        series_py "$TMP/fork.jsonl" "max(r['procs'] for r in rows if r['procs'] is not None) == 21"
check "fork: report peak procs is 21, basis cgroup.procs" \
        bash -c "[ '$(jget "$TMP/r.json" sampling.peaks.procs.value)' = 21 ] && [ '$(jget "$TMP/r.json" sampling.peaks.procs.basis)' = cgroup.procs ]"
check "fork: total_processes counts at least the 21 distinct processes" \
        fcmp "$(jget "$TMP/r.json" sampling.peaks.total_processes.value) >= 21"
if has_controller pids; then
        check "fork: pids_current sees 21 tasks" series_py "$TMP/fork.jsonl" "max(r['pids_current'] or 0 for r in rows) == 21"
else
        check "fork, no pids controller: pids_current is null in JSON lines" \
                series_py "$TMP/fork.jsonl" "all(r['pids_current'] is None for r in rows)"
fi
check "JSON lines: every row has the same keys as the CSV header" \
        /usr/bin/python3 -c "
import csv, json, sys
h = next(csv.reader(open('$TMP/steps.csv')))
sys.exit(0 if all(list(json.loads(l).keys()) == h for l in open('$TMP/fork.jsonl')) else 1)"

# --- --limit disk=10M on a job writing 50 MiB ----------------------------------------
mkdir "$TMP/disk"
run_leash --sample 50ms --sample-disk "$TMP/disk" --limit disk=10M --grace 1s -o "$TMP/r.json" \
        -- "$HELPERS/lh-steps" write "$TMP/disk/f" 2 25 40
check "disk: reason disk" test "$(jget "$TMP/r.json" reason)" = disk
check "disk: killed by the soft signal (SIGXCPU, 152)" test "$RC" = 152
seen=$(jget "$TMP/r.json" sampling.limit_reached.value)
check "disk: the sample that saw it measured more than 10 MiB ($seen)" fcmp "$seen > 10 * $MIB"
size=$(stat -c %s "$TMP/disk/f")
check "disk: the job was stopped before writing its 50 MiB ($size bytes)" fcmp "$size < 50 * $MIB"
check "disk: limits.disk enforced_by sampling" test "$(jget "$TMP/r.json" limits.disk.enforced_by)" = sampling
note=$(jget "$TMP/r.json" limits.disk.note)
check "disk: the note says an interval and a read bound how late" test "${note#*up to one interval and a sample}" != "$note"
check "disk: late_by_at_most_s is at_s less last_below_at_s, and covers the read that saw it" \
        /usr/bin/python3 -c "
import json, sys
m = json.load(open('$TMP/r.json'))['sampling']['limit_reached']
sys.exit(0 if abs(m['late_by_at_most_s'] - (m['at_s'] - m['last_below_at_s'])) <= 0.002 and m['late_by_at_most_s'] >= m['read_took_s'] > 0 else 1)"
check "disk: the signal log names the figure" test "$(jget "$TMP/r.json" signals.0.why)" = disk
check "disk: the summary line names the figure" bash -c "
        '$LEASH' run --cgroup-parent '$PARENT' --sample 50ms --sample-disk '$TMP/disk' --limit files=1 -- sh -c 'touch $TMP/disk/a $TMP/disk/b; sleep 5' 2>&1 | grep -q 'files limit 1 passed'"

# --- --limit procs=200 on a tree growing to 1,000 (issue 39.5) ----------------------------
# Per-process sampling (no memory controller) reads every process's smaps:
# tens of ms a sample at hundreds of processes, more on a loaded machine. The
# job notes the wall clock just before the fork that makes it 201 processes;
# the crossing came after that, so at_s less that instant bounds how late the
# limit was seen from above: the report's late_by_at_most_s must not be less,
# but for the fork's own time (the longest fork before it, which the job
# measures: under the VM's emulation 3.7 ms once, over the 2 ms slack).
# Control: the figure the report gave before (the interval, 0.1 s) was below
# that bound (0.133 and 0.183 s measured here, 2 cores, loaded).
cat >"$TMP/tree.py" <<'PY'
import os, sys, time
n, k, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
longest = 0.0
for i in range(1, n + 1):
    if i == k:
        # just before the fork that makes the tree k + 1 processes, written
        # before it (one write): after it, the limit's signal may end this
        # process before it writes (seen in a full run). With it the longest
        # fork so far: the crossing comes up to a fork's time after the instant
        os.write(fd, ("%r %r" % (time.time(), longest)).encode())
    t = time.monotonic()
    if os.fork() == 0:
        time.sleep(120)
        os._exit(0)
    longest = max(longest, time.monotonic() - t)
time.sleep(120)
PY
run_leash --sample 100ms --limit procs=200 --grace 1s -o "$TMP/r.json" -- /usr/bin/python3 "$TMP/tree.py" 1000 200 "$TMP/cross"
check "procs tree: reason procs" test "$(jget "$TMP/r.json" reason)" = procs
late=$(/usr/bin/python3 -c "
import datetime, json
r = json.load(open('$TMP/r.json'))
start = datetime.datetime.fromisoformat(r['started'].replace('Z', '+00:00')).timestamp()
print('%.6f' % (r['sampling']['limit_reached']['at_s'] - (float(open('$TMP/cross').read().split()[0]) - start)))")
fork=$(cut -d' ' -f2 "$TMP/cross")
said=$(jget "$TMP/r.json" sampling.limit_reached.late_by_at_most_s)
diag "procs tree: seen at most $late s after the crossing (measured by the job, whose longest fork took $fork s); the report says $said s (interval 0.1 s, read $(jget "$TMP/r.json" sampling.limit_reached.read_took_s) s, stretched $(jget "$TMP/r.json" sampling.stretched) times)"
check "procs tree: the report's lateness ($said s) is not below the measured one ($late s, less a fork's $fork s)" \
	fcmp "$said + 0.002 + $fork >= $late"
check "procs tree: the summary line says how late" grep -q "seen at most [0-9.]* s after it was" "$TMP/err"

# --- a job of uid 0 that moves itself into cgroups of its own ----------------------------
# Its cgroup's files are its own: it may mkdir below it and move there. The
# figures of processes, threads and (without a memory controller) memory are
# read from the job's cgroup and every cgroup below it. Controls, the code
# before (the top cgroup's lists only): the threads limit never fired (reason
# ok, 41 processes in a cgroup of the job's own), nor the memory limit
# without a memory controller (128 MiB touched, reason ok).
# nest DEPTH CMD: the job makes DEPTH cgroups one below the other, moves
# itself into the last, then runs CMD
nest='cg=$0$(sed -n "s/^0:://p" /proc/self/cgroup); d=$cg; i=0
while [ $i -lt "$1" ]; do d=$d/n; mkdir "$d" || exit 9; i=$((i + 1)); done
echo $$ >"$d/cgroup.procs" || exit 9; shift; exec "$@"'
run_leash --sample 100ms -- sh -c "$nest" "$CG2" 1 true
if [ "$RC" = 9 ]; then
        SKIP_WHY="a job here cannot make a cgroup below its own (not root, or a cgroup it may not write)"
        skip "a job in cgroups of its own: its threads and memory counted"
else
        run_leash --sample 100ms --limit threads=20 --grace 1s -o "$TMP/r.json" -- \
                sh -c "$nest" "$CG2" 1 sh -c 'for i in $(seq 40); do sleep 10 & done; wait'
        check "a job in a cgroup of its own with 40 sleeps: its threads limit 20 fired (reason $(jget "$TMP/r.json" reason))" \
                test "$(jget "$TMP/r.json" reason)/$(jget "$TMP/r.json" sampling.limit_reached.figure)" = threads/threads
        check "the threads figure says it read the job's cgroups ($(jget "$TMP/r.json" sampling.peaks.threads.basis))" \
                test "$(jget "$TMP/r.json" sampling.peaks.threads.basis)" = "cgroup.threads of the job's cgroups"
        run_leash --sample 100ms --limit memory=64M --grace 1s -o "$TMP/r.json" -- \
                sh -c "$nest" "$CG2" 1 "$HELPERS/lh-alloc" 128 3000
        check "in a cgroup of its own, touching 128 MiB: its memory limit 64M fired ($(jget "$TMP/r.json" reason), basis $(jget "$TMP/r.json" sampling.peaks.memory_bytes.basis))" \
                test "$(jget "$TMP/r.json" reason)" = memory
        # 16 levels down are walked (CGROUPFS_WALK_DEPTH); deeper, the lists are
        # a part, and a limit on a figure of them counts as passed. (A peak's
        # basis proves nothing here: a sample may come before the first mkdir.)
        run_leash --sample 100ms --limit threads=20 --grace 1s -w 10s -o "$TMP/r.json" -- \
                sh -c "$nest" "$CG2" 16 sh -c 'for i in $(seq 40); do sleep 10 & done; wait'
        check "16 cgroups deep with 40 sleeps: counted, its threads limit 20 judged and passed (reason $(jget "$TMP/r.json" reason), partial $(jget "$TMP/r.json" sampling.limit_reached.partial), $(jget "$TMP/r.json" sampling.limit_reached.value) seen)" \
                test "$(jget "$TMP/r.json" reason)/$(jget "$TMP/r.json" sampling.limit_reached.partial)" = threads/False
        run_leash --sample 100ms --limit threads=20 --grace 1s -w 10s -o "$TMP/r.json" -- sh -c "$nest" "$CG2" 17 sleep 5
        check "17 cgroups deep: the threads limit counts as passed, not judged ($(jget "$TMP/r.json" reason), partial $(jget "$TMP/r.json" sampling.limit_reached.partial))" \
                test "$(jget "$TMP/r.json" reason)/$(jget "$TMP/r.json" sampling.limit_reached.partial)" = threads/True
        check "and the report says why" grep -q "deeper than leash walks" "$TMP/err"
fi

# --- --limit cores_avg: a spinner over 0.02 cores on average (true even on a loaded machine) ----------------------------
run_leash --sample 100ms --limit cores_avg=0.02 --grace 0 -o "$TMP/r.json" -- "$HELPERS/lh-spin" 10
check "cores_avg: reason cores_avg" test "$(jget "$TMP/r.json" reason)" = cores_avg
# (a spinner on a machine at load 80 got ~0.02 cores for seconds: the
# limit fired after 5 s there; its reason says the limit ended it)
check "cores_avg: stopped before its 10 s ($(jget "$TMP/r.json" usage.wall_time_s) s)" fcmp "$(jget "$TMP/r.json" usage.wall_time_s) < 9"
check "cores_avg: averages.cores is cpu/wall" \
        fcmp "abs($(jget "$TMP/r.json" sampling.averages.cores.value) - $(jget "$TMP/r.json" usage.cpu_time_s) / $(jget "$TMP/r.json" usage.wall_time_s)) < 0.01"

# --- --limit io_write_bytes ----------------------------------------------------------
mkdir -p "$TMP/io"
run_leash --sample 50ms --limit io_write_bytes=8M --grace 0 -o "$TMP/r.json" --series "$TMP/io.csv" \
        -- "$HELPERS/lh-steps" write "$TMP/io/f" 2 25 40
if series_py "$TMP/io.csv" "any(r['io_write_bytes'] for r in rows)" >/dev/null; then
        check "io_write_bytes: reason io_write_bytes" test "$(jget "$TMP/r.json" reason)" = io_write_bytes
else
        SKIP_WHY="no io figure here: neither io.stat nor a storage write_bytes in /proc/PID/io ($(stat -f -c %T "$TMP"))"
        skip "io_write_bytes limit"
fi

# --- without --sample: no sampling object, no series --------------------------------
run_leash -o "$TMP/r.json" -- true
check "no --sample: the report has no sampling object" test "$(jget "$TMP/r.json" sampling)" = null

# --- bad input: 125, one line naming the value, nothing left behind ---------------------
run_leash --sample 0 -- true
check "--sample 0: 125 naming the value" bash -c "[ $RC = 125 ] && [[ '$ERR' == *\"'0'\"* ]]"
run_leash --limit bogus=1 -- true
check "--limit bogus=1: 125 naming the value" bash -c "[ $RC = 125 ] && [[ '$ERR' == *'bogus=1'* ]]"
run_leash --limit disk=lots -- true
check "--limit disk=lots: 125, says a size is expected" bash -c "[ $RC = 125 ] && [[ '$ERR' == *'size'* ]]"
run_leash --series "$TMP/s.csv" -- true
check "--series without --sample: 125, no file" bash -c "[ $RC = 125 ] && [ ! -e '$TMP/s.csv' ]"
run_leash --sample 100ms --series "$TMP/s2.csv" --sample-disk "$TMP/no/such/dir" -- true
check "--sample-disk missing: 125, names it, no series file left" \
        bash -c "[ $RC = 125 ] && [[ '$ERR' == *'no/such/dir'* ]] && [ ! -e '$TMP/s2.csv' ]"
# --series is opened by the report's opener (src/cli/report-dest.c), with its rules
if [ "$(id -u)" = 0 ] && nob=$(id -u nobody 2>/dev/null); then
        ln -s "$TMP/target" "$TMP/link.csv"
        chown -h nobody "$TMP/link.csv"
        run_leash --sample 100ms --series "$TMP/link.csv" -- true
        check "--series on another user's symlink, as root: refused (125) naming its owner, the target untouched" \
                bash -c "[ $RC = 125 ] && [[ '$ERR' == *'owned by uid $nob'* ]] && [ ! -e '$TMP/target' ]"
        ln -s "$TMP/target2" "$TMP/rootlink.csv"
        run_leash --sample 100ms --series "$TMP/rootlink.csv" -- true
        check "control: a symlink root owns is followed (as for --report)" bash -c "[ $RC = 0 ] && [ -s '$TMP/target2' ]"
        mkdir "$TMP/nobodys" && chown nobody "$TMP/nobodys"
        run_leash --sample 100ms --series "$TMP/nobodys/s.csv" -- true
        check "--series into a directory another user owns, as root: refused (125), nothing made" \
                bash -c "[ $RC = 125 ] && [[ '$ERR' == *'--series'*'owned by uid $nob'* ]] && [ ! -e '$TMP/nobodys/s.csv' ]"
else
        SKIP_WHY="not root (or no user nobody): a user's own symlinks are followed like any path the user gives"
        skip "--series on a symlink the job could plant"
fi
echo precious >"$TMP/precious"
ln "$TMP/precious" "$TMP/hard.csv"
run_leash --sample 100ms --series "$TMP/hard.csv" -- true
check "--series on a hard link: refused (125), the other name's data kept" \
        bash -c "[ $RC = 125 ] && [ \"\$(cat '$TMP/precious')\" = precious ]"

# issue 39: a job shorter than the interval is seen only by the last sample,
# taken after it ended; without a memory controller that sample sums no
# process, and its 0 was the memory peak (sampled_pss) of a job that touched
# 32 MiB. The sample's own row still reads 0 (the control); the peak does not.
run_leash --sample 5s --series "$TMP/short.csv" -o "$TMP/short.json" -- "$HELPERS/lh-alloc" 32
peak=$(jget "$TMP/short.json" usage.memory_peak_bytes)
basis=$(jget "$TMP/short.json" usage.memory_peak_basis)
check "a job shorter than the interval: ran (exit 0)" test "$RC" = 0
if [ "$basis" = memory.peak ]; then
        SKIP_WHY="a memory controller counts the job (memory.peak)"
        skip "a job shorter than the interval: no empty sample's 0 as its memory peak"
else
        check "control: the one sample saw no process and its memory reads 0" \
                series_py "$TMP/short.csv" "len(rows) == 1 and rows[0]['procs'] == 0 and rows[0]['memory_bytes'] == 0"
        check "a job shorter than the interval: its memory peak is not the empty sample's 0 ($peak, $basis)" \
                bash -c "[ '$basis' != sampled_pss ] && [ '$peak' -ge $((32 << 20)) ]"
        check "a job shorter than the interval: no sampled memory peak" \
                test "$(jget "$TMP/short.json" sampling.peaks.memory_bytes.value)" = null
fi
finish
