# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared by the integration tests (bash). TAP out; exit 0 pass (a whole-script
# skip is the plan "1..0 # SKIP reason" and exit 0: the automake TAP driver
# counts exit 77 as an ERROR), 1 fail.
# Each test runs leash on this host's cgroup2 under a private parent cgroup and
# checks at exit that it left no cgroup and no process behind.
set -u

: "${LEASH:?LEASH must point at the leash binary}"
: "${HELPERS:?HELPERS must point at tests/helpers}"
T_N=0
T_FAILED=0
T_NAME=$(basename "$0" .sh)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/leash-test.XXXXXX")

# skip_all REASON: the whole script cannot run here (removes what lib.sh made)
skip_all() {
        # no check yet: a plan of none; after some (lib.sh's own, in the VM
        # tier), the rest skipped as one check and the plan of what ran
        if [ "${T_N:-0}" -gt 0 ]; then
                T_N=$((T_N + 1))
                echo "ok $T_N # SKIP the rest: $*"
                echo "1..$T_N"
        else
                echo "1..0 # SKIP $*"
        fi
        [ -n "${PARENT:-}" ] && rmdir "$PARENT" 2>/dev/null && rmdir "$(dirname "$PARENT")" 2>/dev/null
        rm -rf "$TMP" ${NOBODY_DIR:+"$NOBODY_DIR"}
        exit 0
}

ok() { T_N=$((T_N + 1)); echo "ok $T_N - $*"; }
not_ok() { T_N=$((T_N + 1)); T_FAILED=$((T_FAILED + 1)); echo "not ok $T_N - $*"; }
# skip DESCRIPTION: this check does not apply here ($SKIP_WHY says why)
skip() {
        T_N=$((T_N + 1))
        echo "ok $T_N # SKIP $* ($SKIP_WHY)"
}
diag() { echo "# $*"; }
# check NAME CMD...: ok when CMD succeeds
check() {
        local name=$1
        shift
        if "$@"; then ok "$name"; else not_ok "$name"; fi
}

[ "$(id -u)" = 0 ] || [ -n "${LEASH_TEST_PARENT:-}" ] || skip_all "needs root, or LEASH_TEST_PARENT set to a delegated cgroup"

CG2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
[ -n "$CG2" ] || skip_all "no cgroup2 mount on this host"

# A private parent per test script so leftovers are attributable.
if [ -n "${LEASH_TEST_PARENT:-}" ]; then
        PARENT="$LEASH_TEST_PARENT/t-$T_NAME-$$"
else
        PARENT="$CG2/leash-test/t-$T_NAME-$$"
fi
mkdir -p "$PARENT" 2>/dev/null || skip_all "cannot create $PARENT"
# hand the test parent the controllers its parent has, so limits are real where possible
tp=$(dirname "$PARENT")
ctl=$(sed 's/\([a-z_]*\)/+\1/g' "$tp/cgroup.controllers" 2>/dev/null)
[ -z "$ctl" ] || echo "$ctl" >"$tp/cgroup.subtree_control" 2>/dev/null || true
ctl=$(sed 's/\([a-z_]*\)/+\1/g' "$PARENT/cgroup.controllers" 2>/dev/null)
[ -z "$ctl" ] || echo "$ctl" >"$PARENT/cgroup.subtree_control" 2>/dev/null || true

has_controller() { grep -qw "$1" "$PARENT/cgroup.controllers" 2>/dev/null; }

# Where controllers are required (the VM tier), their absence is a failure, not
# a quiet switch to the degraded branches of the tests.
if [ "${LEASH_TEST_REQUIRE_CONTROLLERS:-0}" = 1 ]; then
        for c in memory pids cpu; do
                if has_controller $c; then ok "the $c controller reaches the test parent"
                else not_ok "the $c controller reaches the test parent (required here)"; fi
        done
fi

# run_leash ARGS...: leash run with the test parent; sets RC, OUT, ERR, REPORT
run_leash() {
        "$LEASH" run --cgroup-parent "$PARENT" "$@" >"$TMP/out" 2>"$TMP/err"
        RC=$?
        OUT=$(cat "$TMP/out")
        ERR=$(cat "$TMP/err")
}

# Debian's interpreter: python3 on PATH may be a pyenv shim without json's
# strictness options or with another version (tests use only the standard library)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3) || skip_all "no python3 (the tests read JSON with it)"

