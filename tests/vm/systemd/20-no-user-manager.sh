#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# uid 1000 in a real login session (runuser -l) while its user manager cannot run
# (user@1000.service masked for this boot, as a machine without lingering whose manager
# failed would be): leash finds no manager to ask, says so, and runs the job in the
# cgroup-less mode: placement none, memory by RLIMIT_AS, and the report says both.
# Runs as root (to mask and unmask); the user's own scripts (user-*.sh) come after it,
# with the manager back.

. "$(dirname "$0")/lib.sh"

user=$(getent passwd 1000 | cut -d: -f1)
chmod 0755 "$TMP"
install -d -o 1000 -g 1000 "$TMP/u"
systemctl stop user@1000.service 2>/dev/null
systemctl mask --runtime -q user@1000.service
out=$(runuser -l "$user" -c "'$LEASH' run -m 32M -w 60s -o '$TMP/u/none.json' -- '$LEASH_VM_HOG' alloc 200; echo rc=\$?;
	cat /proc/self/cgroup; ls \"\$XDG_RUNTIME_DIR/systemd/private\" 2>&1; '$LEASH' check" 2>&1)
systemctl unmask --runtime -q user@1000.service
systemctl stop user@1000.service 2>/dev/null
keep user-no-manager-report.json "$TMP/u/none.json"
echo "$out" >"$LEASH_VM_KEEP/user-no-manager-check.txt"
tap_diag "$out"
tap_check "the session had no user manager socket" grep -q 'systemd/private.*No such file' <<<"$out"
tap_is "$(jget "$TMP/u/none.json" placement.kind)" none "placement none (why: $(jget "$TMP/u/none.json" placement.why))"
tap_check "the why names the user manager" grep -q 'user manager' <<<"$(jget "$TMP/u/none.json" placement.why)"
tap_is "$(jget "$TMP/u/none.json" limits.memory.enforced_by)" rlimit "memory enforced by RLIMIT_AS, and the report says so"
tap_check "the 200 MiB allocation failed under it (vm-hog exits 3: malloc failed)" grep -qx 'rc=3' <<<"$out"
tap_check "leash check names the cgroup-less mode" grep -q '^placement: *none' <<<"$out"
tap_plan "$_tap_n"
tap_done
