#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# shell-completion/bash/leash through bash's own machinery: source it, set
# COMP_WORDS/COMP_CWORD/COMP_LINE/COMP_POINT, call the function `complete -p
# leash` names, read COMPREPLY. The expectations come from outside the
# script: the subcommands leash dispatches, the options leash(1) documents,
# the values leash accepts (checked with `leash profiles check`).
set -u
: "${LEASH:?LEASH must point at the leash binary}"
SRC=${LEASH_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
N=0
FAILED=0
ok() { N=$((N + 1)); echo "ok $N - $*"; }
not_ok() { N=$((N + 1)); FAILED=$((FAILED + 1)); echo "not ok $N - $*"; }
check() { local n=$1; shift; if "$@"; then ok "$n"; else not_ok "$n"; fi; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/leash-completion.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
chmod 700 "$TMP"

# bash-completion's helpers (_command_offset) when installed; the script
# must work without them too
if [ -r /usr/share/bash-completion/bash_completion ]; then
        . /usr/share/bash-completion/bash_completion
        HAVE_BC=1
else
        HAVE_BC=0
fi
. "$SRC/shell-completion/bash/leash"
FUNC=$(complete -p leash 2>/dev/null | sed -n 's/.*-F \([^ ]*\) leash$/\1/p')
check "the script registers a completion function for leash ($FUNC)" test -n "$FUNC"

# comp WORD...: complete the last word (may be empty) of `leash WORD...`
comp() {
        COMP_WORDS=("$LEASH" "$@")
        COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
        COMP_LINE="${COMP_WORDS[*]}"
        COMP_POINT=${#COMP_LINE}
        COMPREPLY=()
        "$FUNC" leash "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}" 2>/dev/null
        printf '%s\n' "${COMPREPLY[@]}"
}
has() { grep -qxF -- "$2" <<<"$1"; }
# offers WORD... :: EXPECTED...: each EXPECTED is among the completions
offers() {
        local args=() out e
        while [ "$1" != :: ]; do args+=("$1"); shift; done
        shift
        out=$(comp "${args[@]}")
        for e; do has "$out" "$e" || { echo "# '${args[*]}' did not offer '$e' (got: $(echo $out))"; return 1; }; done
}

# every subcommand main.c dispatches: the ones `leash X --help` answers
subs=$(comp "")
check "subcommands offered: $(echo $subs)" test -n "$subs"
for s in run check profiles report suggest ps stat top; do
        check "subcommand $s is offered" has "$subs" "$s"
done
for s in $subs; do
        case $s in --help | --version) continue ;; esac
        "$LEASH" "$s" --help >/dev/null 2>&1
        check "offered subcommand '$s' exists (leash $s --help exits 0)" test $? = 0
done
check "'leash ru' completes to run" test "$(comp ru)" = run
check "'leash rep' completes to report" test "$(comp rep)" = report
check "'leash report --ma' completes to --markdown" test "$(comp report --ma)" = --markdown

# every option leash(1) documents for run (.BI/.BR \-\-name lines of OPTIONS)
man_opts=$(sed -n '/^\.SH OPTIONS/,/^\.SH /p' "$SRC/man/leash.1" | sed 's/\\-/-/g' |
        grep -oE '^\.B[IR]? +--[a-z][a-z0-9-]*|, --[a-z][a-z0-9-]*' | grep -oE '[a-z][a-z0-9-]*$' | sort -u)
check "leash(1) lists options for run" test "$(wc -w <<<"$man_opts")" -gt 20
run_opts=$(comp run --)
missing=""
for o in $man_opts; do has "$run_opts" "--$o" || missing="$missing --$o"; done
check "every option of leash(1) is offered after 'leash run --'${missing:+ (missing:$missing)}" test -z "$missing"
check "short options resolve: after -m no option list (it takes SIZE)" test -z "$(comp run -m "")"
check "'leash check --' offers --cgroup-parent" offers check -- :: --cgroup-parent
check "'leash ps --' offers its options" offers ps -- :: --cgroup-parent --output --interval
check "'leash stat --' offers --processes" offers stat -- :: --processes --output
check "'leash stat --output' offers text and json" offers stat --output "" :: text json
check "'leash top --' offers --interval and --iterations" offers top -- :: --interval --iterations

# values: profiles as `leash profiles list` sees them, with --profile-file
cat >"$TMP/extra.ini" <<'INI'
[zz-completion-test]
memory = 1G
INI
check "--profile offers the built-in default" offers run --profile "" :: default
check "--profile offers a profile of a --profile-file given before it" \
        offers run --profile-file "$TMP/extra.ini" --profile zz :: zz-completion-test
check "'leash profiles' offers its actions" offers profiles "" :: list show check
check "'leash profiles show' offers profile names" offers profiles show "" :: default

# the value lists of the script are what leash accepts, and a wrong one is not
fmts=$(comp run --format "")
acts=$(comp run --seccomp-action "")
sets=$(comp run --seccomp "")
caps=$(comp run --caps "")
gpus=$(comp run --gpus "")
devs=$(comp run --devices "")
{
        echo "[t]"
        echo "format = $(echo $fmts | tr ' ' '\n' | tail -n 1)"
} >"$TMP/v.ini"
good=1
for f in $fmts; do printf '[t]\nformat = %s\n' "$f" >"$TMP/v.ini"; "$LEASH" profiles check "$TMP/v.ini" >/dev/null 2>&1 || good=0; done
for a in $acts; do printf '[t]\nseccomp-action = %s\n' "$a" >"$TMP/v.ini"; "$LEASH" profiles check "$TMP/v.ini" >/dev/null 2>&1 || good=0; done
for s in $sets; do printf '[t]\nseccomp = %s\n' "$s" >"$TMP/v.ini"; "$LEASH" profiles check "$TMP/v.ini" >/dev/null 2>&1 || good=0; done
for c in $caps; do printf '[t]\ncaps = %s\n' "$c" >"$TMP/v.ini"; "$LEASH" profiles check "$TMP/v.ini" >/dev/null 2>&1 || good=0; done
for g in $gpus; do printf '[t]\ngpus = %s\n' "$g" >"$TMP/v.ini"; "$LEASH" profiles check "$TMP/v.ini" >/dev/null 2>&1 || good=0; done
for d in $devs; do printf '[t]\ndevices = %s\n' "$d" >"$TMP/v.ini"; "$LEASH" profiles check "$TMP/v.ini" >/dev/null 2>&1 || good=0; done
check "--gpus offers none and all ($gpus), --devices none ($devs)" test "$(echo $gpus)" = "none all" -a "$devs" = none
check "every offered format/seccomp-action/seccomp set/caps value is accepted ($(echo $fmts $acts $sets $caps))" \
        test "$good" = 1 -a -n "$fmts" -a -n "$acts" -a -n "$sets" -a -n "$caps"
printf '[t]\nformat = not-a-format\n' >"$TMP/v.ini"
"$LEASH" profiles check "$TMP/v.ini" >/dev/null 2>&1
check "control: leash refuses a format the script would not offer" test $? != 0
check "--seccomp completes the item after a comma" offers run --seccomp no-network,no-p :: no-network,no-ptrace
check "--signal offers signal names" offers run --signal XC :: XCPU
sigs=$(comp run --signal "")
bad=0
for sg in $sigs; do "$LEASH" run --signal "$sg" --cgroup-parent /nonexistent/x -- true 2>&1 | grep -q "^leash: --signal" && bad=1; done
check "every offered --signal value is one leash accepts (no JUNK(32), EXIT, ERR)" test "$bad" = 0 -a -n "$sigs"
check "--signal offers no bash-only name" bash -c "! grep -qE 'JUNK|^EXIT$|^ERR$|^DEBUG$|^RETURN$' <<<'$sigs'"
check "--limit offers the figures leash knows, with '='" offers run --limit dis :: disk=
figs=$(comp run --limit "")
bad=0
for fg in $figs; do "$LEASH" run --limit "${fg}1" -- true 2>&1 | grep -q "expected FIGURE=VALUE" && bad=1; done
check "every offered --limit figure is one leash accepts ($(echo $figs))" test "$bad" = 0 -a "$(wc -w <<<"$figs")" -gt 10
check "--format=j completes the value" offers run --format=j :: json
check "--user offers users" offers run --user ro :: root

# issue 41.1: every option's fixed values are those of leash's parser. For
# each option of run, suggest, ps and stat that has fixed values (leash
# __complete), the completion offers exactly them, the parser takes each,
# and the parser's own error for a wrong value names each (the parser's
# table, seen from outside); --series-format offered json kv text before.
check "--series-format offers csv and jsonl, only" test "$(echo $(comp run --series-format ""))" = "csv jsonl"
check "suggest --strategy offers the strategies, no profile names" \
        test "$(echo $(comp suggest --strategy ""))" = "max-seen quantile min-waste"
n_fixed=0 bad=""
for sub in run suggest ps stat; do
        for o in $(comp "$sub" -- | grep '^--'); do
                fixed=$("$LEASH" __complete "$sub" "$o" 2>/dev/null) || continue
                n_fixed=$((n_fixed + 1))
                offered=$(comp "$sub" "$o" "")
                [ "$(echo $offered)" = "$(echo $fixed)" ] || bad="$bad $sub$o:offered($(echo $offered))"
                case $sub in
                run) err=$("$LEASH" run "$o" zz-no-such-value -- true 2>&1) ;;
                suggest) err=$("$LEASH" suggest "$o" zz-no-such-value "$TMP/none.json" 2>&1) ;;
                *) err=$("$LEASH" "$sub" "$o" zz-no-such-value x 2>&1) ;;
                esac
                for v in $offered; do
                        case $sub in
                        run) out=$("$LEASH" run "$o" "$v" --cgroup-parent /nonexistent/x -- true 2>&1) ;;
                        suggest) out=$("$LEASH" suggest "$o" "$v" "$TMP/none.json" 2>&1) ;;
                        *) out=$("$LEASH" "$sub" "$o" "$v" --cgroup-parent /nonexistent/x x 2>&1) ;;
                        esac
                        grep -qF -- "'$v': expected" <<<"$out" && bad="$bad $sub$o=$v:refused"
                        grep -qw -- "$v" <<<"${err#*expected}" || bad="$bad $sub$o=$v:not-in-error"
                done
        done
