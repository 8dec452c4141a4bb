#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The hostile suite: a probe job (tests/helpers/lh-probe) tries what an
# untrusted job should not be able to do, under each filter set and action,
# each capability mode and a switched identity. Every forbidden outcome is
# checked against a control run without the restriction, so that a probe
# that cannot do the thing anyway does not pass for the wrong reason.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root (identity switch, capabilities)"
P="$HELPERS/lh-probe"
[ -x "$P" ] || skip_all "no $P"
# Jobs as nobody (and uid 54321) run the probe too: where the build tree is
# out of their reach (a package build's 0700 directory), a copy nobody can run.
NOBODY_WHY=
if ! getent passwd nobody >/dev/null; then
        NOBODY_WHY="no user nobody in this machine's user database"
elif nobody_exec "$P"; then
        P=$NOBODY_EXEC
else
        NOBODY_WHY=$SKIP_WHY
fi

# probe ARGS... -- PROBES...: leash run -q ARGS -- lh-probe PROBES
probe() {
        local args=()
        while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=("$1"); shift; done
        shift
        run_leash -q -o "$TMP/r.json" "${args[@]}" -- "$P" "$@"
}
has() { grep -qxF -- "$1" <<<"$OUT"; }
line() { grep -m1 "^$1" <<<"$OUT"; }
capv() { line "$1:" | awk '{print $2}'; }
expect() { # expect NAME LINE: ok when the probe printed exactly LINE
        if has "$2"; then ok "$1"; else not_ok "$1"; diag "wanted '$2'; got: $(tr '\n' '|' <<<"$OUT") rc=$RC err=$ERR"; fi
}
Z=0000000000000000
# What this machine lets an unfiltered process do, probed without leash: a
# control that the kernel itself refuses (IPv6 off, io_uring disabled, user
# namespaces off, Yama ptrace_scope 3, no perf events) skips with the kernel's
# answer instead of failing; in the VM tier (LEASH_VM=1) nothing may be missing.
HOST=$("$P" tcp-socket udp6-socket netlink-socket io-uring ptrace process-vm clone-newuser clone3 perf load-module bpf unshare-user 2>&1)
host_has() { # host_has PROBE [ANSWER]: the probe answers ANSWER (ok) outside leash
        grep -qxF -- "$1: ${2:-ok}" <<<"$HOST" && return 0
        SKIP_WHY="this machine refuses $1 even without leash: $(grep -m1 "^$1:" <<<"$HOST" || echo no answer)"
        [ "${LEASH_VM:-0}" = 1 ] && { not_ok "$1 works in the VM tier without leash (required there): $SKIP_WHY"; }
        return 1
}

# --- defaults for a root job ---------------------------------------------------
probe --nofile 64 -- caps nnp raise-rlimit fds 3</dev/null
check "defaults: exit 0" test "$RC" = 0
for s in CapEff CapPrm CapInh CapBnd CapAmb; do
        check "defaults: root job has no capabilities: $s=$Z" test "$(capv $s)" = $Z
done
expect "defaults: no_new_privs set" "nnp: 1"
expect "defaults: rlimit cannot be raised above the hard limit" "raise-rlimit: EPERM"
expect "defaults: inherited fd 3 is closed" "fds: none"
check "report: no_new_privs true" test "$(jget "$TMP/r.json" sandbox.no_new_privs)" = True
check "report: effective capabilities empty" test -z "$(jget "$TMP/r.json" sandbox.capabilities.effective)"
check "report: bounding set dropped" test "$(jget "$TMP/r.json" sandbox.capabilities.bounding_dropped)" = True
check "report: identity not switched, uid 0" test "$(jget "$TMP/r.json" sandbox.identity.uid)/$(jget "$TMP/r.json" sandbox.identity.switched)" = 0/False
check "report: no filters" test "$(jget "$TMP/r.json" sandbox.seccomp.filters)" = "[]"

