#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# leash report on a real OOM kill: a job killed at its memory limit (memory.max, with
# memory.oom.group) on the guest's pure cgroup-v2 kernel, its report (and its time
# series, where this leash samples) turned into HTML in the build tree, which the guest
# shares with the host: run-tests.sh then opens it in headless Chromium on the host
# (tests/report/chromium.sh with LEASH_REPORT_VM_HTML).

. "$(dirname "$0")/../../integration/lib.sh"

MiB=1048576
if ! has_controller memory; then
	not_ok "the memory controller is available under $PARENT"
	finish
fi
series=()
if "$LEASH" run --help 2>/dev/null | grep -q -- '--series'; then
	series=(--sample 50ms --series "$TMP/oom.csv")
else
	diag "this leash has no --series: the page will have no charts over time"
fi
run_leash -m 64M -w 60 "${series[@]}" -o "$TMP/oom.json" -- sh -c "'$HELPERS/lh-alloc' 20 300; '$HELPERS/lh-alloc' 200"
check "OOM: exit 137 (got $RC)" test "$RC" = 137
check "OOM: reason memory" test "$(jget "$TMP/oom.json" reason)" = memory
inputs=("$TMP/oom.json")
[ -s "$TMP/oom.csv" ] && inputs+=("$TMP/oom.csv")
"$LEASH" report -o "$TMP/oom.html" "${inputs[@]}" 2>"$TMP/err"
check "leash report: exit 0 ($(cat "$TMP/err"))" test $? = 0
check "the verdict names the limit and how it was enforced" \
	grep -q 'Reached its memory limit (64.0 MiB, enforced by cgroup)' "$TMP/oom.html"
if [ ${#inputs[@]} = 2 ]; then
	check "the memory chart with memory.max at 64 MiB" \
		grep -q "data-level=\"memory.max\" data-value=\"$((64 * MiB))\"" "$TMP/oom.html"
	check "the OOM kill marked" grep -q 'data-mark="OOM kill"' "$TMP/oom.html"
fi
"$LEASH" report "${inputs[@]}" >"$TMP/oom.txt"
check "text: the verdict first" grep -q '^verdict: memory. Reached its memory limit' "$TMP/oom.txt"
# for the host's Chromium (root only: the shared tree is root's)
if [ "$(id -u)" = 0 ] && [ -n "${LEASH_VM_BUILDDIR:-}" ]; then
	mkdir -p "$LEASH_VM_BUILDDIR/tests/report"
	cp "$TMP/oom.html" "$LEASH_VM_BUILDDIR/tests/report/vm-oom.html"
	cp "${inputs[@]}" "$LEASH_VM_BUILDDIR/tests/report/" 2>/dev/null
	check "the page is in the build tree for the host" test -s "$LEASH_VM_BUILDDIR/tests/report/vm-oom.html"
fi
finish
