#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Quick start, step 2 (and CI): the full test suite.
#   1. build with gcc (warnings are errors) in build/, unit + integration suites
#   2. build with clang + ASan + UBSan in build-asan/, the same suites
#   3. the VM tier: the suite again on a real pure cgroup-v2 kernel (make check-vm), and its
#      systemd flavour: Debian's systemd as PID 1 (make check-vm-systemd)
#   4. the slurm tier: a real single-node Slurm (tests/slurm/run, ~1 min)
#   5. make distcheck
#   6. any extra tiers the tree provides (fuzz replay runs in make check)
#   7. packaging: .deb and .rpm from make dist, lintian, apt install, use,
#      purge, nothing left (tests/packaging/packages.sh; ~3-4 min on 2 cores)
# Prints "tests: N passed, N failed, N skipped" last. In CI (CI=true) a skipped
# tier is a failure.
set -uo pipefail
cd "$(dirname "$0")"
top=$PWD
export CI=${CI:-false}

tools/install-deps.sh test || exit 1
[ -x configure ] || ./autogen.sh >/dev/null || exit 1

pass=0 fail=0 skip=0 failed_tiers=()
tally() { # tally DIR: add up the automake harness's counts
        local log=$1/test-suite.log n
        [ -f "$log" ] || return 0
        n=$(sed -n 's/^# PASS: *//p' "$log" | head -1); pass=$((pass + ${n:-0}))
        n=$(sed -n 's/^# FAIL: *//p' "$log" | head -1); fail=$((fail + ${n:-0}))
        n=$(sed -n 's/^# ERROR: *//p' "$log" | head -1); fail=$((fail + ${n:-0}))
        n=$(sed -n 's/^# SKIP: *//p' "$log" | head -1); skip=$((skip + ${n:-0}))
}
# Each tier's output is also kept in $logdir; the failed tiers' failing lines
# are printed again at the very end, where a CI page that keeps only the tail
# of the output shows them.
logdir=$(mktemp -d) && trap 'rm -rf "$logdir"' EXIT
failures=$logdir/failures ntier=0
tier() { # tier NAME CMD...
        local name=$1 rc log=$logdir/tier.$((++ntier))
        shift
        echo "=== $name"
        local t0=$SECONDS
        "$@" > >(tee "$log") 2>&1
        rc=$?
        wait $! 2>/dev/null
        if [ $rc = 0 ]; then echo "=== $name: ok ($((SECONDS - t0)) s)"; else
                echo "=== $name: FAILED ($((SECONDS - t0)) s)"
                failed_tiers+=("$name")
                note_failure "$name" "$log"
        fi
}
note_failure() { # note_failure NAME LOG: its failing lines, else its last lines
        local lines
        lines=$(grep -E '^(FAIL|ERROR|XPASS|not ok|--- |# )' "$2" | grep -v '^# \(PASS\|SKIP\|XFAIL\|TOTAL\)')
        [ -n "$lines" ] || lines=$(tail -25 "$2")
        printf -- '--- %s\n%s\n' "$1" "$(head -60 <<<"$lines")" >>"$failures"
}
build() { # build DIR CONFIGURE-ARGS...
        local dir=$top/$1 rc
        shift
        mkdir -p "$dir" || return 1
        (
                cd "$dir" || exit 1
                if [ ! -f Makefile ]; then "$top/configure" --quiet "$@" || exit 1; fi
                make -j"$(nproc)" --quiet >/dev/null || exit 1
                make -j"$(nproc)" check
        )
        rc=$?
        tally "$dir"
        if [ $rc != 0 ]; then
                for log in $(grep -l '^not ok' "$dir"/tests/*/*.log 2>/dev/null); do
                        echo "--- $log"
                        grep '^\(not ok\|#\)' "$log" | head -20
                done
        fi
        return $rc
}

tier "gcc build + make check" build build --enable-werror
tier "clang ASan+UBSan build + make check" build build-asan CC=clang --enable-asan --enable-ubsan \
        --enable-werror CFLAGS="-O1 -g"
if grep -q '^check-vm:' "$top/build/Makefile" 2>/dev/null; then
        vmlog=$(mktemp)
        tier "VM tier (make check-vm)" bash -c "make -C \"$top/build\" check-vm 2>&1 | tee '$vmlog'; exit \${PIPESTATUS[0]}"
        line=$(grep -E '^vm: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$vmlog" | tail -1)
        if [ -n "$line" ]; then
                read -r p f s <<<"$(sed -E 's/^vm: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\1 \2 \3/' <<<"$line")"
                pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
        fi
        rm -f "$vmlog"
        # the systemd flavour (issue 23): Debian's systemd as PID 1, ~2.5 min
        vmlog=$(mktemp)
        tier "VM tier, systemd flavour (make check-vm-systemd)" bash -c "make -C \"$top/build\" check-vm-systemd 2>&1 | tee '$vmlog'; exit \${PIPESTATUS[0]}"
        line=$(grep -E '^vm: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$vmlog" | tail -1)
        if [ -n "$line" ]; then
                read -r p f s <<<"$(sed -E 's/^vm: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\1 \2 \3/' <<<"$line")"
                pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
        fi
        rm -f "$vmlog"
        # the page tests/vm/t/60-report.sh made of a job OOM-killed in the guest, in Chromium
        tier "VM OOM report in Chromium" bash -c "cd '$top/build' && LEASH='$top/build/src/cli/leash' \
LEASH_SRCDIR='$top' LEASH_REPORT_VM_HTML='$top/build/tests/report/vm-oom.html' bash '$top/tests/report/chromium.sh'"
else
        echo "=== VM tier: not in this tree"
        [ "$CI" = true ] && failed_tiers+=("VM tier missing")
fi
# the slurm tier (issue 14): a single-node Slurm on 127.0.0.1; 77 = skipped
slurmlog=$(mktemp)
echo "=== slurm tier (tests/slurm/run)"
t0=$SECONDS
"$top/tests/slurm/run" --builddir "$top/build" --srcdir "$top" 2>&1 | tee "$slurmlog"
rc=${PIPESTATUS[0]}
line=$(grep -E '^slurm: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$slurmlog" | tail -1)
if [ -n "$line" ]; then
        read -r p f s <<<"$(sed -E 's/^slurm: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\1 \2 \3/' <<<"$line")"
        pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
fi
if [ "$rc" = 0 ]; then echo "=== slurm tier: ok ($((SECONDS - t0)) s)"
elif [ "$rc" = 77 ]; then echo "=== slurm tier: skipped ($((SECONDS - t0)) s)"
else
        echo "=== slurm tier: FAILED ($((SECONDS - t0)) s)"
        failed_tiers+=("slurm tier")
        note_failure "slurm tier" "$slurmlog"
fi
rm -f "$slurmlog"
# distcheck proves the tarball builds, installs and passes; the 10,000-call
# Python run already ran in the gcc tier: 1,000 here save minutes of CI
tier "make distcheck" env LEASH_PY_CALLS=1000 make -C "$top/build" --quiet distcheck
pkg_tier() { # TAP of tests/packaging/packages.sh, counted; 77 = skipped (a failure under CI)
        local log=$top/build/packaging.log rc
        bash "$top/tests/packaging/packages.sh" "$top/build" | tee "$log"
        rc=${PIPESTATUS[0]}
        pass=$((pass + $(grep -c '^ok' "$log") - $(grep -c '^ok.*# SKIP' "$log")))
        fail=$((fail + $(grep -c '^not ok' "$log")))
        skip=$((skip + $(grep -c '# SKIP' "$log")))
        [ "$rc" = 0 ] || [ "$rc" = 77 ]
}
tier "packaging (.deb/.rpm, lintian, install/purge)" pkg_tier
if grep -q '^fuzz:' "$top/build/Makefile" 2>/dev/null; then
        # libFuzzer prints a line per new input: the log keeps them, the
        # output only the final statistics (all of it when it fails)
        fuzz_tier() {
                make -C "$top/build" fuzz >"$top/build/fuzz.log" 2>&1 && grep -E '^(Done|stat::)' "$top/build/fuzz.log" ||
                        { tail -60 "$top/build/fuzz.log"; return 1; }
        }
        tier "fuzzing (bounded)" fuzz_tier
fi

echo
if [ ${#failed_tiers[@]} -gt 0 ]; then
        [ -s "$failures" ] && { echo "what failed:"; cat "$failures"; echo; }
        echo "failed tiers: ${failed_tiers[*]}"
        [ "$fail" -gt 0 ] || fail=${#failed_tiers[@]}
fi
echo "tests: $pass passed, $fail failed, $skip skipped"
[ ${#failed_tiers[@]} -eq 0 ]