own_eff=$(awk '/^CapEff:/ {print $2}' /proc/self/status)
probe --caps keep -- caps nnp
check "--caps keep: leash's capabilities kept ($own_eff)" test "$(capv CapEff)" = "$own_eff"
expect "--caps keep: no_new_privs still set" "nnp: 1"

probe --caps net_bind_service -- caps
for s in CapEff CapPrm CapBnd CapAmb; do
        check "--caps net_bind_service: $s=0000000000000400" test "$(capv $s)" = 0000000000000400
done
check "report: kept capability named" test "$(jget "$TMP/r.json" sandbox.capabilities.effective)" = net_bind_service

# A reduced bounding set (a container's): leash reads which capabilities are
# there and drops only those (src/sandbox/caps.c); the job's set is empty all
# the same. The control: with --caps keep (no drop) the job gets that set.
RB=-all,+setpcap,+chown,+kill,+net_bind_service
if setpriv --bounding-set "$RB" -- true 2>/dev/null; then
        rb_probe() {
                local args=()
                while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=("$1"); shift; done
                shift
                setpriv --bounding-set "$RB" -- "$LEASH" run --cgroup-parent "$PARENT" -q -o "$TMP/r.json" "${args[@]}" \
                        -- "$P" "$@" >"$TMP/out" 2>"$TMP/err"
                RC=$?
                OUT=$(cat "$TMP/out")
                ERR=$(cat "$TMP/err")
        }
        rb_probe --caps keep -- caps
        check "control: a reduced bounding set reaches a job that keeps it (CapBnd=0000000000000521)" \
                test "$(capv CapBnd)" = 0000000000000521
        rb_probe -- caps
        check "reduced bounding set: the job's is dropped all the same (CapBnd=$Z)" test "$RC/$(capv CapBnd)" = "0/$Z"
        check "reduced bounding set: report says dropped" \
                test "$(jget "$TMP/r.json" sandbox.capabilities.bounding_dropped)" = True
        rb_probe --caps net_bind_service -- caps
        check "reduced bounding set, --caps net_bind_service: CapBnd=0000000000000400" \
                test "$(capv CapBnd)" = 0000000000000400
else
        SKIP_WHY="setpriv cannot reduce the bounding set here"
        for _ in 1 2 3 4; do skip "reduced bounding set"; done
fi

probe --allow-new-privs -- nnp
expect "--allow-new-privs: no_new_privs not set" "nnp: 0"

# --- no-network ------------------------------------------------------------------
# The i386 ABI (int 0x80) exists only where the kernel has 32-bit emulation
# (CONFIG_IA32_EMULATION, not turned off by ia32_emulation=0 or vsyscall-style
# hardening): elsewhere even an unfiltered int 0x80 dies with SIGSEGV. Probe it
# without leash; where it is absent the compat-ABI checks skip, except in the VM
# tier, whose Debian kernel has it: there its absence is a failure.
INT80=
if [ "$(uname -m)" = x86_64 ] && [ "$(bash -c '"$0" int80-getpid' "$P" 2>/dev/null)" = "int80-getpid: ok" ]; then
        INT80=yes
elif [ "${LEASH_VM:-0}" = 1 ]; then
        not_ok "the i386 ABI (int 0x80) works in the VM tier (required there to prove the compat filters)"
fi
SKIP_WHY="int 0x80 does not work on this machine even without a filter (no 32-bit emulation)"
NET=
for p in tcp-socket udp6-socket netlink-socket io-uring; do
        if host_has $p; then NET="$NET $p"; else skip "control and no-network: $p"; fi
done
[ -z "$INT80" ] || NET="$NET int80-socket int80-socketcall"
probe -- $NET unix-socket
for p in $NET; do expect "control: $p works without a filter" "$p: ok"; done
probe --seccomp no-network -- $NET unix-socket threads ${INT80:+int80-getpid}
check "no-network errno: job runs to the end" test "$RC" = 0
for p in $NET; do expect "no-network errno: $p fails with EPERM" "$p: EPERM"; done
expect "no-network: AF_UNIX sockets still work" "unix-socket: ok"
expect "no-network: threads still work" "threads: ok"
if [ -n "$INT80" ]; then
        expect "no-network: an allowed int 0x80 syscall still works" "int80-getpid: ok"
