# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
#
# A small TAP library for tests/vm/t/*.sh: the VM proofs must not depend on anything they
# are meant to prove.  Each assertion prints one TAP line; tap_done exits 1 when any
# assertion failed, so a script that observes nothing cannot pass.

_tap_n=0
_tap_failed=0

tap_plan() { echo "1..$1"; }
tap_diag() { local l; while IFS= read -r l; do echo "# $l"; done <<<"$*"; }

tap_ok() {
	_tap_n=$((_tap_n + 1))
	echo "ok $_tap_n - $1"
}

# tap_fail DESC [DIAGNOSTIC...]
tap_fail() {
	_tap_n=$((_tap_n + 1))
	_tap_failed=$((_tap_failed + 1))
	echo "not ok $_tap_n - $1"
	shift
	[[ $# -eq 0 ]] || tap_diag "$*"
}

tap_skip() {
	_tap_n=$((_tap_n + 1))
	echo "ok $_tap_n # SKIP $1"
}

# tap_check DESC CMD...: ok when CMD succeeds.
tap_check() {
	local desc=$1
	shift
	if "$@"; then tap_ok "$desc"; else tap_fail "$desc" "command failed: $*"; fi
}

# tap_is GOT WANT DESC
tap_is() {
	if [[ $1 == "$2" ]]; then
		tap_ok "$3"
	else
		tap_fail "$3" "got '$1', want '$2'"
	fi
}

# tap_between VALUE LOW HIGH DESC: numeric LOW <= VALUE <= HIGH (floats allowed).
tap_between() {
	if [[ $1 =~ ^-?[0-9]+([.][0-9]+)?([eE][-+]?[0-9]+)?$ ]] &&
		awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v + 0 >= lo + 0 && v + 0 <= hi + 0) }'; then
		tap_ok "$4"
	else
		tap_fail "$4" "got '$1', want within [$2, $3]"
	fi
}

tap_done() {
	[[ $_tap_failed -eq 0 ]]
	exit $?
}

# cg_key FILE KEY: the value of "KEY VALUE" in a flat-keyed cgroup file (memory.events...).
cg_key() { awk -v k="$2" '$1 == k { print $2; found = 1 } END { exit !found }' "$1"; }
