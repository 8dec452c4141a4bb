#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# --user/--group in the static leash (src/sandbox/userdb.c): /etc/passwd and
# /etc/group first, then getent(1) for names the files lack. The files are
# replaced inside a private mount namespace (unshare -m), never on the host.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root to switch users"
command -v unshare >/dev/null || skip_all "no unshare(1)"
unshare -m true 2>/dev/null || skip_all "cannot create a mount namespace here"

# in_ns PASSWD GROUP HIDE_GETENT CMD...: run CMD with PASSWD/GROUP bound over
# /etc/passwd and /etc/group, and getent hidden when HIDE_GETENT=1
in_ns() {
        local pw=$1 gr=$2 hide=$3
        shift 3
        unshare -m bash -c '
                mount --make-rprivate / &&
                mount --bind "$1" /etc/passwd && mount --bind "$2" /etc/group || exit 99
                if [ "$3" = 1 ]; then
                        for g in /usr/bin/getent /bin/getent; do
                                [ -e "$g" ] && { mount --bind /dev/null "$g" || exit 99; }
                        done
                fi
                shift 3
                exec "$@"' in_ns "$pw" "$gr" "$hide" "$@"
}
run_id() { "$LEASH" run -q --cgroup-parent "$PARENT" "$@"; }

# a user and groups only these files know
cp /etc/passwd "$TMP/passwd"
cp /etc/group "$TMP/group"
echo "lhuser:x:4242:4343:leash test:/nonexistent:/bin/sh" >>"$TMP/passwd"
echo "lhgrp:x:4343:" >>"$TMP/group"
echo "lhextra:x:4444:someone,lhuser" >>"$TMP/group"
out=$(in_ns "$TMP/passwd" "$TMP/group" 0 "$LEASH" run -q --cgroup-parent "$PARENT" --user lhuser -- /usr/bin/id)
check "a user of /etc/passwd by name: uid and primary group ($out)" \
        bash -c "[[ '$out' == 'uid=4242(lhuser) gid=4343(lhgrp) '* ]]"
check "its supplementary groups come from /etc/group" bash -c "[[ '$out' == *'4444(lhextra)'* ]]"
out=$(in_ns "$TMP/passwd" "$TMP/group" 0 "$LEASH" run -q --cgroup-parent "$PARENT" --user lhuser --group lhextra -- /usr/bin/id -g)
check "a group of /etc/group by name" test "$out" = 4444
out=$(run_id --user 54321 --group 54322 -- /usr/bin/id -u)
check "numeric ids unknown to every database are taken as they are" test "$out" = 54321

# a name the files lack is asked of getent: nss-systemd synthesizes "nobody"
grep -v '^nobody:' /etc/passwd >"$TMP/passwd-nonobody"
if ! in_ns "$TMP/passwd-nonobody" /etc/group 0 getent passwd nobody >/dev/null 2>&1; then
        SKIP_WHY="no NSS module here resolves a user missing from /etc/passwd (nss-systemd)"
        skip "a user only NSS knows resolves through getent"
        skip "control: without getent the same name is refused"
else
        out=$(in_ns "$TMP/passwd-nonobody" /etc/group 0 "$LEASH" run -q --cgroup-parent "$PARENT" \
                --user nobody --no-supplementary-groups -- /usr/bin/id -u)
        check "a user only NSS knows resolves through getent ($out)" test "$out" = 65534
        in_ns "$TMP/passwd-nonobody" /etc/group 1 "$LEASH" run -q --cgroup-parent "$PARENT" \
                --user nobody -- /usr/bin/id -u >"$TMP/o" 2>"$TMP/e"
        rc=$?
        check "control: without getent the same name is refused (exit $rc, 125 expected)" test "$rc" = 125
        check "...with a one-line error naming it" grep -q "^leash: --user: 'nobody': expected a user name" "$TMP/e"
fi

run_id --user no-such-user-here -- /bin/true 2>"$TMP/e"
check "an unknown user is exit 125" test $? = 125
check "...naming the value" grep -q "'no-such-user-here'" "$TMP/e"
run_id --group no-such-group-here -- /bin/true 2>"$TMP/e"
check "an unknown group is exit 125" test $? = 125
finish
