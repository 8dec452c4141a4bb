#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Quick start, step 2 (and CI): the full test suite.
#   1. build with gcc (warnings are errors) in build/, unit + integration suites
#   2. build with clang + ASan + UBSan in build-asan/, the same suites
#   3. the VM tier: the suite again on a real pure cgroup-v2 kernel (make check-vm),
#      then its OOM report opened in Chromium, and its systemd flavour: Debian's
#      systemd as PID 1 (make check-vm-systemd)
#   4. the slurm tier: a real single-node Slurm (tests/slurm/run, ~1 min)
#   5. make distcheck (in CI, in the newcomer tier)
#   6. packaging: .deb and .rpm from make dist with their checks on (as root
#      and as nobody, from 0700 directories, HOME unset), lintian, apt install,
#      use, purge, nothing left (tests/packaging/packages.sh)
#   7. fuzzing (bounded)
#   8. the newcomer tier (in CI): make distcheck with the optional tools
#      hidden (tools/hide-optional) and no CI, which must pass with skips
#   9. nothing of ours left under the cgroup2 mount
# As root it first installs what the tiers need (tools/install-deps.sh), the
# optional tools (Chromium, scikit-learn) too; where it cannot (not root, no registry), the
# tests that need them skip and say why. A skip is never a failure, except in
# CI (CI=true), where a skipped tier is one.
#   ./run-tests.sh [--hide-optional] [--skip TIER]...
#   --hide-optional  a newcomer's machine: Chromium, Slurm, munge, sklearn and
#                    typing_extensions hidden for the whole run and not
#                    installed (not with CI=true: CI runs the newcomer tier)
#   --skip TIER      leave out a tier: gcc asan vm slurm distcheck packaging
#                    fuzz newcomer (a failure with CI=true)
# A failing tier prints its failing tests' logs and keeps them in test-logs/
# (make distcheck's too, from the tree it would leave or remove).
# Prints "tests: N passed, N failed, N skipped" last.
set -uo pipefail
cd "$(dirname "$0")"
top=$PWD
export CI=${CI:-false}

hide=false skips=" "
while [ $# -gt 0 ]; do
        case $1 in
        --hide-optional) hide=true; shift ;;
        --skip) [ $# -ge 2 ] || { echo "run-tests: --skip needs a tier" >&2; exit 2; }
                skips+="$2 "; shift 2 ;;
        -h | --help) sed -n '3,/^# Prints/s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) echo "run-tests: unknown argument '$1' (try --help)" >&2; exit 2 ;;
        esac
done
if $hide && [ "$CI" = true ]; then
        echo "run-tests: --hide-optional is a newcomer's run, not CI's (CI=true runs the newcomer tier)" >&2
        exit 2
fi

# --- what the tiers need -----------------------------------------------------
install_group() { # install_group GROUP: tools/install-deps.sh GROUP; where it cannot, only CI fails
        tools/install-deps.sh "$1" && return 0
        if [ "$CI" = true ]; then echo "run-tests: CI=true: the $1 packages could not be installed" >&2; return 1; fi
        echo "run-tests: going on without the $1 packages: the tests that need them skip and say why" >&2
}
tools/install-deps.sh build || exit 1
install_group test || exit 1
$hide || install_group optional || exit 1
[ -x configure ] || ./autogen.sh >/dev/null || exit 1

pass=0 fail=0 skip=0 failed_tiers=()
logdir=$(mktemp -d) || exit 1
hidden=$(mktemp -d /tmp/leash-hidden.XXXXXX) && chmod 0755 "$hidden" || exit 1 # tools/hide-optional's: nobody uses it too
trap 'rm -rf "$logdir" "$hidden"' EXIT
failures=$logdir/failures ntier=0
real_path=$PATH
[ -z "${PYTHONPATH+x}" ] || real_pythonpath=$PYTHONPATH
unhidden() { # unhidden CMD...: CMD with PATH and PYTHONPATH as before tools/hide-optional
        # (configure records tools by their path: a build tree must outlive the run)
        if [ -n "${real_pythonpath+x}" ]; then PATH=$real_path PYTHONPATH=$real_pythonpath "$@"
        else PATH=$real_path env -u PYTHONPATH "$@"; fi
}
if $hide; then
        eval "$(tools/hide-optional "$hidden/run")" || exit 1
        export CI=false
        echo "run-tests: hidden for this run ($LEASH_TEST_HIDDEN): PATH=$PATH PYTHONPATH=$PYTHONPATH"
fi
# what is under the cgroup2 mount now, for the last check
CG2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
[ -z "$CG2" ] || find "$CG2" -mindepth 1 -type d 2>/dev/null | sort >"$logdir/cgroups.before"

