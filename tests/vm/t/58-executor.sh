#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# leash-vm-phase: root
# (CI's run of 35f8368 here: the root VM's phase 854 s, the user VM's 975 s, of which this
# script ~69 s: in the root VM, about 923 s against 906 s)
#
# Issue 42's leash.Executor on a real cgroup-v2 kernel, where each task's job
# has a cgroup with the memory controller: a memory bomb among 50 tasks ends
# only its own future (memory.max, where the host's control is RLIMIT_AS;
# the control: the same bomb without the limit gets its 512 MiB); each task a
# fresh job in every context; cancel and shutdown(cancel_futures=True) end
# running tasks by the ladder and leave no process and no cgroup; a study's
# report sums its tasks; cancelling an awaiting asyncio task ends its job.
# (tests/python runs them all in make check; t/56-study.sh proves the study's
# memory budget.)

. "$(dirname "$0")/../../integration/lib.sh"

vm_python pytest memory

py=$LEASH_SRCDIR/tests/python/test_executor.py
py_tests "$py::test_memory_bomb_among_50_ends_only_its_own_future" \
	"$py::test_executor_runs_each_task_in_a_fresh_job" \
	"$py::test_cancel_ends_a_running_task_by_the_ladder" \
	"$py::test_shutdown_cancel_futures_ends_running_and_pending" \
	"$py::test_study_nests_tasks_and_sums_them" \
	"$py::test_cancelling_the_awaiting_task_ends_the_job"
finish
