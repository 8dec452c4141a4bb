# SPDX-License-Identifier: LGPL-2.1-or-later
# The examples of examples/, run by make check on this host's cgroup2: the
# HPO loop (1,000 forked function calls under memory + CPU-time limits) and
# the event-loop host (three jobs at once). TAP.
. "$LEASH_SRCDIR/tests/integration/lib.sh"
EX=${EXAMPLES:?EXAMPLES must point at the built examples}

"$EX/hpo-loop" "$PARENT" 1000 >"$TMP/hpo" 2>"$TMP/hpo.err"
check "hpo-loop: 1,000 calls run, no leash failure" test $? = 0
tail -1 "$TMP/hpo" | sed 's/^/# /'
check "hpo-loop: one line per call" test "$(grep -c '^trial ' "$TMP/hpo")" = 1000
# the runaways (i % 100 == 42): ended by the CPU-time limit
check "hpo-loop: every runaway ended by cpu_time" test "$(grep -cE '^trial +[0-9]*42: cpu_time +exit 124' "$TMP/hpo")" = 10
# the memory eaters (i % 100 == 17): OOM-killed where memory.max exists, refused by RLIMIT_AS elsewhere
if has_controller memory; then
        check "hpo-loop: every memory eater ended by memory" test "$(grep -cE '^trial +[0-9]*17: memory ' "$TMP/hpo")" = 10
elif [[ ${LEASH_SAN_CFLAGS:-} == *sanitize=address* ]]; then
        SKIP_WHY="an ASan build: the forked function cannot map ASan's shadow under RLIMIT_AS"
        skip "hpo-loop: every memory eater refused (RLIMIT_AS, exit 2)"
else
        check "hpo-loop: every memory eater refused (RLIMIT_AS, exit 2)" \
                test "$(grep -cE '^trial +[0-9]*17: exit +exit +2 ' "$TMP/hpo")" = 10
fi
check "hpo-loop: the others ended by themselves" \
        test "$(grep -cE '^trial +[0-9]+: (ok|exit) ' "$TMP/hpo")" -ge 980

"$EX/event-loop" "$PARENT" >"$TMP/ev" 2>"$TMP/ev.err"
check "event-loop: three jobs run at once" test $? = 0
sed 's/^/# /' "$TMP/ev"
check "event-loop: the sleeper ok" grep -q '^job 0 ended: ok, exit 0' "$TMP/ev"
check "event-loop: exit 3 seen" grep -q '^job 1 ended: exit, exit 3' "$TMP/ev"
check "event-loop: the runaway function ended by wall_time" grep -q '^job 2 ended: wall_time, exit 124' "$TMP/ev"
check "event-loop: the quick jobs ended before the runaway" \
        test "$(sed -n 3p "$TMP/ev" | cut -c1-5)" = "job 2"
finish