tally() { # tally LOG: add up the automake harness's counts
        local log=$1 n
        [ -f "$log" ] || return 0
        n=$(sed -n 's/^# PASS: *//p' "$log" | head -1); pass=$((pass + ${n:-0}))
        n=$(sed -n 's/^# FAIL: *//p' "$log" | head -1); fail=$((fail + ${n:-0}))
        n=$(sed -n 's/^# ERROR: *//p' "$log" | head -1); fail=$((fail + ${n:-0}))
        n=$(sed -n 's/^# SKIP: *//p' "$log" | head -1); skip=$((skip + ${n:-0}))
}
tally_line() { # tally_line PREFIX LOG: add up a "PREFIX: N passed, N failed, N skipped" line
        local line p f s
        line=$(grep -E "^$1: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped" "$2" | tail -1)
        [ -n "$line" ] || return 0
        read -r p f s <<<"$(sed -E "s/^$1: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\1 \2 \3/" <<<"$line")"
        pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
}
tally_tap() { # tally_tap LOG: add up a TAP stream's lines
        pass=$((pass + $(grep -c '^ok' "$1") - $(grep -c '^ok.*# SKIP' "$1")))
        fail=$((fail + $(grep -c '^not ok' "$1")))
        skip=$((skip + $(grep -c '^ok.*# SKIP' "$1")))
}
# Each tier's output is also kept in $logdir; the failed tiers' failing lines
# are printed again at the very end, where a CI page that keeps only the tail
# of the output shows them.
tier() { # tier KEY NAME CMD...: CMD exits 0 (ok), 77 (skipped: a failure in CI) or else (failed)
        local key=$1 name=$2 rc log=$logdir/tier.$((++ntier))
        shift 2
        if [[ $skips == *" $key "* ]]; then
                echo "=== $name: skipped (--skip $key)"
                [ "$CI" = true ] && failed_tiers+=("$name (skipped)")
                return 0
        fi
        echo "=== $name"
        local t0=$SECONDS
        "$@" > >(tee "$log") 2>&1
        rc=$?
        wait $! 2>/dev/null
        if [ $rc = 0 ]; then echo "=== $name: ok ($((SECONDS - t0)) s)"
        elif [ $rc = 77 ] && [ "$CI" != true ]; then echo "=== $name: skipped ($((SECONDS - t0)) s)"
        else
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
# the failing tests' logs, printed and kept in $kept/NAME (tools/keep-failed-logs):
# a distcheck tree and $logdir do not outlive the run
kept=$top/test-logs
rm -rf "$kept"
keep_logs() { # keep_logs NAME TREE
        local out
        out=$("$top/tools/keep-failed-logs" "$2" "$kept/$1")
        [ -n "$out" ] || return 0
        echo "$out"
        printf -- '--- %s: the failing tests\x27 logs are kept in %s\n' "$1" "$kept/$1" >>"$failures"
        # and pytest's assertion lines, which the tail shows too
        grep -E '^E  ' <<<"$out" | head -20 >>"$failures"
}
build() { # build DIR CONFIGURE-ARGS...
        local dir=$top/$1 rc
        shift
        mkdir -p "$dir" || return 1
        (
                cd "$dir" || exit 1
                if [ ! -f Makefile ]; then unhidden "$top/configure" --quiet "$@" || exit 1; fi
                make -j"$(nproc)" --quiet >/dev/null || exit 1
                make -j"$(nproc)" check
        )
        rc=$?
        tally "$dir/test-suite.log"
        [ $rc = 0 ] || keep_logs "$(basename "$dir")" "$dir"
        return $rc
}

tier gcc "gcc build + make check" build build --enable-werror
tier asan "clang ASan+UBSan build + make check" build build-asan CC=clang --enable-asan --enable-ubsan \
        --enable-werror CFLAGS="-O1 -g"

# --- the VM tier, one at a time on this machine ---------------------------------------------
vm_tier() {
        local log=$logdir/vm.log rc
        flock /tmp/leash-vm.lock make -C "$top/build" check-vm 2>&1 | tee "$log"
        rc=${PIPESTATUS[0]}
        tally_line vm "$log"
        # tests/vm/run exits 77 (make: 2) where a prerequisite is missing
        [ $rc != 0 ] && grep -q '^vm: skipping the VM tier' "$log" && { vm_skipped=true; return 77; }
        return $rc
}
# the systemd flavour (issue 23): Debian's systemd as PID 1, ~2.5 min
vm_systemd_tier() {
        local log=$logdir/vm-systemd.log rc
        flock /tmp/leash-vm.lock make -C "$top/build" check-vm-systemd 2>&1 | tee "$log"
        rc=${PIPESTATUS[0]}
        tally_line vm "$log"
        [ $rc != 0 ] && grep -q '^vm: skipping the VM tier' "$log" && return 77
        return $rc
}
vm_skipped=false
vm_chromium() { # the page tests/vm/t/60-report.sh made of a job OOM-killed in the guest
        local log=$logdir/vm-chromium.log rc
        if $vm_skipped; then
                echo "1..0 # SKIP the VM tier was skipped: no page of a job OOM-killed in the guest"
                skip=$((skip + 1))
                return 77
        fi
        (cd "$top/build" && LEASH=$top/build/src/cli/leash LEASH_SRCDIR=$top \
                LEASH_REPORT_VM_HTML=$top/build/tests/report/vm-oom.html bash "$top/tests/report/chromium.sh") | tee "$log"
        rc=${PIPESTATUS[0]}
        tally_tap "$log"
        grep -q '^1\.\.0 # SKIP' "$log" && { skip=$((skip + 1)); return 77; }
        return $rc
}
if grep -q '^check-vm:' "$top/build/Makefile" 2>/dev/null; then
        tier vm "VM tier (make check-vm)" vm_tier
        [[ $skips == *" vm "* ]] || tier vm "VM OOM report in Chromium" vm_chromium
        tier vm "VM tier, systemd flavour (make check-vm-systemd)" vm_systemd_tier
else
        echo "=== VM tier: not in this tree"
        [ "$CI" = true ] && failed_tiers+=("VM tier missing")
fi

# --- the slurm tier (issue 14): a single-node Slurm on 127.0.0.1, fixed ports -----------------
slurm_tier() {
        local log=$logdir/slurm.log rc
        flock /tmp/leash-slurm.lock "$top/tests/slurm/run" --builddir "$top/build" --srcdir "$top" 2>&1 | tee "$log"
        rc=${PIPESTATUS[0]}
        tally_line slurm "$log"
        return $rc
}
tier slurm "slurm tier (tests/slurm/run)" slurm_tier

# distcheck proves the tarball builds, installs and passes; the 10,000-call
# Python run already ran in the gcc tier: 1,000 here save minutes of CI. The
# truth matrix (~140 s of a make check's two slots) runs in the gcc, ASan and
# package tiers on the same tree; here it says it skips, and why. In CI the
# newcomer tier is this distcheck, run with the optional tools hidden: one
# make check of the tarball serves both (it was two, ~200 s each)
distcheck_tier() { # distcheck_tier [MAKE-ARGS...]: a failing check leaves leash-VERSION/_build: its logs are kept before anything removes it
        local rc d
        LEASH_PY_CALLS=1000 TRUTH_SKIP="${TRUTH_SKIP:-make distcheck: the gcc, ASan and package tiers run the matrix on this tree}" \
                make -C "$top/build" -j"$(nproc)" --quiet distcheck "$@"
        rc=$?
        if [ $rc != 0 ]; then
                for d in "$top"/build/leash-[0-9]*/_build; do
                        [ -d "$d" ] && keep_logs "${keep_as:-distcheck}" "$d"
                done
        fi
        return $rc
}
if [ "$CI" = true ]; then
        echo "=== make distcheck: in CI it runs in the newcomer tier, with the optional tools hidden"
        [[ $skips != *" distcheck "* ]] || failed_tiers+=("make distcheck (skipped)")
else
        tier distcheck "make distcheck" distcheck_tier
fi

pkg_tier() { # TAP of tests/packaging/packages.sh, counted; 77 = skipped (a failure under CI)
        local log=$top/build/packaging.log rc
        LEASH_PY_CALLS=1000 bash "$top/tests/packaging/packages.sh" "$top/build" | tee "$log"
        rc=${PIPESTATUS[0]}
        tally_tap "$log"
        return $rc
}
tier packaging "packaging (.deb/.rpm with checks, lintian, install/purge)" pkg_tier

if grep -q '^fuzz:' "$top/build/Makefile" 2>/dev/null; then
        # libFuzzer prints a line per new input: the log keeps them, the
        # output only the final statistics (all of it when it fails)
        fuzz_tier() {
                make -C "$top/build" fuzz >"$top/build/fuzz.log" 2>&1 && grep -E '^(Done|stat::)' "$top/build/fuzz.log" ||
                        { tail -60 "$top/build/fuzz.log"; return 1; }
        }
        tier fuzz "fuzzing (bounded)" fuzz_tier
fi

# --- a newcomer's run: optional tools absent, no CI --------------------------------------------
# Chromium, Slurm, munge, sklearn and typing_extensions hidden (tools/hide-optional;
# nothing uninstalled), CI unset: make distcheck (configure, build and make check of
# the tarball, out of tree, its source read-only), and the slurm tier, must pass with
# skips that name what is missing.
newcomer_tier() (
        local outside=() p m out=$logdir/newcomer-distcheck.log
        for p in chromium sbatch slurmd munged; do command -v $p >/dev/null && outside+=("$p"); done
        for m in sklearn typing_extensions; do /usr/bin/python3 -c "import $m" 2>/dev/null && outside+=("$m"); done
        echo "# present outside the tier: ${outside[*]:-none}"
        eval "$(tools/hide-optional "$hidden/newcomer")" || exit 1
        unset CI
        local seen=()
        for p in chromium sbatch slurmd munged; do command -v $p >/dev/null && seen+=("$p"); done
        for m in sklearn typing_extensions; do /usr/bin/python3 -c "import $m" 2>/dev/null && seen+=("$m"); done
        [ ${#seen[@]} = 0 ] || { echo "not ok - hidden, yet found: ${seen[*]}"; exit 1; }
        echo "ok - hidden: $LEASH_TEST_HIDDEN"
        # the truth matrix uses none of the hidden tools (setpriv is util-linux's): the
        # gcc tier ran it on this build. distcheck's distclean removes the suite's log:
        # the skip reason is read off the harness's line on the output
        TRUTH_SKIP="the newcomer tier: the matrix uses none of the hidden tools, and the gcc tier ran it on this build" \
                keep_as=newcomer distcheck_tier | tee "$out"
        rc=${PIPESTATUS[0]}
        if grep -q '^SKIP: tests/report/chromium.sh - no chromium' "$out"; then
                echo "ok - tests/report/chromium.sh skipped: $(grep -m1 '^SKIP: tests/report/chromium.sh' "$out")"
        else
                echo "not ok - tests/report/chromium.sh did not skip without chromium"; rc=1
        fi
        "$top/tests/slurm/run" --builddir "$top/build" --srcdir "$top" >"$logdir/newcomer-slurm.log" 2>&1
        if [ $? = 77 ] && grep -q '^1\.\.0 # SKIP' "$logdir/newcomer-slurm.log"; then
                echo "ok - the slurm tier skipped: $(grep -m1 '^1\.\.0' "$logdir/newcomer-slurm.log")"
        else
                echo "not ok - the slurm tier did not skip without Slurm"; cat "$logdir/newcomer-slurm.log"; rc=1
        fi
        exit $rc
)
newcomer() {
        local log=$logdir/newcomer.log rc
        newcomer_tier | tee "$log"
        rc=${PIPESTATUS[0]}
        tally "$logdir/newcomer-distcheck.log" # the harness's "# PASS:" lines of its make check
        tally_tap "$log"
        return $rc
}
if $hide; then
        echo "=== newcomer tier: this whole run is one (--hide-optional)"
elif [ "$CI" = true ]; then
        tier newcomer "newcomer tier: make distcheck with the optional tools hidden, no CI" newcomer
else
        echo "=== newcomer tier: run in CI; ./run-tests.sh --hide-optional makes the whole run a newcomer's"
fi

# --- nothing left under the cgroup2 mount --------------------------------------------------
# Every tier removes what it made; a cgroup made during the run and still there is
# listed. In CI, one of ours (a path with "leash" in it) is a failure; on a shared
# machine others' may be among the new ones, so elsewhere they are listed only.
if [ -n "$CG2" ]; then
        # $CG2/leash (and its slurm/ for the Slurm hooks' jobs) is the parent
        # leash makes on first use as root and keeps, as systemd keeps a slice
        # (the package's purge removes it): the tests that use the default
        # placement or the hooks made it, and two of them running at once cannot
        # tell which made it. The run removes them if they were not there
        # before; rmdir takes only an empty one, so a job cgroup left in one is
        # still listed below, with it.
        for d in "$CG2/leash/slurm" "$CG2/leash"; do
                if [ -d "$d" ] && ! grep -qx "$d" "$logdir/cgroups.before"; then
                        rmdir "$d" 2>/dev/null || true
                fi
        done
        find "$CG2" -mindepth 1 -type d 2>/dev/null | sort >"$logdir/cgroups.after"
        left=$(comm -13 "$logdir/cgroups.before" "$logdir/cgroups.after")
        ours=$(grep -E '/leash' <<<"$left")
        if [ -z "$left" ]; then
                echo "=== cgroups: nothing made during the run is left under $CG2"
        else
                echo "=== cgroups: made during the run and left under $CG2:"
                sed 's/^/    /' <<<"$left"
                if [ -n "$ours" ] && [ "$CI" = true ]; then
                        failed_tiers+=("cgroups left behind")
                        printf -- '--- cgroups left behind\n%s\n' "$ours" >>"$failures"
                fi
        fi
fi

echo
if [ ${#failed_tiers[@]} -gt 0 ]; then
        [ -s "$failures" ] && { echo "what failed:"; cat "$failures"; echo; }
        echo "failed tiers: ${failed_tiers[*]}"
        [ "$fail" -gt 0 ] || fail=${#failed_tiers[@]}
fi
echo "tests: $pass passed, $fail failed, $skip skipped"
[ ${#failed_tiers[@]} -eq 0 ]
