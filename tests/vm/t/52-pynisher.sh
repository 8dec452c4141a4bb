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

vm_python pytest memory pids

# tests/python/run.sh's TAP (one line per test, in this script's parent
# cgroup), renumbered into this script's
py_tests test_pynisher_compat.py \
	-k "not sklearn and not util_helpers and not terminate_process_tree and not reaches_leash"
finish