# jq-free JSON field access: jget FILE DOTTED.PATH -> value (null, numbers, strings raw)
jget() {
        "$PY" - "$1" "$2" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2].split('.'):
    if isinstance(v, list):
        v = v[int(k)] if int(k) < len(v) else None
    elif isinstance(v, dict):
        v = v.get(k)
    else:
        v = None
    if v is None:
        break
print('null' if v is None else (json.dumps(v) if isinstance(v, (dict, list)) else v))
PY
}

# float comparison: fcmp "A < B"
fcmp() { "$PY" -c "import sys; sys.exit(0 if ($1) else 1)"; }

# A job run as nobody must reach what it runs and the directories it works
# in; the build tree and $TMP may not do: a package build (dpkg-buildpackage,
# rpmbuild) runs in a 0700 directory, and TMPDIR may point into one.
# as_nobody CMD...: CMD as uid/gid 65534 without supplementary groups
slurm_hook() { # NAME [ENV...]: leash's Slurm hook NAME as slurmd runs it, for job $JOB of
        # SLURM_HOOK_UID (default 0, root; 65534 is nobody): argv[0] is the admin's
        # wrapper name and --config-dir=$LEASH_CONFIG_DIR its argument (the TaskProlog
        # takes its configuration from nothing else: its environment is the job's);
        # SLURM_HOOKS_NO_ARG=1 passes none, for control runs against builds from
        # before issue 22, which took it from the environment
        local name=$1 uid=${SLURM_HOOK_UID:-0} user=root arg="--config-dir=$LEASH_CONFIG_DIR"
        shift
        [ "$uid" = 0 ] || user=$(getent passwd "$uid" | cut -d: -f1)
        [ "${SLURM_HOOKS_NO_ARG:-0}" = 1 ] && arg=
        env -i LEASH="$LEASH" LEASH_CONFIG_DIR="$LEASH_CONFIG_DIR" HOOK_ARG="$arg" \
                SLURM_JOB_ID=$JOB SLURM_JOB_UID="$uid" SLURM_JOB_GID="$uid" \
                SLURM_JOB_USER="${user:-nobody}" SLURM_JOB_PARTITION=debug SLURMD_NODENAME=testnode "$@" \
                bash -c 'exec -a "$0" "$LEASH" ${HOOK_ARG:+"$HOOK_ARG"}' "slurm-$name"
}