done
check "$n_fixed options with fixed values: each offered as leash __complete lists it, each taken by the parser, each named by the parser's error${bad:+ (wrong:$bad)}" \
        test "$n_fixed" -ge 9 -a -z "$bad"
check "control: leash refuses a value not offered (--series-format json)" \
        bash -c "'$LEASH' run --series-format json -- true 2>&1 | grep -qF \"'json': expected csv or jsonl\""
# files where an argument is a file: reports, series, directories, -o OUT
mkdir "$TMP/reports"
touch "$TMP/reports/job-1.json" "$TMP/reports/job-1.csv"
for args in "report" "suggest" "report -o" "report --output" "suggest --name x"; do
        out=$(cd "$TMP" && comp $args rep)
        check "'leash $args <TAB>' completes files (reports/ offered: $(echo $out))" has "$out" reports
done
out=$(cd "$TMP/reports" && comp report job)
check "'leash report job<TAB>' offers the report and its series" bash -c "grep -qx job-1.json <<<'$out' && grep -qx job-1.csv <<<'$out'"

# the command after the options, and its own arguments
check "the command word offers commands" offers run -m 1G tru :: true
check "...also right after --" offers run -- tru :: true
if [ "$HAVE_BC" = 1 ]; then
        out=$(cd "$TMP" && comp run -q -- ls ex)
        check "the command's arguments complete as for the command (files)" has "$out" extra.ini
else
        echo "ok $((N += 1)) # SKIP the command's arguments (bash-completion not installed)"
fi
# a packager's build runs this with HOME unset; the script must not trip
# over the caller's set -u there (rpmbuild's %check failed every check above)
check "completes with HOME unset under set -u" env -u HOME bash -c \
        'set -u; . "$1/shell-completion/bash/leash"; COMP_WORDS=("$2" ru); COMP_CWORD=1; COMPREPLY=()
         _leash leash ru "$2"; [ "${COMPREPLY[*]-}" = run ]' _ "$SRC" "$LEASH"
echo "1..$N"
[ "$FAILED" = 0 ]
