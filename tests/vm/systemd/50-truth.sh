#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The truth matrix (issue 39) under systemd as PID 1, as root from a system
# service: tests/truth/matrix.py --tier systemd-vm, whose placement "scope" names
# no parent (leash asks the system manager for its scope) and "none" runs as
# uid 65534: every row for the CLI, fork and libleash; for the spawn and
# forkserver contexts and the drop-ins the memory row in the scope (their jobs
# get the scope's controllers: ~20 s here; the VM tier runs their other
# controller rows, matrix.py SCOPE_ROWS). A failing cell fails here (never a skip), and so does a section
# that differs from the committed docs/TRUTH.md's (the diff is printed); the
# generated file is kept (truth-systemd-vm.md in LEASH_VM_KEEP) for the host to
# copy into docs/TRUTH.md.

. "$(dirname "$0")/lib.sh"

SRC=${LEASH_VM_SRCDIR:-$(cd "$(dirname "$0")/../../.." && pwd)}
BUILD=${LEASH_VM_BUILDDIR:-}
cp "$SRC/docs/TRUTH.md" "$TMP/truth.md"
HELPERS=$BUILD/tests/helpers LEASH_PYTHONPATH=$BUILD/python "$PY" "$SRC/tests/truth/matrix.py" --tier systemd-vm \
	--compare "$SRC/docs/TRUTH.md" --write "$TMP/truth.md" >"$TMP/tap" 2>"$TMP/log"
rc=$?
keep truth-systemd-vm.md "$TMP/truth.md"
truth_tap "$TMP/tap"
tap_check "the matrix ran and every cell held (status $rc)" test "$rc" = 0
tap_check "the matrix wrote its checks (plan line)" grep -q '^1\.\.[1-9]' "$TMP/tap"
[ $rc = 0 ] || tap_diag "$(tail -20 "$TMP/log")"
tap_plan "$_tap_n"
tap_done
