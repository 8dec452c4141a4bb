#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# An ordinary user in a login session, where the user manager refuses to move leash into
# the shared unit's leaf (issue 40: the move is asked without waiting, and its reply is
# read only after the job's cgroup was made there, before the job's first process).
# The refusal is a real one: a unit named leash-jobs.service that the user started
# without Delegate=yes ("Process migration not available on non-delegated units").
# Then the job's cgroup in that unit is removed, the manager's words are in the report's
# placement, the job runs in a scope of leash's own instead, and nothing is left: no job
# cgroup in the unit, no leash scope, no process of the job.  The control: a launch into
# the real shared unit (Delegate=yes) is moved, and its report names no refusal.

. "$(dirname "$0")/lib.sh"

shared=$CG/user.slice/user-1000.slice/user@1000.service/leash.slice/leash-jobs.service
echo "leash-jobs.service" >>/run/leash-vm-stopped-scopes

# the control first: the packaged path, the shared unit with Delegate=yes
run_leash -o "$TMP/ok.json" -- cat /proc/self/cgroup
tap_is "$RC" 0 "control: a launch into the shared unit (stderr: $ERR)"
tap_check "control: its job was in leash-jobs.service ($OUT)" grep -q '/leash-jobs.service/' <<<"$OUT"
okwhy=$(jget "$TMP/ok.json" placement.why)
no_refusal() { ! grep -q refused <<<"$okwhy"; }
tap_check "control: no refusal in its placement ($okwhy)" no_refusal

# a leash-jobs.service without Delegate=yes in its place
systemctl --user stop leash-jobs.service 2>/dev/null
wait_for 30 test ! -e "$shared"
systemd-run --user --quiet --unit=leash-jobs.service --slice=leash.slice sleep infinity
tap_is "$(systemctl --user show -P Delegate leash-jobs.service)" no "a stand-in leash-jobs.service without Delegate=yes"

run_leash -o "$TMP/refused.json" -- cat /proc/self/cgroup
why=$(jget "$TMP/refused.json" placement.why)
tap_is "$RC" 0 "the launch still runs its job (stderr: $ERR)"
tap_check "the manager's refusal is named in the placement ($why)" \
	grep -q 'refused to move leash into leash-jobs.service.*non-delegated' <<<"$why"
tap_check "the job ran in a scope of leash's own ($OUT)" \
	grep -Eq '/leash.slice/leash-run-[0-9]+\.scope/[^/]+$' <<<"$OUT"
left=$(find "$shared" -mindepth 1 -maxdepth 1 -type d ! -name leash-leaf 2>&1)
tap_is "$left" "" "no job cgroup is left in the stand-in unit"
wait_for 30 no_leash_scope
tap_check "no leash scope is left" no_leash_scope

systemctl --user stop leash-jobs.service
wait_for 30 test ! -e "$shared"
tap_check "the stand-in is gone" test ! -e "$shared"

tap_plan "$_tap_n"
tap_done
