#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Issue 22.10 on a real cgroup-v2 kernel with a pid space of its own: a job
# that keeps leash's uid leaves its cgroup and runs a fork-exit chain (each
# link forks the next and exits at once; leash, a subreaper, inherits every
# link). Two shapes: the links piled up as zombies before leash looks (5000,
# beyond the 4096 entries the walk used to stop at), and a chain still
# churning while leash walks (20000 links). Nothing of the chain may outlive
# leash, or the report must say so (escaped_incomplete) and never call a live
# process ended or killed. The bounded version of the first shape runs on the
# host in tests/integration/hostile.sh.

. "$(dirname "$0")/../../integration/lib.sh"

H=$HELPERS/lh-hostile
OTHER=$PARENT/other
JOBS=$PARENT/jobs
mkdir "$OTHER" "$JOBS"

# chain_run NAME SHELL-CMD: leash runs the job (report $TMP/c.json), then the checks
chain_run() {
        local name=$1 survivors=
        rm -f "$TMP/c.json"
        "$LEASH" run --cgroup-parent "$JOBS" -q -w 120 -o "$TMP/c.json" -- sh -c "$2" >"$TMP/cout" 2>"$TMP/cerr"
        RC=$?
        for _ in $(seq 60); do survivors=$(cat "$OTHER/cgroup.procs"); [ -z "$survivors" ] && break; sleep 0.05; done
        # Under software emulation the walks may not finish within leash's
        # bound (5 s): then the report must say so (escaped_incomplete), and
        # the two checks below accept that; the third holds either way.
        incomplete=$(jget "$TMP/c.json" escaped_incomplete)
        check "$name: the job ends ok (0), or the report says its walk was incomplete" \
                bash -c "[ '$RC/$(jget "$TMP/c.json" reason)' = 0/ok ] || [ '$RC/$(jget "$TMP/c.json" reason)' = 124/wall_time ] || [ '$incomplete' = True ]"
        check "$name: nothing of the chain outlives leash (left: ${survivors:-none}), or the report says it may have" \
                bash -c "[ -z '$survivors' ] || [ '$incomplete' = True ]"
        check "$name: no live process called ended or killed; survivors only with escaped_incomplete" \
                escaped_honest "$TMP/c.json" "$survivors"
        diag "$name: exit $RC, reason $(jget "$TMP/c.json" reason), escaped.0 $(jget "$TMP/c.json" escaped.0.end), unnamed $(jget "$TMP/c.json" escaped_unnamed), incomplete $(jget "$TMP/c.json" escaped_incomplete); leash said: $(head -c 300 "$TMP/cerr" | tr '\n' '|')"
        echo 1 >"$OTHER/cgroup.kill" 2>/dev/null
        for _ in $(seq 100); do grep -q 'populated 0' "$OTHER/cgroup.events" && break; sleep 0.02; done
        rm -rf "$TMP/chain-done"
}

chain_run "5000 links piled up" \
        "$H write-self $OTHER/cgroup.procs + chain 5000 + mkdir $TMP/chain-done + sleep 60 & while [ ! -d $TMP/chain-done ]; do sleep 0.05; done; exit 0"
chain_run "20000 links churning while leash walks" \
        "$H write-self $OTHER/cgroup.procs + chain 20000 + sleep 60 & while ! grep -q . $OTHER/cgroup.procs; do sleep 0.01; done; exit 0"

rmdir "$OTHER" "$JOBS"
finish