as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
# nobody_reaches PATH: nobody can search (a directory) or execute (a file) PATH
nobody_reaches() { command -v setpriv >/dev/null && as_nobody test -x "$1" 2>/dev/null; }
# nobody_dir: sets NOBODY_DIR to a fresh root-owned 0755 directory that nobody
# can enter (removed by finish); returns 1 with SKIP_WHY where none can be had
NOBODY_DIR=
nobody_dir() {
        local base d
        [ -n "$NOBODY_DIR" ] && return 0
        command -v setpriv >/dev/null || { SKIP_WHY="no setpriv to check what nobody can reach"; return 1; }
        for base in ${TMPDIR:-} /tmp /var/tmp /run /dev/shm; do
                d=$(mktemp -d "$base/leash-nobody.XXXXXX" 2>/dev/null) || continue
                chmod 0755 "$d"
                if nobody_reaches "$d"; then NOBODY_DIR=$d; return 0; fi
                rmdir "$d"
        done
        SKIP_WHY="no directory the user nobody can enter (tried ${TMPDIR:+$TMPDIR }/tmp /var/tmp /run /dev/shm)"
        return 1
}
# nobody_exec FILE: sets NOBODY_EXEC to FILE, or where nobody cannot execute
# it, to a copy (0755) in NOBODY_DIR; returns 1 with SKIP_WHY where neither
# works (not in $(...): NOBODY_DIR must reach finish)
nobody_exec() {
        NOBODY_EXEC=$1
        nobody_reaches "$1" && return 0
        nobody_dir || return 1
        NOBODY_EXEC=$NOBODY_DIR/${1##*/}
        install -m 0755 "$1" "$NOBODY_EXEC" && nobody_reaches "$NOBODY_EXEC" && return 0
        SKIP_WHY="nobody cannot execute $1, nor a copy of it in $NOBODY_DIR"
        return 1
}

# no job cgroup may remain under the test parent
no_leftover_cgroups() {
        local left
        left=$(find "$PARENT" -mindepth 1 -type d 2>/dev/null)
        [ -z "$left" ] || { diag "leftover cgroups: $left"; return 1; }
}

# escaped_honest REPORT SURVIVORS: no escapee the report calls ended or killed
# is alive, and survivors (SURVIVORS not empty) come with escaped_incomplete
# true (issue 22.10: never "ended" about a live process)
escaped_honest() {
        "$PY" -c 'import json, sys
r = json.load(open(sys.argv[1]))
for e in r["escaped"]:
    try:
        alive = open("/proc/%d/stat" % e["pid"]).read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        alive = False
    if alive and e["end"] != "running":
        sys.exit("pid %d alive, end %s" % (e["pid"], e["end"]))
if sys.argv[2] and not r.get("escaped_incomplete"):
    sys.exit("survivors, escaped_incomplete not true")' "$1" "$2"
}

# pid_gone PID [WAIT_MS]: the process does not exist (zombies count as
# gone; not a process whose main thread ended while another runs: its
# /proc/PID/status says Z too, its other tasks' do not)
pid_gone() {
        local pid=$1 wait_ms=${2:-0} i
        for ((i = 0; i <= wait_ms / 10; i++)); do
                if [ ! -e "/proc/$pid" ] || ! grep -h '^State:' "/proc/$pid/task/"*/status 2>/dev/null | grep -qv 'Z'; then
                        return 0
                fi
                [ "$wait_ms" -gt 0 ] && sleep 0.01
        done
        return 1
}

# vm_python [pytest] CONTROLLER...: the VM tier's Python scripts' preamble:
# the package built in the build tree (sets BUILD; else the script is skipped),
# pytest where the script runs tests/python (else skipped), and each
# controller under $PARENT (else a failure: the VM tier has them all)
vm_python() {
        local c
        BUILD=${LEASH_VM_BUILDDIR:-}
        if [ -z "$BUILD" ] || ! ls "$BUILD"/python/leash/_leash*.so >/dev/null 2>&1; then
                skip_all "the Python package is not built in ${BUILD:-the build tree}"
        fi
        if [ "${1:-}" = pytest ]; then
                shift
                "$PY" -c 'import pytest' 2>/dev/null || skip_all "pytest is not installed for $PY (Debian: python3-pytest)"
        fi
        for c in "$@"; do
                has_controller "$c" || { not_ok "the $c controller is available under $PARENT"; finish; }
        done
}

# py_tests TEST...: tests/python/run.sh on those pytest ids (the VM tier's
# Python proofs), under a parent of this script's own, its TAP re-emitted as
# this script's checks; a run that fails to start or report is a failure
py_tests() {
        local rc ran=0 line
        LEASH_TEST_PARENT=$PARENT PYTHON=$PY LEASH_PYTHONPATH=${LEASH_VM_BUILDDIR:-$LEASH_BUILDDIR}/python \
                "$LEASH_SRCDIR/tests/python/run.sh" "$@" >"$TMP/py-tap" 2>"$TMP/py-log"
        rc=$?
        while IFS= read -r line; do
                case $line in
                "ok "*" # SKIP"*) T_N=$((T_N + 1)); echo "ok $T_N # SKIP ${line#* # SKIP }"; ran=$((ran + 1)) ;;
                "ok "*) ok "${line#ok * - }"; ran=$((ran + 1)) ;;
                "not ok "*) not_ok "${line#not ok * - }"; ran=$((ran + 1)) ;;
                esac
        done <"$TMP/py-tap"
        if [ "$ran" -eq 0 ] || [ "$rc" -ne 0 ]; then
                not_ok "tests/python/run.sh ran the tests (exit $rc, $ran results)"
                sed 's/^/# /' "$TMP/py-log" | tail -60
        fi
        [ "$T_FAILED" -eq 0 ] || grep -E '^(E |FAILED|ERROR)' "$TMP/py-log" | head -40 | sed 's/^/# /'
}

finish() {
        local rc=0
        if no_leftover_cgroups; then ok "no cgroup left behind"; else not_ok "no cgroup left behind"; fi
        # remove the private parent (and the shared one if empty)
        rmdir "$PARENT" 2>/dev/null
        rmdir "$(dirname "$PARENT")" 2>/dev/null || true
        echo "1..$T_N"
        rm -rf "$TMP" ${NOBODY_DIR:+"$NOBODY_DIR"}
        [ "$T_FAILED" -eq 0 ] || rc=1
        exit $rc
}
