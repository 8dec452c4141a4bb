#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# An ordinary user (uid 1000): `systemctl --user stop` of a user service whose main
# process is a shell running `leash run`, and of one whose shell runs Python calling
# leash.limit in a loop, ends the job with reason interrupted as root's does (40-stop.sh)
# and leaves nothing; `systemctl --user stop leash.slice` says interrupted too.

. "$(dirname "$0")/lib.sh"

stop_proofs

# systemctl --user stop leash.slice while a job runs: the same reason as root's.
"$LEASH" run -w 60s -o "$TMP/slice.json" -- sleep 50 >/dev/null 2>&1 &
lpid=$!
wait_for 120 grep -q 'leash-leaf$' "/proc/$lpid/cgroup"
wait_for 120 pgrep -x -P "$lpid" sleep >/dev/null
stopped_scope "/proc/$lpid/cgroup"
systemctl --user stop leash.slice
tap_is "$?" 0 "systemctl --user stop leash.slice"
wait "$lpid"
rc=$?
tap_is "$(jget "$TMP/slice.json" reason)" interrupted "its report says interrupted, as root's (exit $rc)"
tap_plan "$_tap_n"
tap_done