else
        for p in int80-socket int80-socketcall; do skip "control and no-network errno: $p"; done
        skip "no-network: an allowed int 0x80 syscall still works"
fi
check "report: filter listed" test "$(jget "$TMP/r.json" sandbox.seccomp.filters.0)" = no-network
check "report: action errno" test "$(jget "$TMP/r.json" sandbox.seccomp.action)" = errno

probe --seccomp no-network --seccomp-action kill -- unix-socket threads tcp-socket nnp
check "no-network kill: exit 159 (SIGSYS)" test "$RC" = 159
check "no-network kill: reason seccomp" test "$(jget "$TMP/r.json" reason)" = seccomp
check "no-network kill: exit.signal SYS" test "$(jget "$TMP/r.json" exit.signal)" = SYS
expect "no-network kill: AF_UNIX before the kill worked" "unix-socket: ok"
check "no-network kill: nothing ran after the denied call" bash -c "! grep -q '^nnp' <<<'$OUT'"
if [ -n "$INT80" ]; then
        probe --seccomp no-network --seccomp-action kill -- int80-socket
        check "no-network kill: the i386 socket syscall kills too (159, seccomp)" \
                test "$RC/$(jget "$TMP/r.json" reason)" = 159/seccomp
else
        skip "no-network kill: the i386 socket syscall kills too"
fi
probe --seccomp no-network --seccomp-action kill -- unix-socket threads
check "no-network kill: an allowed job exits 0, reason ok" test "$RC/$(jget "$TMP/r.json" reason)" = 0/ok
run_leash -q -o "$TMP/r.json" --seccomp no-network -- sh -c 'kill -SYS $$'
check "errno action: a SIGSYS the job sends itself is reason signal, not seccomp" \
        test "$RC/$(jget "$TMP/r.json" reason)" = 159/signal

probe --seccomp no-network --seccomp-action log -- tcp-socket
expect "no-network log: the call is allowed" "tcp-socket: ok"
check "report: action log" test "$(jget "$TMP/r.json" sandbox.seccomp.action)" = log

# --- no-ptrace ---------------------------------------------------------------------
if host_has ptrace && host_has process-vm; then
probe -- ptrace process-vm
expect "control: ptrace of the job's own child works" "ptrace: ok"
expect "control: process_vm_readv works" "process-vm: ok"
probe --seccomp no-ptrace -- ptrace process-vm
expect "no-ptrace errno: ptrace fails" "ptrace: EPERM"
expect "no-ptrace errno: process_vm_readv fails" "process-vm: EPERM"
probe --seccomp no-ptrace --seccomp-action kill -- ptrace
check "no-ptrace kill: 159, seccomp" test "$RC/$(jget "$TMP/r.json" reason)" = 159/seccomp
else skip "no-ptrace (controls and filter)"; fi

# --- no-namespaces -------------------------------------------------------------------
# unshare-user last: it moves the probe into a new user namespace
if host_has unshare-user && host_has clone-newuser && host_has clone3; then
probe --caps keep -- clone-newuser clone3 mount unshare-user
expect "control: unshare(CLONE_NEWUSER) works" "unshare-user: ok"
expect "control: clone(CLONE_NEWUSER) works" "clone-newuser: ok"
expect "control: clone3 works" "clone3: ok"
expect "control: mount reaches the kernel (ENOENT)" "mount: ENOENT"
probe --caps keep --seccomp no-namespaces -- clone-newuser clone3 mount threads unshare-user
expect "no-namespaces: clone with CLONE_NEWUSER fails" "clone-newuser: EPERM"
expect "no-namespaces: clone3 fails with ENOSYS" "clone3: ENOSYS"
expect "no-namespaces: mount fails" "mount: EPERM"
expect "no-namespaces: threads still work (clone without namespace flags)" "threads: ok"
expect "no-namespaces: unshare(CLONE_NEWUSER) fails" "unshare-user: EPERM"
probe --seccomp no-namespaces --seccomp-action kill -- clone3 threads
check "no-namespaces kill: clone3 is ENOSYS, not a kill; threads work; exit 0" test "$RC" = 0
expect "no-namespaces kill: clone3 ENOSYS" "clone3: ENOSYS"
probe --seccomp no-namespaces --seccomp-action kill -- unshare-user
check "no-namespaces kill: unshare kills (159, seccomp)" test "$RC/$(jget "$TMP/r.json" reason)" = 159/seccomp
else skip "no-namespaces (controls and filter)"; fi

