#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Issue 26 where the controllers are there: no weak-limit line for memory,
# pids and cpus (memory.max, pids.max, cpu.max enforce them), --strict runs,
# the HTML report names memory.max; and the rest of honest.sh (Ctrl-C, the
# report where users look, parse-time refusals) on a pure cgroup-v2 kernel.
exec bash "$(dirname "$0")/../../integration/honest.sh"
