#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# leash-vm-script-timeout: 600
# (every row for the fork caller and libleash: 170-190 s of one emulated CPU
# here, past half of the default 300 s; a slower CI host gets room)
#
# The truth matrix (issue 39) on the VM tier's pure cgroup v2 with the memory,
# pids, cpu and io controllers: tests/truth/matrix.py --tier vm in a parent of
# this script's, its checks renumbered into this script's TAP, for the columns
# of the CLI, the Python fork context and libleash (91-truth-callers.sh, in the
# other VM, runs the other callers' columns). A failing cell fails here (never
# a skip), and so does a column that differs from the committed docs/TRUTH.md's
# (the diff is printed); the section is left in the build tree (truth-vm.md,
# each script writing its own columns there) for the host to copy into
# docs/TRUTH.md.

. "$(dirname "$0")/../../integration/lib.sh"

# truth_vm CALLERS: the matrix's columns CALLERS (matrix.py --callers) as this script's checks
truth_vm() {
	local rc line
	# the matrix makes its own parent and runs placement none as uid 65534: root's
	[ "$(id -u)" = 0 ] || skip_all "the matrix runs as root (the uid-1000 phase has no section of its own)"
	vm_python memory pids
	# the other script's columns, written there first, stay (matrix.py --write keeps them)
	[ "$LEASH_SRCDIR/docs/TRUTH.md" -nt "$BUILD/truth-vm.md" ] && cp "$LEASH_SRCDIR/docs/TRUTH.md" "$BUILD/truth-vm.md"
	TRUTH_PARENT=$PARENT LEASH_PYTHONPATH=$BUILD/python "$PY" "$LEASH_SRCDIR/tests/truth/matrix.py" --tier vm \
		--callers "$1" --compare "$LEASH_SRCDIR/docs/TRUTH.md" --write "$BUILD/truth-vm.md" >"$TMP/tap" 2>"$TMP/log"
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
}

[ "${TRUTH_VM_LIB:-}" = 1 ] && return 0
truth_vm CLI,fork,libleash
finish
