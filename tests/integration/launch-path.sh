#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The launch path's shortcuts (issues 5 and 16) change nothing a user sees:
# the cgroup2 mount found by statfs is the one /proc/self/mountinfo names, the
# static leash loads no shared object at all, `leash check` still finds v1
# controllers through libcgroup, and reports still come out of json-c.
. "$(dirname "$0")/lib.sh"

# default placement (root): <the cgroup2 mount from mountinfo>/leash/<job>
if [ "$(id -u)" = 0 ]; then
        "$LEASH" run --report "$TMP/r.json" -- /bin/true
        check "default placement: run succeeds" test $? = 0
        cg=$(jget "$TMP/r.json" cgroup)
        check "default placement is under the mountinfo cgroup2 mount ($CG2)" bash -c "[[ '$cg' == '$CG2/leash/true@'* ]]"
        check "default placement: the job cgroup is gone" test ! -e "$cg"
else
        SKIP_WHY="needs root for the default placement"
        skip "default placement"
        skip "default placement"
        skip "default placement"
fi

# -static-pie (the default where the static archives exist): no
# interpreter, no NEEDED entry; a sanitizer or --disable-static-leash build
# is dynamic on purpose
if ! command -v readelf >/dev/null; then
        SKIP_WHY="no readelf"
        skip "static leash has no interpreter"
        skip "static leash needs no shared library"
elif readelf -lW "$LEASH" | grep -q 'INTERP'; then
        SKIP_WHY="leash is linked dynamically here (sanitizers or --disable-static-leash)"
        skip "static leash has no interpreter"
        skip "static leash needs no shared library"
else
        check "static leash has no interpreter" bash -c "! readelf -lW '$LEASH' | grep -q INTERP"
        check "static leash needs no shared library" bash -c "! readelf -dW '$LEASH' | grep -q NEEDED"
fi

# NSS and the static leash (issue 16): the link warns that libcgroup calls
# getpwnam & co, which a static glibc can only serve by loading NSS modules
# of another glibc. Those calls are in libcgroup's rules-file and
# change-cgroup code, which leash never calls: in the disassembly, every
# function that reaches them, directly or through others, is libcgroup's
# (a leash function calling one of them would be in that set). --user and
# --group read /etc/passwd and /etc/group themselves (src/sandbox/userdb.c).
NSS_FUNCS="getpwnam getpwuid getgrnam getgrgid getpwnam_r getpwuid_r getgrnam_r getgrgid_r getpwent getgrent getgrouplist initgroups"
if ! command -v objdump >/dev/null || readelf -lW "$LEASH" | grep -q 'INTERP'; then
        SKIP_WHY="not a static leash, or no objdump"
        skip "control: the call graph shows sandbox_prepare reaching getgroups"
        skip "no leash function reaches getpw*/getgr*"
elif ! readelf -sW "$LEASH" | grep -q ' main$'; then
        SKIP_WHY="leash is stripped: no symbols to read the calls by"
        skip "control: the call graph shows sandbox_prepare reaching getgroups"
        skip "no leash function reaches getpw*/getgr*"
else
        objdump -d --no-show-raw-insn "$LEASH" >"$TMP/leash.dis"
        reach() { "$PY" -c '
import collections, re, sys
callers, fn = collections.defaultdict(set), None
for line in sys.stdin:
    m = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
    if m:
        fn = m.group(1)
        continue
    m = re.search(r"\b(call|jmp)\s+[0-9a-f]+ <([^>+]+)>", line)
    if m and fn and m.group(2) != fn:
        callers[m.group(2)].add(fn)
seen, todo = set(), sys.argv[1:]
while todo:
    for c in callers.get(todo.pop(), ()):
        if c not in seen:
            seen.add(c)
            todo.append(c)
print(" ".join(sorted(seen)))' "$@" <"$TMP/leash.dis"; }
        # control: the same reading finds leash's own caller of getgroups
        check "control: the call graph shows sandbox_prepare reaching getgroups" \
                bash -c "[[ ' $(reach getgroups) ' == *' sandbox_prepare '* ]]"
        read -r -a nss_callers <<<"$(reach $NSS_FUNCS)"
        bad=$(printf '%s\n' "${nss_callers[@]}" | grep -v '^cgroup_' || true)
        check "getpw*/getgr* are reached only from libcgroup (${#nss_callers[@]} functions: ${nss_callers[*]:0:3} ...)" \
                test -z "$bad" -a ${#nss_callers[@]} -gt 0
        [ -z "$bad" ] || echo "# leash functions reaching NSS: $bad"
fi
if [ "$(id -u)" = 0 ] && command -v strace >/dev/null; then
        strace -f -e trace=open,openat -o "$TMP/nss.trace" \
                "$LEASH" run --cgroup-parent "$PARENT" --user root --group root -- /bin/true
        check "--user root --group root reads /etc/passwd and /etc/group" \
                bash -c "grep -q '\"/etc/passwd\"' '$TMP/nss.trace' && grep -q '\"/etc/group\"' '$TMP/nss.trace'"
        strace -f -e trace=open,openat -o "$TMP/nss-check.trace" "$LEASH" check --cgroup-parent "$PARENT" >/dev/null 2>&1
        check "neither it nor leash check opens nsswitch.conf or an NSS module" \
                bash -c "! grep -Eq 'nsswitch|libnss_' '$TMP/nss.trace' '$TMP/nss-check.trace'"
else
        SKIP_WHY="needs root (--user) and strace"
        skip "--user root --group root reads /etc/passwd and /etc/group"
        skip "neither it nor leash check opens nsswitch.conf or an NSS module"
fi

# JSON and kv reports (json-c) still come out whole
"$LEASH" run --cgroup-parent "$PARENT" --report "$TMP/j.json" -- /bin/true
check "JSON report parses" test "$(jget "$TMP/j.json" exit.code)" = 0
"$LEASH" run --cgroup-parent "$PARENT" --format kv --report "$TMP/k.kv" -- /bin/true
check "kv report has nested keys" grep -qx 'exit.code:0' "$TMP/k.kv"

# check still finds the v1 hierarchies through libcgroup
v1mem=$(awk '$9 == "cgroup" && $NF ~ /(^|,)memory(,|$)/ { print $5; exit }' /proc/self/mountinfo)
if [ -n "$v1mem" ]; then
        "$LEASH" check --cgroup-parent "$PARENT" >"$TMP/c" 2>&1
        check "check lists the v1 memory hierarchy (libcgroup)" \
                grep -Eq "^  v1 memory +$v1mem " "$TMP/c"
else
        SKIP_WHY="no v1 memory hierarchy on this host"
        skip "check lists the v1 memory hierarchy"
fi
finish
