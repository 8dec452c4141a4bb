#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# leash-vm-phase: root
# leash-vm-script-timeout: 600
# (in the root VM, after root's tests/integration/*.sh: that VM's phase ended
# ~310 s before the other's in CI's run, which ran 90-truth.sh; this script
# took 211-212 s here, so the VM tier's wall time stays the other VM's;
# 600 s: a slower CI host gets room)
#
# The truth matrix's vm section (issue 39) for the callers 90-truth.sh leaves:
# leash.limit's spawn and forkserver contexts, the pynisher 1.x and 0.x
# drop-ins and resource_monitor's monitored, each over and under every limit
# in placement cgroup, and in placement none each limit a cgroup controller
# enforces or measures where there is one (matrix.py CONTROLLER_ROWS); their
# other rows in placement none run the host tier's code and read n/a naming
# its cell. A failing cell fails here, and so does a column that differs from
# the committed docs/TRUTH.md's.

TRUTH_VM_LIB=1 . "$(dirname "$0")/90-truth.sh"
truth_vm spawn,forkserver,pynisher,pynisher0,monitored
finish