# --- no-kernel -------------------------------------------------------------------------
probe --caps keep -- load-module perf bpf
ctl_mod=$(line load-module); ctl_perf=$(line perf); ctl_bpf=$(line bpf)
if grep -qx "load-module: EPERM" <<<"$HOST"; then
        SKIP_WHY="finit_module is refused on this machine without leash (kernel.modules_disabled?)"
        skip "control and no-kernel: finit_module"
else
        check "control: finit_module reaches the kernel ($ctl_mod)" test "$ctl_mod" != "load-module: EPERM"
fi
if host_has perf EFAULT; then
        check "control: perf_event_open reaches the kernel ($ctl_perf)" test "$ctl_perf" = "perf: EFAULT"
else skip "control: perf_event_open reaches the kernel"; fi
check "control: bpf reaches the kernel ($ctl_bpf)" test "$ctl_bpf" != "bpf: EPERM"
probe --caps keep --seccomp no-kernel -- load-module perf bpf
grep -qx "load-module: EPERM" <<<"$HOST" ||
        expect "no-kernel: module loading fails even with every capability" "load-module: EPERM"
[ "$ctl_perf" = "perf: EFAULT" ] && expect "no-kernel: perf_event_open fails" "perf: EPERM"
expect "no-kernel: bpf fails" "bpf: EPERM"

# --- identity switch -------------------------------------------------------------------
# The user nobody and the group daemon are in Debian's base passwd/group, not in
# every image: probed, else the checks that name them skip.
if [ -z "$NOBODY_WHY" ] && getent group daemon >/dev/null && nobody_dir; then
nob_gid=$(id -g nobody)
nob_groups=$(id -G nobody | tr ' ' ',')
probe --user nobody -- id caps nnp write-cgroup mkdir-cgroup escape-cgroup
check "--user nobody: exit 0" test "$RC" = 0
expect "--user nobody: uid, gid and groups from the user database" \
        "id: uid=$(id -u nobody) euid=$(id -u nobody) gid=$nob_gid egid=$nob_gid groups=$nob_groups"
for s in CapEff CapPrm CapInh CapBnd CapAmb; do
        check "--user nobody: $s=$Z" test "$(capv $s)" = $Z
done
expect "--user nobody: no_new_privs" "nnp: 1"
check "--user nobody: no cgroup file of its own cgroup is writable" bash -c "! grep -q '^write-cgroup .*: ok$' <<<'$OUT'"
expect "--user nobody: cannot write its cgroup.procs" "write-cgroup cgroup.procs: EACCES"
for f in memory.max pids.max cpu.max; do
        check "--user nobody: $f absent or not writable" bash -c "grep -Eqx 'write-cgroup $f: (absent|EACCES)' <<<'$OUT'"
done
expect "--user nobody: cannot create a child cgroup" "mkdir-cgroup: EACCES"
expect "--user nobody: cannot move itself out of the job cgroup" "escape-cgroup cgroup.procs: EACCES"
check "report: uid 65534 switched" test "$(jget "$TMP/r.json" sandbox.identity.uid)/$(jget "$TMP/r.json" sandbox.identity.switched)" = "$(id -u nobody)/True"

