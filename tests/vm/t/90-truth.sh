#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The truth matrix (issue 39) on the VM tier's pure cgroup v2 with the memory,
# pids, cpu and io controllers: tests/truth/matrix.py --tier vm in a parent of
# this script's, its checks renumbered into this script's TAP. A failing cell
# fails here (never a skip), and so does a section that differs from the
# committed docs/TRUTH.md's (the diff is printed); the generated file is left
# in the build tree (truth-vm.md) for the host to copy into docs/TRUTH.md.

. "$(dirname "$0")/../../integration/lib.sh"

PY=/usr/bin/python3
BUILD=${LEASH_VM_BUILDDIR:-}
SRC=$(cd "$(dirname "$0")/../../.." && pwd)
[ -n "$BUILD" ] || { not_ok "LEASH_VM_BUILDDIR names the build tree"; finish; }
for c in memory pids; do
	has_controller $c || { not_ok "the $c controller is available under $PARENT"; finish; }
done
cp "$SRC/docs/TRUTH.md" "$BUILD/truth-vm.md"
TRUTH_PARENT=$PARENT LEASH_PYTHONPATH=$BUILD/python "$PY" "$SRC/tests/truth/matrix.py" --tier vm \
	--compare "$SRC/docs/TRUTH.md" --write "$BUILD/truth-vm.md" >"$TMP/tap" 2>"$TMP/log"
rc=$?
while IFS= read -r line; do
	case $line in
	"not ok "*"# TODO"*) T_N=$((T_N + 1)); echo "not ok $T_N - ${line#not ok * - }" ;;
	"not ok "*) not_ok "${line#not ok * - }" ;;
	"ok "*) T_N=$((T_N + 1)); echo "ok $T_N - ${line#ok * - }" ;;
	"# "*) diag "${line#\# }" ;;
	esac
done <"$TMP/tap"
check "the matrix ran and every cell held (status $rc)" test "$rc" = 0
check "the matrix wrote its checks (plan line)" grep -q '^1\.\.[1-9]' "$TMP/tap"
[ $rc = 0 ] || tail -20 "$TMP/log" | while IFS= read -r line; do diag "$line"; done

finish
