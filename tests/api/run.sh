# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/api/test-job (every call of <leash/leash.h> through libleash.so.0)
# under a private test parent; its TAP lines are passed on, and lib.sh's
# finish checks that no cgroup or process was left behind.
. "$LEASH_SRCDIR/tests/integration/lib.sh"
# pass_on PROGRAM: runs it under the test parent, its TAP lines become ours
pass_on() {
        "$1" "$PARENT" >"$TMP/api" 2>&1
        local rc=$?
        while IFS= read -r line; do
                case $line in
                "ok "*) ok "${line#ok * - }" ;;
                "not ok "*) not_ok "${line#not ok * - }" ;;
                "#"*) echo "$line" ;;
                esac
        done <"$TMP/api"
        check "$(basename "$1") exited 0" test $rc = 0
        grep -v '^\(ok\|not ok\|#\|1\.\.\)' "$TMP/api" | sed 's/^/# /'
}
pass_on "${API_TEST:?}"
pass_on "${ENGINE_TEST:?}"
# every exported name has its man page
missing=
for sym in $(sed -n 's/^ *\(leash_[a-z_0-9]*\);$/\1/p' "$LEASH_SRCDIR/src/lib/libleash.sym"); do
        [ -f "$LEASH_SRCDIR/man/$sym.3" ] || missing="$missing $sym"
done
check "every exported call has a libleash(3) page${missing:+ (missing:$missing)}" test -z "$missing"
# and the library exports exactly the names of libleash.sym
if command -v nm >/dev/null; then
        exported=$(nm -D --defined-only "$(dirname "$API_TEST")/../../src/lib/libleash.so.0" | awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' | sort)
        listed=$(sed -n 's/^ *\(leash_[a-z_0-9]*\);$/\1/p' "$LEASH_SRCDIR/src/lib/libleash.sym" | sort)
        check "libleash.so.0 exports exactly the names of libleash.sym" test "$exported" = "$listed"
fi
finish
