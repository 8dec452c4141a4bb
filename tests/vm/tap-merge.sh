# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
#
# Sourced by the VM tier's guest suites (guest-suite.sh, systemd-suite.sh): one TAP stream
# out of many scripts' TAP, renumbered and labelled, with the counts the status line gives.
# merge_tap's rules: a script's own failures count one each; a script that times out,
# exits non-zero without a failing test, or runs a different number of tests than it
# planned counts one more failure; exit 77 with no test run counts as one skip.

shopt -s extglob

n=0
pass=0
fail=0
skip=0

# tap_escape TEXT: a description with every '#' escaped, so that only our directives count.
tap_escape() { local d=${1//\\#/#}; d=${d//#/\\#}; echo "${d%%+([[:space:]])}"; }
emit_ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n - $(tap_escape "$1")"; }
emit_not_ok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $(tap_escape "$1")"; }
emit_skip() { n=$((n + 1)); skip=$((skip + 1)); echo "ok $n - $(tap_escape "$1") # SKIP $2"; }

# merge_tap LABEL REL OUT RC SCRIPT_TIMEOUT: merge the TAP in file OUT of the script REL,
# which exited RC.
merge_tap() {
	local label=$1 rel=$2 out=$3 rc=$4 script_timeout=$5
	local line planned=-1 plan_why= ran=0 sfail=0 desc num notok directive why
	while IFS= read -r line; do
		if [[ $line =~ ^1\.\.([0-9]+)(.*)$ ]]; then
			planned=${BASH_REMATCH[1]}
			plan_why=${BASH_REMATCH[2]##*([[:space:]])\#*([[:space:]])@([Ss][Kk][Ii][Pp])}
		elif [[ $line =~ ^(not\ )?ok([[:space:]]+[0-9]+)?[[:space:]]*(-[[:space:]]*)?(.*)$ ]]; then
			ran=$((ran + 1))
			notok=${BASH_REMATCH[1]}
			num=${BASH_REMATCH[2]}
			num=${num##*[[:space:]]}
			desc=${BASH_REMATCH[4]}
			directive=
			if [[ $desc =~ ^(.*[^\\])?\#[[:space:]]*([Ss][Kk][Ii][Pp]|[Tt][Oo][Dd][Oo])([^[:alnum:]].*)?$ ]]; then
				desc=${BASH_REMATCH[1]%%+([[:space:]])}
				directive=${BASH_REMATCH[2]^^}
				why=${BASH_REMATCH[3]##+([[:space:]])}
			fi
			# "not ok # SKIP" is counted as the failure it says it is; a TODO is
			# neither a pass nor a failure.
			if [[ -n $notok && $directive != TODO ]]; then
				sfail=$((sfail + 1))
				emit_not_ok "[$label] $rel: ${num:-?} $desc${directive:+ ($directive ${why})}"
			elif [[ -n $directive ]]; then
				emit_skip "[$label] $rel: ${num:-?} $desc" "${why:-$directive}"
			else
				emit_ok "[$label] $rel: ${num:-?} $desc"
			fi
		elif [[ $line =~ ^Bail\ out! ]]; then
			sfail=$((sfail + 1))
			emit_not_ok "[$label] $rel: $line"
		elif [[ $line =~ ^# ]]; then
			echo "$line"
		elif [[ -n $line ]]; then
			echo "# $line"
		fi
	done <"$out"
	if [[ $rc -eq 124 || $rc -eq 137 ]]; then
		emit_not_ok "[$label] $rel: timed out after ${script_timeout} s"
	elif [[ $rc -eq 77 && $sfail -eq 0 ]]; then
		[[ $ran -gt 0 ]] || emit_skip "[$label] $rel" "exit 77${plan_why:+:$plan_why}"
	elif [[ $rc -eq 0 && $planned -eq 0 && $ran -eq 0 ]]; then
		# a whole-script skip the TAP way: "1..0 # SKIP reason", exit 0
		emit_skip "[$label] $rel" "${plan_why:-planned no test}"
	elif [[ $rc -ne 0 && $sfail -eq 0 ]]; then
		emit_not_ok "[$label] $rel: exited $rc without a failing test"
	elif [[ $planned -lt 0 ]]; then
		emit_not_ok "[$label] $rel: printed no TAP plan"
	elif [[ $planned -ne $ran ]]; then
		emit_not_ok "[$label] $rel: planned $planned tests, ran $ran"
	fi
}
