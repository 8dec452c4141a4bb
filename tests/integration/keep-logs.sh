#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# tools/keep-failed-logs (issue 41.10): a failing tier keeps and prints its
# failing tests' logs, make distcheck's too. Real automake logs: two TAP
# tests run through the build's own tap-driver.sh, one failing with a
# diagnostic line, one passing with a TODO; then a distcheck-like tree
# (leash-VERSION/_build/sub, read-only as distcheck leaves it) removed after
# its logs were kept, as distcheck removes its tree.
set -u
SRC=${LEASH_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
KEEP=$SRC/tools/keep-failed-logs
DRIVER=$SRC/build-aux/tap-driver.sh
N=0 FAILED=0
ok() { N=$((N + 1)); echo "ok $N - $*"; }
not_ok() { N=$((N + 1)); FAILED=$((FAILED + 1)); echo "not ok $N - $*"; }
check() { local n=$1; shift; if "$@"; then ok "$n"; else not_ok "$n"; fi; }
if [ ! -x "$KEEP" ] || [ ! -f "$DRIVER" ]; then
        echo "1..0 # SKIP no tools/keep-failed-logs or build-aux/tap-driver.sh in $SRC"
        exit 0
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/leash-keep.XXXXXX") || exit 1
trap 'chmod -R u+w "$TMP" 2>/dev/null; rm -rf "$TMP"' EXIT

# run_tap TREE NAME BODY: TREE/tests/NAME.{log,trs} as make check writes them
run_tap() {
        mkdir -p "$1/tests"
        printf '%s\n' "$3" >"$1/tests/$2"
        (cd "$1" && bash "$DRIVER" --test-name "tests/$2" --log-file "tests/$2.log" --trs-file "tests/$2.trs" \
                --color-tests no --enable-hard-errors yes --expect-failure no -- bash "tests/$2" >/dev/null)
}
make_tree() { # make_tree DIR: one failing test, one passing (with a TODO "not ok")
        run_tap "$1" bad.sh 'echo "ok 1 - first"; echo "not ok 2 - threads"; echo "# saw: threads 1 WallTimeLimitExceeded"; echo 1..2'
        run_tap "$1" good.sh 'echo "ok 1 - fine"; echo "not ok 2 - later # TODO not yet"; echo 1..2'
}

B=$TMP/build
make_tree "$B"
check "the driver wrote a FAIL for bad.sh (the fixture is real)" grep -q '^:test-result: FAIL' "$B/tests/bad.sh.trs"
out=$("$KEEP" "$B" "$TMP/kept/build")
rc=$?
check "exit 0 after keeping ($rc)" test "$rc" = 0
check "the failing test's log is printed, its diagnostic line with it" grep -qF '# saw: threads 1 WallTimeLimitExceeded' <<<"$out"
check "and kept under DEST at its path in the tree" cmp -s "$B/tests/bad.sh.log" "$TMP/kept/build/tests/bad.sh.log"
check "a passing test (a TODO's not ok included) is neither printed nor kept" \
        bash -c "! grep -q good.sh <<<\"\$1\" && [ ! -e '$TMP/kept/build/tests/good.sh.log' ]" _ "$out"

# a distcheck tree: leash-VERSION/_build/sub inside the build tree, read-only
D=$B/leash-9.9/_build/sub
make_tree "$D"
chmod -R a-w "$B/leash-9.9"
out=$("$KEEP" "$B/leash-9.9/_build" "$TMP/kept/distcheck")
check "distcheck's failing log is kept from its read-only tree" test -f "$TMP/kept/distcheck/sub/tests/bad.sh.log"
chmod -R u+w "$B/leash-9.9" && rm -rf "$B/leash-9.9"
check "and outlives the tree, as distcheck removes it" grep -qF '# saw: threads 1' "$TMP/kept/distcheck/sub/tests/bad.sh.log"
# the build tree holds another run's distcheck tree: not its own failures
make_tree "$B/leash-9.8/_build/sub"
out=$("$KEEP" "$B" "$TMP/kept/again")
check "a leash-VERSION tree inside a build tree is another run's: not kept with it" \
        test ! -e "$TMP/kept/again/leash-9.8"
# a pytest log longer than 200 lines: its failure section (the test's header,
# the "E" lines with the assertion's values) is at the end, printed after
run_tap "$B" long.sh 'for i in $(seq 300); do echo "ok $i - t$i"; done
echo "# ____ test_collision ____"; echo "not ok 301 - test_collision"; echo 1..301
echo "E   AssertionError: {\"collision\": 3.9}" >&2'
out=$("$KEEP" "$B" "$TMP/kept/long")
check "a long log's pytest lines are printed after its first 200 lines" \
        bash -c 'grep -q "pytest.s failure lines" <<<"$1" && grep -qF "E   AssertionError: {\"collision\": 3.9}" <<<"$1"' _ "$out"
rm -f "$B"/tests/long.sh.*
rm -f "$B/tests/bad.sh.trs" "$B/tests/bad.sh.log"
out=$("$KEEP" "$B" "$TMP/kept/none")
check "nothing failed: nothing printed, nothing kept" test -z "$out" -a ! -e "$TMP/kept/none"
"$KEEP" "$TMP/no-such-tree" "$TMP/kept/x" 2>/dev/null
check "a tree that is not a directory: exit 1" test $? = 1
echo "1..$N"
[ "$FAILED" = 0 ]
