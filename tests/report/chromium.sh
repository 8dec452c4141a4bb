#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A real browser opens leash report's HTML: headless Chromium (Debian's
# chromium) loads the page of a known job (the fixture killed at its memory
# limit, and a summary of several), --dump-dom shows the DOM after scripts
# ran, and the test checks the chart elements carry the expected data points,
# that the page's script ran (data-js="ready") and that no console error was
# logged. The screenshots stay in the build tree (tests/report/artifacts/) for
# CI to keep. Without chromium: in CI (CI=true) it is installed by
# tools/install-deps.sh chromium and its absence fails; elsewhere it skips.
# Cost: ~10 s (two page loads, two screenshots), once chromium is installed.
# With LEASH_REPORT_VM_HTML=FILE (run-tests.sh, after the VM tier) it opens
# instead the page tests/vm/t/60-report.sh made of a job OOM-killed on the
# guest's pure cgroup-v2 kernel, and keeps its screenshot as vm-oom.png.
set -u
: "${LEASH:?}" "${LEASH_SRCDIR:?}"
F=$LEASH_SRCDIR/tests/unit/fixtures/report
ART=${LEASH_ARTIFACTS:-$PWD/tests/report/artifacts}
in_ci() { [ "${CI:-false}" = true ]; }

find_chromium() { command -v chromium || command -v chromium-browser; }
if ! find_chromium >/dev/null && in_ci && [ "$(id -u)" = 0 ]; then
        "$LEASH_SRCDIR/tools/install-deps.sh" chromium >&2
fi
CHROMIUM=$(find_chromium) || {
        if in_ci; then
                echo "1..1"
                echo "not ok 1 - chromium is required in CI and could not be installed"
                exit 1
        fi
        echo "1..0 # SKIP no chromium (tools/install-deps.sh chromium installs it)"
        exit 0
}
T=$(mktemp -d "${TMPDIR:-/tmp}/leash-chromium.XXXXXX")
trap 'rm -rf "$T"' EXIT
mkdir -p "$ART"
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
check() { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }

# Each run gets a fresh profile; no network, no updates, no sync.
browse() { # browse PROFILE ARGS...
        local p=$T/profile-$1
        shift
        timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
                --disable-background-networking --disable-component-update --disable-sync \
                --enable-logging=stderr --v=0 --user-data-dir="$p" "$@"
}

if [ -n "${LEASH_REPORT_VM_HTML:-}" ]; then
        check "the VM tier left its page ($LEASH_REPORT_VM_HTML)" test -s "$LEASH_REPORT_VM_HTML"
        browse vm --dump-dom "file://$LEASH_REPORT_VM_HTML" >"$T/vm.dom" 2>"$T/vm.log"
        check "chromium loads the VM job's page" grep -q '<p class="verdict bad" id="verdict">' "$T/vm.dom"
        check "no console error" test "$(grep -ciE 'Uncaught' "$T/vm.log")" = 0
        check "the verdict: its memory limit, enforced by cgroup" \
                grep -q 'Reached its memory limit (64.0 MiB, enforced by cgroup)' "$T/vm.dom"
        if grep -q 'data-series="mem_current_bytes"' "$T/vm.dom"; then
                check "the memory chart with memory.max at 64 MiB" \
                        grep -q 'data-level="memory.max" data-value="67108864"' "$T/vm.dom"
                check "the OOM kill marked" grep -q 'data-mark="OOM kill"' "$T/vm.dom"
        fi
        browse vmshot --hide-scrollbars --window-size=900,2400 --screenshot="$ART/vm-oom.png" \
                "file://$LEASH_REPORT_VM_HTML" >/dev/null 2>&1
        check "screenshot kept in $ART/vm-oom.png" test -s "$ART/vm-oom.png"
        echo "1..$n"
        [ $failed = 0 ]
        exit
fi

"$LEASH" report -o "$T/job.html" "$F/oom.json" "$F/oom.csv"
browse dom --dump-dom "file://$T/job.html" >"$T/job.dom" 2>"$T/job.log"
check "chromium loads the job page" test -s "$T/job.dom"
check "no console error" test "$(grep -ciE 'CONSOLE.*(error|Uncaught)|Uncaught' "$T/job.log")" = 0
check "the memory chart is in the DOM" grep -q '<svg[^>]*id="memory"' "$T/job.dom"
check "the memory line has the 11 samples of the series" \
        grep -q '<polyline[^>]*data-series="mem_current_bytes" data-n="11"' "$T/job.dom"
pts=$(grep -o 'data-series="mem_current_bytes" data-n="11"[^>]*points="[^"]*"' "$T/job.dom" | sed 's/.*points="//; s/"$//')
check "... drawn as 11 points" test "$(echo "$pts" | wc -w)" = 11
check "memory.max at 268435456 bytes" grep -q 'data-level="memory.max" data-value="268435456"' "$T/job.dom"
check "memory.high at 201326592 bytes" grep -q 'data-level="memory.high" data-value="201326592"' "$T/job.dom"
check "the OOM kill marked at 2.5 s" grep -q 'data-mark="OOM kill" data-at="2.5"' "$T/job.dom"
check "the cpu limit line and the pids.max line" \
        test "$(grep -cE 'data-level="(cpu|pids).max"' "$T/job.dom")" -ge 1
check "the data table behind the memory chart (text alternative)" grep -q '<td>256 MiB</td>' "$T/job.dom"
check "the hostile command stayed text" test "$(grep -c '<script>alert' "$T/job.dom")" = 0

mkdir "$T/dir"
for i in 1 2 3; do cp "$F/oom.json" "$T/dir/j$i.json"; done
"$LEASH" report -o "$T/many.html" "$T/dir"
browse many --dump-dom "file://$T/many.html" >"$T/many.dom" 2>"$T/many.log"
check "the summary's script ran (data-js=ready)" grep -q '<html[^>]*data-js="ready"' "$T/many.dom"
check "the headings became sort buttons" grep -q '<th scope="col"><button type="button">wall</button></th>' "$T/many.dom"
check "no console error on the summary" test "$(grep -ciE 'Uncaught' "$T/many.log")" = 0

rm -f "$ART/job.png" "$ART/summary.png"
browse shot1 --hide-scrollbars --window-size=900,2400 --screenshot="$ART/job.png" "file://$T/job.html" >/dev/null 2>&1
check "screenshot of the job page kept in $ART/job.png" test -s "$ART/job.png"
browse shot2 --hide-scrollbars --window-size=420,1600 --screenshot="$ART/summary.png" "file://$T/many.html" >/dev/null 2>&1
check "screenshot of the summary at phone width kept in $ART/summary.png" test -s "$ART/summary.png"
cp "$T/job.html" "$ART/job.html"

echo "1..$n"
[ $failed = 0 ]
