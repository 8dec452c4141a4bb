#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Issue 38's Python proofs on a real cgroup-v2 kernel, where a function's job
# has its own cgroup with the memory and pids controllers: a hostile result
# (the 40,000-int collision set) neither holds its job's limits open nor
# another thread's call (wall_time=2, grace=1 ended within 3.5 s; a runaway
# with wall_time=3 within 4.5 s); a deep tuple that would be hashed, the
# empty-set frame, copyreg's extension codes and Ctrl-C during a decode; the
# caller undumpable while a call runs; a function run as another user gets
# none of the caller's fds; a function's SystemExit arrives as RemoteError.
# Each test carries its control (tests/python: the same attack through
# pickle.loads, a dumpable process, keep_fds=, trust_result=True). The
# whole tests/python suite runs in make check; under emulation it is too long
# for a guest script, so this runs the tests whose outcome a kernel could
# change, through tests/python/run.sh, and re-emits its TAP.

. "$(dirname "$0")/../../integration/lib.sh"

vm_python pytest memory pids

py=$LEASH_SRCDIR/tests/python
set -- \
	"$py/test_result_bounds.py::test_a_collision_result_neither_holds_its_limits_nor_another_threads_call" \
	"$py/test_result_bounds.py::test_a_collision_result_that_returns_is_refused" \
	"$py/test_result_bounds.py::test_a_deep_tuple_that_would_be_hashed_is_refused" \
	"$py/test_result_bounds.py::test_an_empty_set_frame_grows_the_caller_by_at_most_the_stated_bound" \
	"$py/test_result_bounds.py::test_extension_codes_are_refused_even_when_copyreg_has_them_cached" \
	"$py/test_result_bounds.py::test_ctrl_c_interrupts_a_decode" \
	"$py/test_undumpable.py" \
	"$py/test_keep_fds.py::test_a_function_run_as_another_user_gets_none_of_the_callers_fds" \
	"$py/test_keep_fds.py::test_control_keep_fds_hands_the_named_fd_on" \
	"$py/test_exceptions.py::test_a_base_exception_that_is_not_an_exception_arrives_as_remote_error"

py_tests "$@"
finish
