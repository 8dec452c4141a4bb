#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The pynisher drop-in on a real cgroup-v2 kernel (issue 24): the project's own
# tests of it (tests/python/test_pynisher_compat.py) with the memory and pids
# controllers, in the contexts fork, spawn and forkserver: an OOM kill is
# MemoryLimitException and no RLIMIT_AS is set; 0.x's num_processes stops a
# pool (pids.max); 0.x's exit codes; no child of the caller after a call. The
# host runs the same file without controllers (make check). Left out here,
# for the emulated CPU's time: scikit-learn's fit (make check runs it where
# scikit-learn is installed) and the helpers that need no kernel.

. "$(dirname "$0")/../../integration/lib.sh"

PY=/usr/bin/python3
BUILD=${LEASH_VM_BUILDDIR:-}
SRC=$(cd "$(dirname "$0")/../../.." && pwd)
if [ -z "$BUILD" ] || ! ls "$BUILD"/python/leash/_leash*.so >/dev/null 2>&1; then
	skip_all "the Python package is not built in ${BUILD:-the build tree}"
fi
"$PY" -c 'import pytest' 2>/dev/null || skip_all "pytest is not installed for $PY (Debian: python3-pytest)"
for c in memory pids; do
	has_controller $c || { not_ok "the $c controller is available under $PARENT"; finish; }
done

# tests/python/run.sh's TAP (one line per test, in this script's parent
# cgroup), renumbered into this script's
LEASH_TEST_PARENT=$PARENT PYTHON=$PY LEASH_PYTHONPATH=$BUILD/python TMPDIR=$TMP \
	"$SRC/tests/python/run.sh" test_pynisher_compat.py \
	-k "not sklearn and not util_helpers and not terminate_process_tree and not reaches_leash" \
	>"$TMP/tap" 2>"$TMP/log"
rc=$?
while IFS= read -r line; do
	case $line in
	"not ok "*) not_ok "${line#not ok * - }" ;;
	"ok "*"# SKIP"*) T_N=$((T_N + 1)); echo "ok $T_N - ${line#ok * - }" ;;
	"ok "*) ok "${line#ok * - }" ;;
	esac
done <"$TMP/tap"
check "the drop-in's tests ran and passed (status $rc)" test "$rc" = 0
[ $rc = 0 ] || grep -E '^(E |>|_{5,} )' "$TMP/log" | grep -v 'Full diff' | head -60 | while IFS= read -r line; do diag "$line"; done

finish
