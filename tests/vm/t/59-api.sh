#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# leash-vm-phase: root
# (the root VM's phase 798 s, the user VM's 805 s here before this script and
# user-20-api.sh, ~42 s and ~39 s: one in each)
#
# libleash's own tests on a real cgroup-v2 kernel, as root: tests/api/run.sh (every call
# of <leash/leash.h> through libleash.so.0, and the engine's edges through its internal
# API: the watchdog, owned jobs and their sampler, devices, forks while threads
# allocate, the sentinel).  make check runs them on the host, which has no controller;
# user-20-api.sh runs them again as uid 1000 in a delegated cgroup.

export API_TEST=$LEASH_VM_BUILDDIR/tests/api/test-job ENGINE_TEST=$LEASH_VM_BUILDDIR/tests/api/test-engine
exec bash "$LEASH_SRCDIR/tests/api/run.sh"
