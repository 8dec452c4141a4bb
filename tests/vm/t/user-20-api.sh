#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# libleash's own tests (tests/api/run.sh, as 59-api.sh runs them as root) as uid 1000 in
# a delegated cgroup on a real cgroup-v2 kernel: what an ordinary user's program gets.
# The host never runs them as a user with controllers.

export API_TEST=$LEASH_VM_BUILDDIR/tests/api/test-job ENGINE_TEST=$LEASH_VM_BUILDDIR/tests/api/test-engine
exec bash "$LEASH_SRCDIR/tests/api/run.sh"
