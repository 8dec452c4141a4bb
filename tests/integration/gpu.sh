#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# GPUs (issue 28) on the stand-in NVML (tests/helpers/nvml-standin.c): the
# job's processes write their own pids into the stand-in's script, so the
# figures are attributed by real pids; a pid of another process (pid 1, with
# a huge figure) is listed too and must never count. The report's
# usage.gpus[], the series, the limits gpu_memory and gpu_memory_max, and
# the refusal of a LEASH_NVML_LIBRARY anyone may have written.
. "$(dirname "$0")/lib.sh"

STANDIN="$HELPERS/libnvml-standin.so"
[ -f "$STANDIN" ] || skip_all "no stand-in NVML at $STANDIN (make check builds it)"
MIB=1048576
S="$TMP/nvml-script"
reset_script() {
        printf 'gpu 0 GPU-0000aaaa-standin StandIn-A\ngpu 1 GPU-1111bbbb-standin StandIn-B\n' >"$S"
        echo "proc 0 1 999999999 99" >>"$S" # not the job's: must never count
}
export LEASH_NVML_STANDIN="$S"

# --- without a driver: no figures, and the report says why ----------------------
if [ -e /dev/dri ] || [ -e /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1 ]; then
        SKIP_WHY="this host has a GPU driver"
        skip "no driver: no GPU figures"
else
        reset_script
        LEASH_NVML_LIBRARY= run_leash --sample 50ms --series "$TMP/none.csv" -o "$TMP/none.json" -- sleep 0.2
        check "no driver: the job ran" test "$RC" = 0
        check "no driver: gpu_accounting.available is false" test "$(jget "$TMP/none.json" usage.gpu_accounting.available)" = False
        check "no driver: the report says why" bash -c "[[ '$(jget "$TMP/none.json" usage.gpu_accounting.why_not)' == *'no NVIDIA driver'* ]]"
        check "no driver: the series' GPU cells are empty, not 0" \
                bash -c "! cut -d, -f$(head -1 "$TMP/none.csv" | tr , '\n' | grep -nx gpu_memory_bytes | cut -d: -f1) '$TMP/none.csv' | tail -n +2 | grep -q ."
fi
export LEASH_NVML_LIBRARY="$STANDIN"

# --- attribution by pid: two processes of the job on two GPUs ---------------------
reset_script
run_leash --sample 50ms --series "$TMP/s.csv" -o "$TMP/r.json" -- bash -c '
        sleep 5 & c=$!
        # one write: no sample sees half of it
        printf "proc 1 $$ 104857600 40\nproc 1 $c 52428800 20\nproc 0 $c 10485760 5\n" >>"$LEASH_NVML_STANDIN"
        sleep 0.6; kill $c; wait'
check "attribution: the job ran (exit 0)" test "$RC" = 0
diag "usage.gpus: $(jget "$TMP/r.json" usage.gpus)"
check "attribution: two GPUs touched" test "$(jget "$TMP/r.json" usage.gpus | $PY -c 'import json,sys; print(len(json.load(sys.stdin)))')" = 2
g1=$($PY -c "import json; print([g for g in json.load(open('$TMP/r.json'))['usage']['gpus'] if g['id'] == 'nvidia1'][0])")
check "attribution: GPU 1 peak = 100 + 50 MiB of the two processes" bash -c "[[ \"$g1\" == *\"'memory_peak_bytes': $((150 * MIB))\"* ]]"
check "attribution: GPU 1's UUID and name from NVML" bash -c "[[ \"$g1\" == *GPU-1111bbbb-standin* && \"$g1\" == *StandIn-B* ]]"
# 40 + 20 on every sample that saw both processes; a slow host (the VM tier)
# may take a sample while the job starts its second: at most a little lower
util=$($PY -c "import json; print([g for g in json.load(open('$TMP/r.json'))['usage']['gpus'] if g['id'] == 'nvidia1'][0]['utilization_avg_pct'])")
check "attribution: GPU 1 utilisation averaged over the samples = 40 + 20 ($util)" fcmp "50 <= $util <= 60"
check "attribution: GPU 1 memory at the end 0 (the job left it)" bash -c "[[ \"$g1\" == *\"'memory_bytes_at_end': 0\"* ]]"
check "attribution: the total peak is the job's 160 MiB, not pid 1's figure" \
        test "$(jget "$TMP/r.json" sampling.peaks.gpu_memory_bytes.value)" = $((160 * MIB))
check "attribution: per-GPU peak (gpu_memory_max) 150 MiB" \
        test "$(jget "$TMP/r.json" sampling.peaks.gpu_memory_max_bytes.value)" = $((150 * MIB))
check "attribution: basis nvml" test "$(jget "$TMP/r.json" sampling.peaks.gpu_memory_bytes.basis)" = nvml
check "attribution: gpu_accounting names the source" test "$(jget "$TMP/r.json" usage.gpu_accounting.source)" = nvml
col() { head -1 "$TMP/s.csv" | tr , '\n' | grep -nx "$1" | cut -d: -f1; }
check "series: a row with 2 GPUs and 160 MiB" \
        grep -q "^$(printf '[^,]*,%.0s' $(seq 2 "$(col gpu_memory_bytes)"))$((160 * MIB)),$((150 * MIB)),65,2," "$TMP/s.csv"

