#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Profiles end to end: a limit from a profile ends the job, the command line
# overrides one value, inheritance chains, leash.ini defaults, the report's
# profile fields, a user's profile directory, the root trust rules, every
# configuration error refused with exit 125 before anything is created, and
# `leash profiles list|show|check`.
. "$(dirname "$0")/lib.sh"

CONF=$TMP/conf
mkdir -p "$CONF/profiles.d"
chmod 0755 "$TMP" "$CONF" "$CONF/profiles.d"
export LEASH_CONFIG_DIR=$CONF

cat >"$CONF/leash.ini" <<'EOF'
[leash]
grace = 2s
format = json
EOF
cat >"$CONF/profiles.d/base.ini" <<'EOF'
; comment
[base]
pids = 100
wall-time = 1s
grace = 100ms
signal = TERM

[short]
inherit = base
nofile = 256
EOF
cat >"$CONF/profiles.d/trial.ini" <<'EOF'
[trial]
inherit = short
cpu-time = 30s
EOF
chmod 0644 "$CONF"/leash.ini "$CONF"/profiles.d/*.ini

# bad CONFIG-ERROR-TEXT ARGS...: exit 125, the text on stderr, the job not run,
# no cgroup created, nothing on stdout
bad() {
        local what=$1 expect=$2
        shift 2
        rm -f "$TMP/ran"
        run_leash "$@" -- touch "$TMP/ran"
        if [ "$RC" = 125 ] && [[ "$ERR" == *"$expect"* ]] && [ ! -e "$TMP/ran" ] && [ -z "$OUT" ] &&
                [ -z "$(find "$PARENT" -mindepth 1 -type d)" ]; then
                ok "$what"
        else
                not_ok "$what (rc=$RC, stderr: $ERR)"
        fi
}

# --- a limit from a profile ends the job --------------------------------------------
run_leash --profile trial -o "$TMP/r.json" -- sleep 30
check "the profile's wall-time ends the job: 124" test "$RC" = 124
check "report: reason wall_time" test "$(jget "$TMP/r.json" reason)" = wall_time
check "report: the profile's name" test "$(jget "$TMP/r.json" profile)" = trial
check "report: the profile's file" test "$(jget "$TMP/r.json" profile_source)" = "$CONF/profiles.d/trial.ini"
check "the profile's soft signal (TERM, inherited) was sent" test "$(jget "$TMP/r.json" signals.0.signal)" = TERM
check "inherited from two levels up: pids 100" test "$(jget "$TMP/r.json" limits.pids.value)" = 100
check "inherited from one level up: nofile 256" test "$(jget "$TMP/r.json" limits.nofile.value)" = 256
check "its own value: cpu-time 30s" test "$(jget "$TMP/r.json" limits.cpu_time.value)" = 30.0

# --- the command line overrides just one value ---------------------------------------
run_leash --profile trial -w 45s -o "$TMP/r2.json" -- true
check "override: the job ran to the end" test "$RC" = 0
check "override: wall-time from the command line" test "$(jget "$TMP/r2.json" limits.wall_time.value)" = 45.0
check "override: the rest still from the profile" test "$(jget "$TMP/r2.json" limits.pids.value)" = 100
check "options before and after --profile alike" bash -c \
        "'$LEASH' run --cgroup-parent '$PARENT' -w 45s --profile trial -o '$TMP/r3.json' -- true &&
         [ \"\$($PY -c \"import json; print(json.load(open('$TMP/r3.json'))['limits']['wall_time']['value'])\")\" = 45.0 ]"

# --- no --profile: the built-in default, with leash.ini's values ----------------------------
run_leash -o "$TMP/r4.json" -- true
check "no --profile: profile is default" test "$(jget "$TMP/r4.json" profile)" = default
check "no --profile: built-in, no source file" test "$(jget "$TMP/r4.json" profile_source)" = null
check "leash.ini's grace applies" bash -c "'$LEASH' profiles show default | grep -E '^grace +2s +$CONF/leash.ini:2\$'"

# --- leash.ini: report directory and format --------------------------------------------
mkdir "$TMP/reports"
cat >>"$CONF/leash.ini" <<EOF
report-dir = $TMP/reports
EOF
run_leash --name rd-job -- true
check "report-dir: the job ran" test "$RC" = 0
f=$(ls "$TMP/reports")
check "report-dir: one report named NAME-PID.json ($f)" bash -c "[[ '$f' =~ ^rd-job-[0-9]+\.json\$ ]]"
check "report-dir: it is the job's report" test "$(jget "$TMP/reports/$f" profile)" = default
run_leash --name rd-job -f kv -- true
check "report-dir: --format kv gives a .kv file" bash -c "ls '$TMP/reports' | grep -qE '^rd-job-[0-9]+\.kv\$'"
rm -rf "$TMP/reports"
bad "report-dir that does not exist: refused before the job" "no such directory" --name rd-job
sed -i '/^report-dir/d' "$CONF/leash.ini"

# --- profiles show / list / check ---------------------------------------------------
"$LEASH" profiles show trial >"$TMP/show" 2>&1
rc=$?
check "show: exit 0" test "$rc" = 0
check "show: own value with FILE:LINE" grep -qE "^cpu-time +30s +$CONF/profiles.d/trial.ini:3\$" "$TMP/show"
check "show: inherited value names the ancestor" \
        grep -qE "^pids +100 +inherited from base \($CONF/profiles.d/base.ini:3\)\$" "$TMP/show"
check "show: the chain" grep -qE "^inherits: +short -> base\$" "$TMP/show"
check "show: an ancestor's value beats leash.ini" grep -qE "^grace +100ms +inherited from base" "$TMP/show"
check "show: built-in value" grep -qE "^memory +max +built-in\$" "$TMP/show"
diag "$(cat "$TMP/show")"
"$LEASH" profiles list >"$TMP/list"
check "list: every profile with its source" bash -c "grep -qE '^base +$CONF/profiles.d/base.ini:2\$' '$TMP/list' &&
        grep -qE '^default +built-in\$' '$TMP/list' && grep -qE '^trial +$CONF/profiles.d/trial.ini:1\$' '$TMP/list'"
# issue 41.7: list says where it looked, in the order read
printf '[extra-listed]\n' >"$TMP/extra0.ini"
"$LEASH" profiles list --profile-file "$TMP/extra0.ini" >"$TMP/list2" 2>&1
# root reads no user's profiles.d; an ordinary user reads theirs, after the system's
if [ "$(id -u)" = 0 ]; then user_dir=" (as root: no user profiles.d)"; else
        user_dir=", ${XDG_CONFIG_HOME:-$HOME/.config}/leash/profiles.d/*.ini"
fi
check "list: says where it looked ($(tail -1 "$TMP/list2"))" \
        grep -qxF "searched: $CONF/leash.ini, $CONF/profiles.d/*.ini$user_dir, $TMP/extra0.ini" "$TMP/list2"
check "list: the table ends at a blank line before it" test "$(sed -n '/^$/=' "$TMP/list2")" = "$(($(wc -l <"$TMP/list2") - 1))"
# a relative LEASH_CONFIG_DIR was silently ignored (the built-in directory
# read instead); now it fails loudly: one line naming it, 125, no job
for cmd in "run -- touch $TMP/ran" "profiles list" "slurm status"; do
        rm -f "$TMP/ran"
        LEASH_CONFIG_DIR=conf "$LEASH" $cmd >"$TMP/out" 2>"$TMP/err"
        rc=$?
        check "LEASH_CONFIG_DIR=conf, leash ${cmd%% --*}: 125, one line naming it ($(head -1 "$TMP/err"))" \
                bash -c "[ $rc = 125 ] && [ \"\$(cat '$TMP/err')\" = \"leash: LEASH_CONFIG_DIR: 'conf': expected an absolute path\" ] && [ ! -e '$TMP/ran' ] && [ ! -s '$TMP/out' ]"
done
# leash slurm status --config-dir DIR: the directory the hooks' wrappers name
SD=$TMP/slurmconf
mkdir -p "$SD"
printf '[slurm]\nbogus-key = 1\n' >"$SD/slurm.ini"
LEASH_CONFIG_DIR=$TMP/no-such-dir "$LEASH" slurm status --config-dir "$SD" >"$TMP/out" 2>"$TMP/err"
rc=$?
check "slurm status --config-dir DIR reads DIR/slurm.ini, over LEASH_CONFIG_DIR (exit $rc, no crash)" \
        bash -c "[ $rc != 139 ] && grep -qF \"$SD/slurm.ini:2: unknown key 'bogus-key'\" '$TMP/err'"
LEASH_CONFIG_DIR=$TMP/no-such-dir "$LEASH" slurm status >"$TMP/out" 2>"$TMP/err"
check "control: without it, status reads LEASH_CONFIG_DIR's (no such file: nothing said)" bash -c "! grep -q bogus '$TMP/err'"
"$LEASH" slurm status --config-dir=rel >/dev/null 2>"$TMP/err"
check "slurm status --config-dir=rel: 125, names it" bash -c "[ $? = 125 ] && grep -qF \"'rel': expected an absolute path\" '$TMP/err'"
# the cgroup parent as the kernel names it: no // and no trailing /
"$LEASH" check --cgroup-parent "$(sed 's|/|//|g' <<<"$PARENT")//" >"$TMP/out" 2>&1
check "check: the cgroup parent printed normalised ($(grep '^job cgroups under' "$TMP/out"))" \
        grep -qx "job cgroups under: *$PARENT" "$TMP/out"
"$LEASH" run -q -o "$TMP/np.json" --cgroup-parent "$PARENT//" -- true
check "run: the report's placement path and cgroup normalised ($(jget "$TMP/np.json" cgroup))" \
        bash -c "[ '$(jget "$TMP/np.json" placement.path)' = '$PARENT' ] && [[ '$(jget "$TMP/np.json" cgroup)' =~ ^$PARENT/true@[0-9]+\$ ]]"

"$LEASH" profiles check >"$TMP/check" 2>&1
check "check: a valid configuration exits 0" test $? = 0
printf '[extra]\ninherit = trial\nmemory = 1G\n' >"$TMP/extra.ini"
"$LEASH" profiles check "$TMP/extra.ini" >/dev/null 2>&1
check "check FILE: may inherit an installed profile" test $? = 0
printf '[e1]\nmemroy = 1G\nmemory = 12Q\n[e2]\ninherit = nope\n' >"$TMP/broken.ini"
"$LEASH" profiles check "$TMP/broken.ini" >/dev/null 2>"$TMP/check"
rc=$?
check "check: an invalid file exits 1" test "$rc" = 1
check "check: every error listed, each FILE:LINE" bash -c "
        grep -qx \"leash: $TMP/broken.ini:2: unknown key 'memroy' (value '1G'); did you mean 'memory'?\" '$TMP/check' &&
        grep -qx \"leash: $TMP/broken.ini:3: memory: '12Q': expected a size: bytes or K/M/G/T (1024-based), or max\" '$TMP/check' &&
        grep -qx \"leash: $TMP/broken.ini:5: inherit: unknown profile 'nope'\" '$TMP/check' &&
        [ \$(wc -l <'$TMP/check') = 3 ]"
"$LEASH" profiles show nope >/dev/null 2>"$TMP/e"
check "show: an unknown profile is 125 and lists the known ones" bash -c \
        "[ $? = 125 ] && grep -q \"'nope': unknown profile: expected one of base, default, short, trial\" '$TMP/e'"
cp -r "$LEASH_SRCDIR/conf" "$TMP/shipped"
chmod -R u+w,go-w "$TMP/shipped"
LEASH_CONFIG_DIR=$TMP/shipped "$LEASH" profiles check >"$TMP/out2" 2>&1
check "the shipped conf/ is valid" test $? = 0
LEASH_CONFIG_DIR=$TMP/shipped "$LEASH" profiles show hpo-trial-large >"$TMP/out2" 2>&1
check "shipped hpo-trial-large inherits grace 5s from hpo-trial" grep -qE "^grace +5s +inherited from hpo-trial" "$TMP/out2"

# the shipped judge profile: its sandbox keys reach the job. It is strict, so
# on a host without the memory, pids and cpu controllers it is refused instead.
LEASH_CONFIG_DIR=$TMP/shipped "$LEASH" run --cgroup-parent "$PARENT" --profile judge-threads -o "$TMP/j.json" \
        -- "$HELPERS/lh-probe" tcp-socket >/dev/null 2>&1
jrc=$?
if [ "$(id -u)" != 0 ]; then
        SKIP_WHY="the judge runs its job as nobody: only root can switch identity"
        skip "shipped judge end to end"
elif ! getent passwd nobody >/dev/null; then
        SKIP_WHY="the judge runs its job as nobody, and this machine has no user nobody"
        skip "shipped judge end to end"
elif has_controller memory && has_controller pids && has_controller cpu; then
        check "shipped judge: a TCP socket kills the job (reason seccomp)" test "$(jget "$TMP/j.json" reason)" = seccomp
        check "shipped judge: the job ran as nobody" test "$(jget "$TMP/j.json" sandbox.identity.uid)" = "$(id -u nobody)"
else
        check "shipped judge is strict: refused (125) on a host without the controllers" test "$jrc" = 125
fi

LEASH_CONFIG_DIR=$TMP/shipped "$LEASH" profiles show judge >"$TMP/show" 2>&1
check "profiles show: the VALUE column lines up under its header, long keys included" "$PY" -c "
lines = open('$TMP/show').read().split('\n')
h = next(i for i, l in enumerate(lines) if l.startswith('KEY'))
col = lines[h].index('VALUE')
rows = [l for l in lines[h + 1:] if l]
assert any(r.startswith('no-supplementary-groups') for r in rows)
assert all(r[col - 1] == ' ' and r[col] != ' ' for r in rows), rows"

# list-valued keys (env, unsetenv) may repeat and add up along the inherit chain
printf '[env-base]\nenv = A=1\nenv = B=2\n[env-child]\ninherit = env-base\nenv = C=3\nunsetenv = HOME\n' >"$TMP/env.ini"
chmod 0644 "$TMP/env.ini"
"$LEASH" run --cgroup-parent "$PARENT" --profile-file "$TMP/env.ini" --profile env-child --env D=4 -- \
        sh -c 'echo "$A$B$C$D:${HOME:-unset}"' >"$TMP/envout" 2>&1
check "env repeats in a profile and adds up with inherit and the command line" test "$(cat "$TMP/envout")" = "1234:unset"

# --- configuration errors: 125, FILE:LINE, nothing run -----------------------------------
bad "unknown profile" "--profile: 'nope': unknown profile: expected one of base, default, short, trial" --profile nope
bad "bad profile name" "--profile: 'a/b': expected a profile name" --profile a/b
bad "--profile-file that does not exist" "$TMP/missing.ini: cannot read: No such file or directory" \
        --profile-file "$TMP/missing.ini"
bad "--profile-file with an error" "$TMP/broken.ini:2: unknown key 'memroy' (value '1G'); did you mean 'memory'?" --profile-file "$TMP/broken.ini"
printf '[dup]\n' >"$TMP/dup.ini"
printf '[dup]\n' >"$TMP/dup2.ini"
bad "a duplicate profile across files" "$TMP/dup2.ini:1: duplicate profile [dup]: already defined at $TMP/dup.ini:1" \
        --profile-file "$TMP/dup.ini" --profile-file "$TMP/dup2.ini"
printf '[x1]\ninherit = x2\n[x2]\ninherit = x1\n' >"$TMP/cycle.ini"
bad "an inherit cycle" "$TMP/cycle.ini:2: inherit: a cycle: x1 -> x2 -> x1" --profile-file "$TMP/cycle.ini"
printf '[leash]\nquiet = true\n' >"$CONF/leash.ini.new"
mv "$CONF/leash.ini" "$TMP/leash.ini.good"
mv "$CONF/leash.ini.new" "$CONF/leash.ini"
bad "leash.ini with a command-line-only key" "$CONF/leash.ini:2: key 'quiet' (value 'true') is not allowed in leash.ini" \
        --profile trial
mv "$TMP/leash.ini.good" "$CONF/leash.ini"
bad "a broken file breaks every run, not only its profiles" "$TMP/broken.ini:3: memory: '12Q'" \
        --profile-file "$TMP/broken.ini" --profile trial
run_leash --profile-file "$TMP/extra.ini" --profile extra -o "$TMP/r5.json" -- true
check "--profile-file: its profile is used" test "$(jget "$TMP/r5.json" profile_source)" = "$TMP/extra.ini"

# --- trust: as root, files an ordinary user can change are refused -------------------------
if [ "$(id -u)" = 0 ]; then
mkdir -p "$TMP/t/profiles.d"
chmod 0755 "$TMP/t" "$TMP/t/profiles.d"
printf '[evil]\nmemory = max\n' >"$TMP/t/profiles.d/evil.ini"
chmod 0666 "$TMP/t/profiles.d/evil.ini"
LEASH_CONFIG_DIR=$TMP/t bad "a world-writable profile file" \
        "$TMP/t/profiles.d/evil.ini: refused: it is writable by group or others (mode 0666); as root, leash takes settings only from files that only root can change"
chmod 0644 "$TMP/t/profiles.d/evil.ini"
chown 1000:1000 "$TMP/t/profiles.d/evil.ini"
LEASH_CONFIG_DIR=$TMP/t bad "a profile file owned by uid 1000" \
        "$TMP/t/profiles.d/evil.ini: refused: it is owned by uid 1000, not root"
chown 0:0 "$TMP/t/profiles.d/evil.ini"
chmod 0777 "$TMP/t/profiles.d"
LEASH_CONFIG_DIR=$TMP/t bad "a world-writable profile directory" \
        "$TMP/t/profiles.d: refused: it is writable by group or others (mode 0777)"
chmod 0755 "$TMP/t/profiles.d"
printf '[leash]\n' >"$TMP/t/leash.ini"
chmod 0664 "$TMP/t/leash.ini"
LEASH_CONFIG_DIR=$TMP/t bad "a group-writable leash.ini" "$TMP/t/leash.ini: refused: it is writable by group or others (mode 0664)"
rm "$TMP/t/leash.ini"
printf '[sneaky]\n' >"$TMP/user-owned.ini"
chmod 0666 "$TMP/user-owned.ini"
ln -s "$TMP/user-owned.ini" "$TMP/t/profiles.d/link.ini"
LEASH_CONFIG_DIR=$TMP/t bad "a symlink is judged by its target" \
        "$TMP/t/profiles.d/link.ini: refused: its target $TMP/user-owned.ini is writable by group or others (mode 0666)"
rm "$TMP/t/profiles.d/link.ini"
bad "--profile-file is judged too" "$TMP/user-owned.ini: refused: it is writable" --profile-file "$TMP/user-owned.ini"
LEASH_CONFIG_DIR=$TMP/t "$LEASH" profiles check >/dev/null 2>&1
check "the trusted configuration passes check" test $? = 0
chmod 0666 "$TMP/t/profiles.d/evil.ini"
LEASH_CONFIG_DIR=$TMP/t "$LEASH" profiles check >/dev/null 2>"$TMP/e"
check "check reports a refused file and exits 1" bash -c "[ $? = 1 ] && grep -q 'refused: it is writable' '$TMP/e'"
diag "refused: $(cat "$TMP/e")"

# --- a user's own profile directory (not read for root) -------------------------------------
# nobody must reach leash, the configuration and the home directory: where
# $TMP is out of its reach (a package build's 0700 directory), copies in a
# directory it can enter, else a skip that names why
U=65534 UT=$TMP ULEASH=$LEASH UCONF=$CONF
if ! nobody_reaches "$TMP"; then
        nobody_dir && UT=$NOBODY_DIR && UCONF=$UT/conf && cp -a "$CONF" "$UCONF"
fi
if nobody_reaches "$UT" && nobody_exec "$LEASH"; then
ULEASH=$NOBODY_EXEC
mkdir -p "$UT/home/.config/leash/profiles.d" "$UT/xdg/leash/profiles.d"
printf '[mine]\nmemory = 1G\n' >"$UT/home/.config/leash/profiles.d/mine.ini"
printf '[xdg-mine]\npids = 7\n' >"$UT/xdg/leash/profiles.d/x.ini"
chown -R "$U:$U" "$UT/home" "$UT/xdg"
chmod 0755 "$UT/home" "$UT/xdg"
as_user() { setpriv --reuid="$U" --regid="$U" --clear-groups env -u XDG_CONFIG_HOME HOME="$UT/home" LEASH_CONFIG_DIR="$UCONF" "$@"; }
as_user "$ULEASH" profiles list >"$TMP/ulist" 2>&1
check "user: ~/.config/leash/profiles.d is read" grep -qE "^mine +$UT/home/.config/leash/profiles.d/mine.ini:1\$" "$TMP/ulist"
check "user: the system profiles too" grep -qE "^trial " "$TMP/ulist"
as_user XDG_CONFIG_HOME="$UT/xdg" "$ULEASH" profiles show xdg-mine >"$TMP/ushow" 2>&1
check "user: \$XDG_CONFIG_HOME/leash/profiles.d replaces ~/.config" \
        grep -qE "^pids +7 +$UT/xdg/leash/profiles.d/x.ini:2\$" "$TMP/ushow"
HOME=$UT/home "$LEASH" profiles list >"$TMP/rlist" 2>&1
check "root does not read a user's directory" bash -c "! grep -q '^mine' '$TMP/rlist'"
printf '[mine2]\n' >"$UT/home/.config/leash/profiles.d/open.ini"
chmod 0666 "$UT/home/.config/leash/profiles.d/open.ini"
as_user "$ULEASH" profiles show mine2 >/dev/null 2>&1
check "user: no trust rules for a user's own files" test $? = 0
else
        skip "a user's profile directory"
fi
else
        SKIP_WHY="root's trust rules, chown and setpriv need root"
        skip "trust rules and a user's profile directory"
fi

finish
