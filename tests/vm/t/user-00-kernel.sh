#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The delegation self-check, as uid 1000, without leash: the guest suite hands this user
# a cgroup (LEASH_TEST_PARENT) whose directory, cgroup.procs, cgroup.threads and
# cgroup.subtree_control it owns, but not its limit files, and starts it in a leaf child.
# Proves the user can enable controllers below, create a job cgroup, move into it, be
# OOM-killed by its own memory.max, and cannot raise the limits it was given.

set -u
. "$(dirname "$0")/../tap.sh"

hog=${LEASH_VM_HOG:?LEASH_VM_HOG is not set}
parent=${LEASH_TEST_PARENT:?LEASH_TEST_PARENT is not set}
job=$parent/vm-userjob-$$

cleanup() { [[ -d $job ]] && rmdir "$job" 2>/dev/null; }
trap cleanup EXIT

tap_plan 8

tap_is "$(id -u)" 1000 "running as uid 1000"
self=$(sed -n 's/^0:://p' /proc/self/cgroup)
tap_is "/sys/fs/cgroup$self" "$parent/shell" "started in the delegated leaf $parent/shell"
if echo "+memory +pids +cpu" >"$parent/cgroup.subtree_control" 2>/dev/null; then
	tap_ok "the user enables memory, pids and cpu below its delegated cgroup"
else
	tap_fail "the user enables memory, pids and cpu below its delegated cgroup"
fi
if (echo max >"$parent/memory.max") 2>/dev/null; then
	tap_fail "the user cannot raise its own memory.max"
else
	tap_ok "the user cannot raise its own memory.max"
fi

mkdir "$job" || { tap_fail "mkdir $job"; tap_done; }
echo 32M >"$job/memory.max" && echo 0 >"$job/memory.swap.max"
tap_is "$(cat "$job/memory.max")" $((32 * 1048576)) "the user sets memory.max of its job cgroup"
bash -c 'echo $$ >"$1/cgroup.procs" && exec "$2" alloc 64' sh "$job" "$hog" >/dev/null 2>&1
tap_is $? 137 "64 MiB in the user's 32 MiB job cgroup is SIGKILLed"
oom=$(cg_key "$job/memory.events" oom_kill)
tap_between "${oom:-0}" 1 1000000 "memory.events of the user's job counts the OOM kill ($oom)"
tap_check "the user removes its job cgroup" rmdir "$job"
tap_done