"$LEASH" report --html -o "$TMP/r.html" "$TMP/r.json" "$TMP/s.csv" 2>"$TMP/report.err"
check "HTML report: a GPU memory chart and a GPU utilisation chart" \
        bash -c "grep -q 'GPU memory' '$TMP/r.html' && grep -q 'GPU utilisation' '$TMP/r.html'"
"$LEASH" report --html -o "$TMP/none.html" "$TMP/none.json" "$TMP/none.csv" 2>/dev/null
check "HTML report without a driver: no GPU chart" bash -c "[ ! -e '$TMP/none.json' ] || ! grep -q 'GPU memory' '$TMP/none.html'"

# --- --limit gpu_memory ends the job ----------------------------------------------
reset_script
run_leash --sample 50ms --limit gpu_memory=120M -o "$TMP/l.json" -- bash -c '
        echo "proc 0 $$ 209715200 50" >>"$LEASH_NVML_STANDIN"; sleep 10'
check "gpu_memory: the job was ended (not exit 0)" test "$RC" != 0
check "gpu_memory: reason gpu_memory" test "$(jget "$TMP/l.json" reason)" = gpu_memory
check "gpu_memory: the figure seen, 200 MiB" test "$(jget "$TMP/l.json" sampling.limit_reached.value)" = $((200 * MIB))
check "gpu_memory: ended well before the job's 10 s" fcmp "$(jget "$TMP/l.json" usage.wall_time_s) < 5"

# --- gpu_memory_max is per GPU: 100 MiB on each of two GPUs passes 120M ----------
reset_script
run_leash --sample 50ms --limit gpu_memory_max=120M -o "$TMP/m.json" -- bash -c '
        echo "proc 0 $$ 104857600 50" >>"$LEASH_NVML_STANDIN"
        echo "proc 1 $$ 104857600 50" >>"$LEASH_NVML_STANDIN"; sleep 0.4'
check "gpu_memory_max: 2 x 100 MiB under a per-GPU 120M: exit 0" test "$RC" = 0
check "gpu_memory_max: the total was 200 MiB all the same" \
        test "$(jget "$TMP/m.json" sampling.peaks.gpu_memory_bytes.value)" = $((200 * MIB))
reset_script
run_leash --sample 50ms --limit gpu_memory_max=120M -o "$TMP/m2.json" -- bash -c '
        echo "proc 1 $$ 157286400 50" >>"$LEASH_NVML_STANDIN"; sleep 10'
check "gpu_memory_max: 150 MiB on one GPU: reason gpu_memory_max" test "$(jget "$TMP/m2.json" reason)" = gpu_memory_max

# --- LEASH_NVML_LIBRARY that others may write is refused ----------------------------
cp "$STANDIN" "$TMP/writable.so"
chmod 775 "$TMP/writable.so"
reset_script
LEASH_NVML_LIBRARY="$TMP/writable.so" run_leash --sample 50ms -o "$TMP/w.json" -- bash -c '
        echo "proc 0 $$ 104857600 50" >>"$LEASH_NVML_STANDIN"; sleep 0.3'
check "override: a group-writable library is refused" \
        bash -c "[[ '$(jget "$TMP/w.json" usage.gpu_accounting.why_not)' == *refused* ]] && [ '$(jget "$TMP/w.json" sampling.peaks.gpu_memory_bytes.value)' = null ]"
chmod 755 "$TMP/writable.so"
reset_script
LEASH_NVML_LIBRARY="$TMP/writable.so" run_leash --sample 50ms -o "$TMP/w2.json" -- bash -c '
        echo "proc 0 $$ 104857600 50" >>"$LEASH_NVML_STANDIN"; sleep 0.3'
check "override control: the same file, 755, is loaded" \
        test "$(jget "$TMP/w2.json" sampling.peaks.gpu_memory_bytes.value)" = $((100 * MIB))
# issue 38.11: each directory on the path is judged too (before, only the file
# was stat()ed, then dlopen()ed by name): the same 755 file in a group-writable
# directory is refused, where the directory above lets it load (the control above)
mkdir "$TMP/gw"
chmod 775 "$TMP/gw"
cp "$STANDIN" "$TMP/gw/lib.so"
chmod 755 "$TMP/gw/lib.so"
reset_script
LEASH_NVML_LIBRARY="$TMP/gw/lib.so" run_leash --sample 50ms -o "$TMP/w3.json" -- bash -c '
        echo "proc 0 $$ 104857600 50" >>"$LEASH_NVML_STANDIN"; sleep 0.3'
check "override: a 755 library in a group-writable directory is refused, naming the directory" \
        bash -c "[[ '$(jget "$TMP/w3.json" usage.gpu_accounting.why_not)' == *refused*'its directory '*gw*'writable by group'* ]] && [ '$(jget "$TMP/w3.json" sampling.peaks.gpu_memory_bytes.value)' = null ]"

