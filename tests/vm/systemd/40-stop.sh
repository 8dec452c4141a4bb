#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Root: `systemctl stop` of a system service whose main process is a shell running
# `leash run`, and of one whose shell runs Python calling leash.limit in a loop, ends the
# job through leash's ladder with reason interrupted and leaves nothing: leash's scope is
# bound to the unit that started it (BindsTo=), so stopping that unit stops the scope;
# but not to a unit that is no longer active (BindsTo= would start it again).

. "$(dirname "$0")/lib.sh"

stop_proofs

# A process a stopped service left behind (KillMode=process) runs leash: that unit is
# inactive, and BindsTo= on it would start it again (the transaction pulls it in), so
# the scope is bound to nothing.  The service counts its starts in runs.
unit=vm-leftover-$$
"${SRUN[@]}" --quiet --unit="$unit" -p KillMode=process -E LEASH="$LEASH" -E DIR="$TMP" \
	-E LEASH_CONFIG_DIR="$LEASH_CONFIG_DIR" /bin/sh -c \
	'echo start >>"$DIR/runs"; (until [ -e "$DIR/go" ]; do sleep 0.2; done; "$LEASH" run -o "$DIR/left.json" -- true; echo $? >>"$DIR/left.rc") & exit 0'
wait_for 120 bash -c "[[ \$(systemctl show -P ActiveState $unit.service) == inactive ]]"
tap_is "$(systemctl show -P ActiveState "$unit.service")" inactive "the service has stopped, a process of it left behind"
touch "$TMP/go"
wait_for 120 test -s "$TMP/left.rc"
tap_is "$(jget "$TMP/left.json" reason)" ok "leash run from that process ran its job ($(jget "$TMP/left.json" placement.why))"
# a start it caused was in the scope's own transaction: queued before leash had its
# scope; wait until the unit has no job and is inactive again, then count
settled() { [[ $(systemctl show -P Job "$unit.service") == "" && $(systemctl show -P ActiveState "$unit.service") == inactive ]]; }
wait_for 120 settled
tap_is "$(grep -c start "$TMP/runs")" 1 "and did not start the stopped service again"
systemctl stop "$unit.service" 2>/dev/null
systemctl reset-failed "$unit.service" 2>/dev/null
tap_plan "$_tap_n"
tap_done
