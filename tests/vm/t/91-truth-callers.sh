#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# leash-vm-phase: root
# (in the root VM, after root's tests/integration/*.sh: that VM's phase ended
# ~310 s before the other's in CI's run, which ran 90-truth.sh; this script
# costs none of the VM tier's wall time there)
#
# The truth matrix's vm section (issue 39) for the callers 90-truth.sh leaves:
# leash.limit's spawn and forkserver contexts, the pynisher 1.x and 0.x
# drop-ins and resource_monitor's monitored, each over and under every limit
# a cgroup controller enforces or measures (matrix.py CONTROLLER_ROWS) in
# placement cgroup; their other rows need no controller and read n/a naming
# the host tier's cell, which runs them. A failing cell fails here, and so
# does a column that differs from the committed docs/TRUTH.md's.

TRUTH_VM_LIB=1 . "$(dirname "$0")/90-truth.sh"
truth_vm spawn,forkserver,pynisher,pynisher0,monitored
finish