# --- leash ps / stat: the figures of a running job ---------------------------------
reset_script
mkfifo "$TMP/fifo"
"$LEASH" run --cgroup-parent "$PARENT" -q -n gpujob -- bash -c '
        echo "proc 1 $$ 314572800 30" >>"$LEASH_NVML_STANDIN"; echo $$ >'"$TMP/main"'; read x <'"$TMP/fifo" &
BG=$!
for _ in $(seq 400); do [ -s "$TMP/main" ] && break; sleep 0.05; done
"$LEASH" ps --cgroup-parent "$PARENT" >"$TMP/ps" 2>&1
sed 's/^/# /' "$TMP/ps"
check "ps: a GPUMEM column" bash -c "head -1 '$TMP/ps' | grep -qw GPUMEM"
check "ps: the job's 300 MiB in it" bash -c "grep '^gpujob ' '$TMP/ps' | grep -qw 300.0MiB"
"$LEASH" stat --cgroup-parent "$PARENT" -o json "$(ls "$PARENT" | grep '^gpujob@')" >"$TMP/st.json" 2>&1
check "stat -o json: figures.gpu_memory = 300 MiB" test "$(jget "$TMP/st.json" figures.gpu_memory_bytes)" = $((300 * MIB))
check "stat -o json: figures.gpus = 1" test "$(jget "$TMP/st.json" figures.gpus)" = 1
exec 3<>"$TMP/fifo" # read-write: no hang if the job is gone
echo done >&3
exec 3>&-
wait "$BG"

# --- leash check lists the GPUs -----------------------------------------------------------
reset_script
"$LEASH" check >"$TMP/check" 2>&1
check "check: the stand-in's two GPUs listed with their UUIDs" \
        bash -c "grep -q 'NVIDIA (NVML, $STANDIN): 2 devices' '$TMP/check' && grep -q 'nvidia1  StandIn-B  GPU-1111bbbb-standin' '$TMP/check'"
env -u LEASH_NVML_LIBRARY "$LEASH" check >"$TMP/check" 2>&1
if [ -e /dev/dri ]; then
        SKIP_WHY="this host has DRM render nodes"
        skip "check: no driver: says none"
else
        check "check: no driver: says none, and why" grep -q "^  none: no NVIDIA driver" "$TMP/check"
fi

# --- a static leash on a system of another glibc: NVML is not loaded, and that is said --------
# Seen on a lent H200 machine (Ubuntu 24.04, glibc 2.39): a leash linked -static-pie on Debian
# 12 (glibc 2.36) died with SIGFPE in every dlopen of libnvidia-ml.so.1 (docs/gpu-check.out).
# Here the system's loader is replaced, in a private mount namespace, by a file that names
# glibc 9.99; the stand-in NVML (built for this glibc, so loading it would work) must not be
# loaded. Control: the stand-in is loaded with the real loader in place (the check above).
LOADER=/lib64/ld-linux-x86-64.so.2
if ! ldd "$LEASH" 2>&1 | grep -Eq 'not a dynamic|statically linked'; then
        SKIP_WHY="this leash is linked dynamically (it loads libraries like any program)"
        skip "static leash, another glibc: NVML not loaded"
elif printf 'ld.so (a future GLIBC) stable release version 9.99.\n' >"$TMP/fake-ld" &&
        { [ "$(id -u)" != 0 ] || [ ! -e "$LOADER" ] ||
                ! unshare -m --propagation private mount --bind "$TMP/fake-ld" "$LOADER" 2>/dev/null; }; then
        SKIP_WHY="needs root, $LOADER and a mount namespace where it can be covered by a bind mount"
        skip "static leash, another glibc: NVML not loaded"
else
        reset_script
        unshare -m --propagation private sh -c "mount --bind '$TMP/fake-ld' $LOADER && exec '$LEASH' check" \
                >"$TMP/check-glibc" 2>&1
        diag "$(grep -A1 '^GPUs:' "$TMP/check-glibc")"
        check "static leash, glibc 9.99: check does not load NVML and says why" \
                grep -q "none: this leash is linked statically with glibc .* and the system's is 9.99" "$TMP/check-glibc"
        check "static leash, glibc 9.99: check still ends with its verdict" grep -q '^verdict:' "$TMP/check-glibc"
        # the job is leash itself: a static program runs under the fake loader, /bin/true does not
        unshare -m --propagation private sh -c "mount --bind '$TMP/fake-ld' $LOADER && exec '$LEASH' run \
                --sample 50ms -o '$TMP/glibc.json' -- '$LEASH' --version" >/dev/null 2>&1
        check "static leash, glibc 9.99: the job ran" test "$(jget "$TMP/glibc.json" exit.code)" = 0
        check "static leash, glibc 9.99: the report says why there are no GPU figures" \
                bash -c "[[ '$(jget "$TMP/glibc.json" usage.gpu_accounting.why_not)' == *'and the system'\''s is 9.99'* ]]"
fi

# --- bad input ------------------------------------------------------------------------
run_leash --limit gpu_memory=lots -- true
check "bad value: exit 125 naming it" bash -c "[ $RC = 125 ] && grep -q gpu_memory '$TMP/err'"

finish
