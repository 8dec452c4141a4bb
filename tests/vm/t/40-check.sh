#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# leash check as root on a pure cgroup-v2 kernel with every controller: exit 0, v2, all
# controllers, every cgroup limit enforceable by its controller.

. "$(dirname "$0")/../../integration/lib.sh"

# Without --cgroup-parent: what a user would type.
before=$(find "$CG2" -type d | sort)
"$LEASH" check >"$TMP/c" 2>&1
rc=$?
sed 's/^/# /' "$TMP/c"
check "leash check: exit 0" test "$rc" = 0
check "leash check: cgroup v2 (unified)" grep -Eq '^cgroup mode: *v2 \(unified\)' "$TMP/c"
check "leash check: every controller" grep -Eq '^controllers a job gets: *memory=yes pids=yes cpu=yes io=yes' "$TMP/c"
for l in memory memory_high swap pids cpus; do
	check "leash check: $l enforced by cgroup" grep -Eq "^  $l +cgroup +ok" "$TMP/c"
done
check "leash check: verdict ok" grep -q '^verdict: *ok' "$TMP/c"
# leash check only looks; it must not leave a cgroup of its own.
new=$(comm -13 <(echo "$before") <(find "$CG2" -type d | sort))
check "leash check: leaves no new cgroup${new:+ (new: $new)}" test -z "$new"
finish