probe --user nobody --group daemon --no-supplementary-groups -- id
expect "--group daemon --no-supplementary-groups" "id: uid=$(id -u nobody) euid=$(id -u nobody) gid=$(getent group daemon | cut -d: -f3) egid=$(getent group daemon | cut -d: -f3) groups="
probe --user 54321 --group 54321 -- id
expect "numeric uid/gid outside the database: no groups" "id: uid=54321 euid=54321 gid=54321 egid=54321 groups="
probe --user nobody --caps net_bind_service -- caps
check "--user nobody --caps net_bind_service: ambient keeps it across exec" \
        test "$(capv CapEff)/$(capv CapAmb)/$(capv CapBnd)" = 0000000000000400/0000000000000400/0000000000000400

# no_new_privs against a setuid-root binary (needs a filesystem without nosuid)
cp "$P" "$NOBODY_DIR/suid-probe" && chmod 4755 "$NOBODY_DIR/suid-probe"
probe --user nobody --allow-new-privs -- exec "$NOBODY_DIR/suid-probe" id
if grep -q "euid=0 " <<<"$OUT"; then
        ok "control: without no_new_privs the setuid binary gains euid 0"
        probe --user nobody -- exec "$NOBODY_DIR/suid-probe" id
        check "no_new_privs: the setuid binary does not gain root" grep -q "^id: uid=$(id -u nobody) euid=$(id -u nobody) " <<<"$OUT"
else
        SKIP_WHY="setuid does not work on $NOBODY_DIR (nosuid?)"
        skip "no_new_privs against a setuid binary"
fi
else
        if [ -n "$NOBODY_WHY" ]; then SKIP_WHY=$NOBODY_WHY
        elif ! getent group daemon >/dev/null; then SKIP_WHY="no group daemon in this machine's group database"
        fi # else nobody_dir's reason
        skip "identity switch to nobody (ids, capabilities, cgroup files, setuid, --group daemon)"
fi
if [ -z "$NOBODY_WHY" ] && nobody_dir; then
# in a directory nobody can reach, so that only the 0700 is in its way
mkdir -m 700 "$NOBODY_DIR/private"
probe --user nobody --chdir "$NOBODY_DIR/private" -- cwd
check "--chdir is entered as the job's user: 125" test "$RC" = 125
check "--chdir failure names the step and the directory" grep -q "change to the job's directory (--chdir): $NOBODY_DIR/private: Permission denied" <<<"$ERR"
else SKIP_WHY=${NOBODY_WHY:-$SKIP_WHY}; skip "--chdir entered as the job's user"; fi

# --- identity errors: 125, one line, nothing created -----------------------------------
run_leash --user no-such-user-here -- true
check "unknown user: 125" test "$RC" = 125
check "unknown user: message names it" grep -q "^leash: --user: 'no-such-user-here': expected a user name" <<<"$ERR"
run_leash --user 54321 -- true
check "uid outside the database without --group: 125" test "$RC" = 125
check "... and says to give --group" grep -q "give --group" <<<"$ERR"
run_leash --group no-such-group-here -- true
check "unknown group: 125" test "$RC" = 125
# (its configuration directory one nobody can see is absent, not one it cannot read)
if nobody_dir && nobody_exec "$LEASH"; then
        LEASH_CONFIG_DIR=$NOBODY_DIR/no-such-config as_nobody "$NOBODY_EXEC" run --cgroup-parent "$PARENT" --user root -- true \
                >"$TMP/out" 2>"$TMP/err"
        RC=$?
        check "non-root leash asked to switch identity: 125" test "$RC" = 125
        check "... with a clear message" grep -q "not root: only root can run a job as another user" "$TMP/err"
else skip "a non-root leash asked to switch identity"; fi
run_leash --caps sys_module,frob -- true
check "--caps frob: 125 naming it" test "$RC" = 125 -a -n "$(grep "'frob'" <<<"$ERR")"
run_leash --seccomp no-network,frob -- true
check "--seccomp frob: 125 naming it" test "$RC" = 125 -a -n "$(grep "'frob'" <<<"$ERR")"
run_leash --seccomp-action trap -- true
check "--seccomp-action trap: 125" test "$RC" = 125
run_leash --allow-new-privs --seccomp no-network -- true
check "--allow-new-privs --seccomp without CAP_SYS_ADMIN: 125" test "$RC" = 125
check "... says why" grep -q "CAP_SYS_ADMIN" <<<"$ERR"
run_leash --allow-new-privs --caps keep --seccomp no-network -- "$P" tcp-socket nnp
check "--allow-new-privs --caps keep --seccomp: the filter still loads" test "$RC/$OUT" = "0/tcp-socket: EPERM
nnp: 0"

# --- environment, directory, stdin, fds -------------------------------------------------
export LEASH_SEC_T=7
run_leash -q -- env
check "environment inherited by default" grep -qx "LEASH_SEC_T=7" <<<"$OUT"
run_leash -q --unsetenv LEASH_SEC_T --env LEASH_SEC_U=1 --env LEASH_SEC_U=2 -- env
check "--unsetenv removes" bash -c "! grep -q '^LEASH_SEC_T=' <<<'$OUT'"
check "--env sets, the last one wins" test "$(grep '^LEASH_SEC_U=' <<<"$OUT")" = LEASH_SEC_U=2
run_leash -q --clean-env --env A=1 -- env
check "--clean-env: PATH, HOME, USER, LOGNAME, SHELL and --env only" \
        test "$(cut -d= -f1 <<<"$OUT" | sort | tr '\n' ' ')" = "A HOME LOGNAME PATH SHELL USER "
check "--clean-env: PATH is the minimal one" grep -qx "PATH=/usr/local/bin:/usr/bin:/bin" <<<"$OUT"
if getent passwd nobody >/dev/null; then
        run_leash -q --clean-env --user nobody -- env
        check "--clean-env --user nobody: USER and HOME of the job's user" \
                test "$(grep -E '^(USER|HOME)=' <<<"$OUT" | sort | tr '\n' ' ')" = "HOME=$(getent passwd nobody | cut -d: -f6) USER=nobody "
else skip "--clean-env --user nobody"; fi
run_leash -q --clean-env --env "PATH=$HELPERS" -- lh-probe nnp
check "the command is looked up in the job's PATH" test "$RC/$OUT" = "0/nnp: 1"
unset LEASH_SEC_T

probe --chdir /tmp -- cwd
expect "--chdir" "cwd: /tmp"
run_leash --chdir /nonexistent/leash -- true
check "--chdir to a missing directory: 125" test "$RC" = 125
check "... names the directory" grep -q "(--chdir): /nonexistent/leash: No such file or directory" <<<"$ERR"

probe -- stdin < <(echo hi)
check "stdin inherited by default" bash -c "grep -q '^stdin: pipe:' <<<'$OUT'"
probe --no-stdin -- stdin < <(echo hi)
expect "--no-stdin: stdin is /dev/null" "stdin: /dev/null"

probe --keep-fds -- fds 3</dev/null 7</dev/null
check "--keep-fds: fds 3 and 7 inherited" bash -c "grep -Eq '^fds:.* 3( |$)' <<<'$OUT' && grep -Eq '^fds:.* 7( |$)' <<<'$OUT'"
probe -- fds 3</dev/null 7</dev/null
expect "default: fds above 2 closed" "fds: none"

# --- leash check ---------------------------------------------------------------------------
"$LEASH" check --cgroup-parent "$PARENT" >"$TMP/c" 2>&1
check "check: seccomp available" grep -q "^seccomp: *available" "$TMP/c"
for s in no-network no-ptrace no-namespaces no-kernel; do
        check "check: filter $s ok" grep -Eq "^  filter $s +ok" "$TMP/c"
done
check "check: identity switch available as root" grep -q "^identity switch: *available" "$TMP/c"
finish
