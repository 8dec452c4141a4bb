#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Slurm as clusters run it (issue 29): munge, slurmctld and slurmd started by systemd
# from their Debian units (unmasked here only: tests/vm/init-systemd masks them for every
# other script), on pure cgroup v2 with CgroupPlugin=cgroup/v2, ProctrackType=
# proctrack/cgroup, TaskPlugin=task/cgroup,task/affinity and ConstrainRAMSpace=yes.
# slurmd (Delegate=yes in its unit) then owns system.slice/slurmstepd.scope and puts
# every task in job_<id>/step_<s>/user/task_<n> itself.  leash's Prolog, Epilog and
# spank_leash.so are installed the way leash-slurm(8) shows them.
#
# 1. Mode own beside Slurm's cgroup plugin.  On the main of 2026-11-27 (2720a02, this
#    script run against its build) leash made <cgroup2>/leash/slurm/job_1 with the
#    profile's limits, the plugin asked its supervisor to place each task there, and the
#    tasks still ran in Slurm's job_1/step_batch/user/task_0 (Slurm's task plugin moves
#    the task after the plugin's hook): leash's limits, CPU-time ladder and figures were
#    on a cgroup the tasks had left, and its report said reason ok.  The next job with
#    mode = nest in slurm.ini failed its Prolog (unknown key) and drained the node.  Now
#    `leash slurm check` and the Prolog refuse the node: the report says setup_error.
# 2. Mode nest (mode = nest in slurm.ini; slurm.ini is read by each Prolog, so no
#    restart): leash adopts Slurm's cgroups read-only and adds the step-end kill and
#    count of leftovers, memory.peak and OOM kills per step, the CPU-time ladder and the
#    report.  Slurm's verdict is read from sacct, as admins read it: slurmdbd over a
#    MariaDB server, both started by systemd from their Debian units (and from scontrol
#    and jobcomp/filetxt beside it).
# 3. The truth matrix's slurm-nest section (issue 39): tests/truth/matrix.py --tier
#    slurm-nest submits, as uid 1000, one job over and one under each limit of the
#    profiles truthwall, truthcpu and truthlim (--leash-profile), checks each report
#    against the job's own clocks, a burner's getrusage, what it could touch and start
#    and the step's memory.peak it read itself, and compares the section with
#    docs/TRUTH.md's (the one generated is kept: truth-slurm-nest.md).
# No daemon restart: each job costs seconds under TCG.

. "$(dirname "$0")/lib.sh"

B=$LEASH_VM_BUILDDIR
user=$(getent passwd 1000 | cut -d: -f1)
W=/var/tmp/leash-slurm-vm # the jobs' working directory (the guest's own, in the overlay)
D=/etc/leash-vm           # leash's configuration for the hooks
# The host's packages (tools/install-deps.sh test: slurm-wlm, munge, libslurm-dev) and
# the plugin built against them; outside CI their absence is a skip.
for need in slurmd slurmctld slurmdbd sacct mariadbd munged sbatch "$B/src/slurm/spank_leash.so"; do
	if ! command -v "$need" >/dev/null && [[ ! -e $need ]]; then
		[[ ${CI:-false} == true ]] && { tap_fail "$need is here (CI=true)"; tap_plan 1; exit 1; }
		echo "1..0 # SKIP $need not found (tools/install-deps.sh test; ./configure finds libslurm-dev)"
		exit 0
	fi
done
mkdir -p "$W" "$D/profiles.d" /var/log/leash /usr/libexec/leash
chmod 1777 "$W"

# --- the node, configured the way a cluster configures it ---------------------------
mkdir -p /etc/slurm /var/spool/slurmd /var/lib/slurm/slurmctld /var/log/slurm
slurmuser=root
id slurm >/dev/null 2>&1 && slurmuser=slurm
chown "$slurmuser" /var/lib/slurm/slurmctld /var/log/slurm
node=$(slurmd -C 2>/dev/null | sed -n '1s/^NodeName=\([^ ]*\).*/\1/p')
mem=$(awk '/^MemTotal:/ { printf "%d", $2 / 1024 - 64 }' /proc/meminfo)
cat >/etc/slurm/slurm.conf <<-EOF
	ClusterName=leashvm
	SlurmctldHost=$node(127.0.0.1)
	SlurmUser=$slurmuser
	AuthType=auth/munge
	CredType=cred/munge
	ProctrackType=proctrack/cgroup
	TaskPlugin=task/cgroup,task/affinity
	JobAcctGatherType=jobacct_gather/cgroup
	AccountingStorageType=accounting_storage/slurmdbd
	AccountingStorageHost=localhost
	JobCompType=jobcomp/filetxt
	JobCompLoc=/var/log/slurm/jobcomp.log
	SelectType=select/cons_tres
	SelectTypeParameters=CR_Core_Memory
	SchedulerType=sched/builtin
	MpiDefault=none
	ReturnToService=2
	SlurmdSpoolDir=/var/spool/slurmd
	StateSaveLocation=/var/lib/slurm/slurmctld
	SlurmctldLogFile=/var/log/slurm/slurmctld.log
	SlurmdLogFile=/var/log/slurm/slurmd.log
	SlurmctldDebug=info
	SlurmdDebug=info
	MessageTimeout=20
	KillWait=2
	MinJobAge=300
	InactiveLimit=0
	PrologEpilogTimeout=60
	Prolog=/usr/libexec/leash/slurm-prolog
	Epilog=/usr/libexec/leash/slurm-epilog
	PrologFlags=Alloc
	PlugStackConfig=/etc/slurm/plugstack.conf
	NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=$mem State=UNKNOWN
	PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
cat >/etc/slurm/cgroup.conf <<-EOF
	CgroupPlugin=cgroup/v2
	ConstrainCores=yes
	ConstrainRAMSpace=yes
	ConstrainSwapSpace=yes
	AllowedSwapSpace=0
EOF
# slurmdbd over MariaDB (root reaches the server through its unix socket, Debian's default)
dbpass=leash-vm-$RANDOM
cat >/etc/slurm/slurmdbd.conf <<-EOF
	AuthType=auth/munge
	DbdHost=localhost
	SlurmUser=$slurmuser
	StorageType=accounting_storage/mysql
	StorageHost=localhost
	StorageUser=slurm
	StoragePass=$dbpass
	StorageLoc=slurm_acct_db
	LogFile=/var/log/slurm/slurmdbd.log
	PidFile=/run/slurmdbd.pid
EOF
chown "$slurmuser" /etc/slurm/slurmdbd.conf
chmod 600 /etc/slurm/slurmdbd.conf
echo "required $B/src/slurm/spank_leash.so state-dir=/run/leash/slurm leash=/usr/libexec/leash/leash" \
	>/etc/slurm/plugstack.conf

# --- leash, installed the packaged way (wrappers give it this configuration) -------
cat >"$D/profiles.d/vm.ini" <<-EOF
	[vm]
	wall-time = 300s
	[truthwall]
	wall-time = 3s
	grace = 2s
	[truthcpu]
	cpu-time = 2s
	grace = 2s
	[truthlim]
	memory = 64M
	pids = 20
	cpus = 0.1
	[truthsampled]
	wall-time = 60s
	limit = threads=5
	sample = 100ms
EOF
slurm_ini() {
	cat >"$D/slurm.ini" <<-EOF
		[slurm]
		profile = vm
		user-profiles = truthwall, truthcpu, truthlim, truthsampled
		state-dir = /run/leash/slurm
		report-dir = /var/log/leash/slurm
		kill-timeout = 5s
		$1
	EOF
}
slurm_ini ""
for w in prolog epilog; do
	printf '#!/bin/bash\nexport LEASH_CONFIG_DIR=%s\nexec -a slurm-%s %s --config-dir=%s 2>>/var/log/leash/slurm-%s.log\n' \
		"$D" "$w" "$LEASH" "$D" "$w" >"/usr/libexec/leash/slurm-$w"
	chmod 755 "/usr/libexec/leash/slurm-$w"
done
printf '#!/bin/bash\nexport LEASH_CONFIG_DIR=%s\nexec %s "$@"\n' "$D" "$LEASH" >/usr/libexec/leash/leash
chmod 755 /usr/libexec/leash/leash

# bail DESC: what the daemons said, then the end of the script (a dead cluster would
# otherwise spend the script's whole time limit in timeouts).
bail() {
	tap_fail "$1"
	for u in munge mariadb slurmdbd slurmctld slurmd; do
		tap_diag "$(systemctl status --no-pager -n 0 "$u.service" 2>&1 | head -n 4)"
	done
	tap_diag "$(journalctl -q --no-pager -n 20 -u munge.service -u mariadb.service -u slurmdbd.service \
		-u slurmctld.service -u slurmd.service 2>&1)"
	tap_diag "$(tail -n 15 /var/log/slurm/slurmdbd.log /var/log/slurm/slurmctld.log /var/log/slurm/slurmd.log \
		/var/log/leash/*.log 2>&1)"
	timeout 30 systemctl stop slurmd.service slurmctld.service slurmdbd.service mariadb.service munge.service
	tap_plan "$_tap_n"
	exit 1
}

# --- start them through systemd, as on a node ------------------------------------
# The VM has no network device, only lo: slurmctld and slurmd bind with getaddrinfo's
# AI_ADDRCONFIG, which glibc answers only where some IPv4 address other than 127.0.0.1
# is configured ("getaddrinfo() failed: Name or service not known", seen here).  A node
# has one; this one gets a /32 on lo.
ip addr add 10.254.254.1/32 dev lo 2>/dev/null
for u in munge.service mariadb.service slurmdbd.service slurmctld.service slurmd.service; do
	rm -f "/etc/systemd/system/$u" # the overlay's masks
done
systemctl daemon-reload
t0=$SECONDS
timeout 120 systemctl start munge.service mariadb.service || bail "systemctl start munge mariadb"
mysql -e "CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY '$dbpass';
	GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';" || bail "the database user for slurmdbd"
timeout 120 systemctl start slurmdbd.service || bail "systemctl start slurmdbd"
for _ in $(seq 60); do # slurmdbd answers once it has made its tables
	timeout 10 sacctmgr -i add cluster leashvm >"$TMP/sacctmgr" 2>&1 && break
	sleep 1
done
timeout 10 sacctmgr -n -P list cluster format=cluster | grep -qx leashvm ||
	bail "sacctmgr add cluster leashvm: $(cat "$TMP/sacctmgr")"
timeout 120 systemctl start slurmctld.service slurmd.service || bail "systemctl start slurmctld slurmd"
tap_ok "systemctl start munge mariadb slurmdbd slurmctld slurmd (their Debian units; $((SECONDS - t0)) s)"
state=
while ((SECONDS - t0 < 90)); do
	state=$(timeout 10 sinfo -h -N -o %t 2>&1 | head -n 1)
	[[ $state == idle* ]] && break
	sleep 1
done
[[ $state == idle* ]] || bail "the node $node is idle (sinfo: $state)"
tap_ok "the node $node is idle ($((SECONDS - t0)) s after the start)"
slurmd_cg=$(grep '^0::' "/proc/$(systemctl show -P MainPID slurmd.service)/cgroup" | cut -d: -f3)
tap_is "$slurmd_cg" /system.slice/slurmd.service "slurmd runs in its own unit's cgroup"
# 22.05 names the scope after the node (<node>_slurmstepd.scope), later releases
# slurmstepd.scope; slurmd made it through systemd and keeps a `slurmstepd infinity`
# in its system/ leaf so that systemd keeps it.
scope_unit=${node}_slurmstepd.scope
[[ -d $CG/system.slice/$scope_unit ]] || scope_unit=slurmstepd.scope
SCOPE=$CG/system.slice/$scope_unit
tap_check "slurmd made $scope_unit through systemd" systemctl is-active -q "$scope_unit"
scope_rel=${SCOPE#"$CG"}

# submit ARGS...: sbatch as the user; prints the job id.
submit() {
	(cd "$W" && timeout 60 runuser -u "$user" -- sbatch --parsable -o "$W/out.%j" "$@") 2>"$TMP/sbatch.err" |
		cut -d';' -f1
}
# job_done ID: until the job has ended (120 s), else bail.
job_done() {
	local s t=$SECONDS
	[[ -n $1 ]] || bail "sbatch: $(cat "$TMP/sbatch.err")"
	while ((SECONDS - t < 120)); do
		s=$(timeout 10 scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
		case $s in PENDING | RUNNING | COMPLETING | CONFIGURING | "") sleep 0.5 ;; *) return 0 ;; esac
	done
	bail "job $1 ended within 120 s ($s)"
}
job_state() { timeout 10 scontrol show job "$1" | sed -n 's/.*JobState=\([A-Z_]*\) Reason=\([^ ]*\).*/\1 \2/p'; }
# report ID: the report's path, once the Epilog wrote it (60 s).
report() {
	local f=/var/log/leash/slurm/$1.$node.json t=$SECONDS
	while [[ ! -s $f ]] && ((SECONDS - t < 60)); do sleep 0.2; done
	echo "$f"
}
# scope_empty: no job_* left under slurmstepd.scope (10 s for Slurm to remove it).
scope_empty() {
	local left
	[[ -d $SCOPE ]] || { tap_diag "no $SCOPE"; return 1; }
	for _ in $(seq 50); do
		left=$(find "$SCOPE" -mindepth 1 -maxdepth 1 -type d -name 'job_*')
		[[ -z $left ]] && return 0
		sleep 0.2
	done
	tap_diag "left: $left"
	return 1
}
dead() {
	[[ -n $1 ]] || return 1
	for _ in $(seq 30); do
		[[ ! -e /proc/$1 ]] && return 0
		sleep 0.1
	done
	return 1
}
# stepj FILE STEP FIELD: a field of the report's steps[] entry STEP.
stepj() {
	"$PY" - "$1" "$2" "$3" <<-'PYEOF'
		import json, sys
		r = json.load(open(sys.argv[1]))
		s = [s for s in r.get('steps', []) if s.get('step') == sys.argv[2]]
		v = s[0] if s else {}
		for k in sys.argv[3].split('.'):
		    v = v.get(k) if isinstance(v, dict) else None
		print('null' if v is None else v)
	PYEOF
}

# run_job SBATCH-ARGS...: submits, waits, sets id, out (its output) and rep (leash's report).
run_job() {
	id=$(submit "$@")
	job_done "$id"
	rep=$(report "$id")
	out=$W/out.$id
}
# in_slurm_cgroups LABEL: where.sh's batch script and srun step ran where Slurm put them.
in_slurm_cgroups() {
	tap_check "$1: the batch script ran in ${scope_rel#/}/job_$id/step_batch/user/task_0" \
		grep -qx "batch_cgroup=0::/${scope_rel#/}/job_$id/step_batch/user/task_0" "$out"
	tap_check "$1: the srun step in job_$id/step_0/user/task_0" \
		grep -qx "step_cgroup=0::/${scope_rel#/}/job_$id/step_0/user/task_0" "$out"
}

# --- the jobs -------------------------------------------------------------------------
cat >"$W/where.sh" <<-EOF
	#!/bin/bash
	echo "batch_cgroup=\$(grep '^0::' /proc/self/cgroup)"
	srun -n1 bash -c 'echo "step_cgroup=\$(grep ^0:: /proc/self/cgroup)"'
	echo "job_memmax=\$(cat $SCOPE/job_\$SLURM_JOB_ID/memory.max)"
	find $SCOPE/job_\$SLURM_JOB_ID -type d | sed 's|^$SCOPE/|tree=|'
	setsid -f bash -c 'echo \$\$ >$W/daemon.\$SLURM_JOB_ID; exec sleep 1000' </dev/null >/dev/null 2>&1
	for _ in \$(seq 50); do [ -s $W/daemon.\$SLURM_JOB_ID ] && break; sleep 0.1; done
EOF
# Over --mem in the batch step itself (Slurm calls the job OUT_OF_MEMORY when its batch
# step had an OOM kill; one in an srun step left the job COMPLETED, seen here), then the
# step's own memory.peak, read in the step: the ground truth for leash's figure.
cat >"$W/oom.sh" <<-EOF
	#!/bin/bash
	$LEASH_VM_HOG alloc 200
	echo "hog_rc=\$?"
	d=$CG\$(grep ^0:: /proc/self/cgroup | cut -d: -f3)/../..
	echo "step_peak=\$(cat \$d/memory.peak)"
	echo "step_oom_kill=\$(grep ^oom_kill \$d/memory.events | cut -d' ' -f2)"
EOF
chmod 755 "$W"/*.sh

# --- 1. mode own beside Slurm's cgroup plugin: refused ----------------------------------
check_out=$(SLURM_CONF=/etc/slurm/slurm.conf /usr/libexec/leash/leash slurm check 2>&1)
check_rc=$?
tap_diag "$check_out"
tap_is "$check_rc" 1 "leash slurm check refuses mode own beside task/cgroup"
tap_check "because both would place tasks" grep -q 'both would place tasks' <<<"$check_out"

run_job --mem=64M "$W/where.sh"
tap_diag "$(cat "$out")"
in_slurm_cgroups "own beside task/cgroup"
tap_is "$(sed -n 's/^job_memmax=//p' "$out")" $((64 << 20)) "ConstrainRAMSpace: job_$id's memory.max is --mem"
tap_is "$(jget "$rep" reason)" setup_error "mode own beside task/cgroup: the report says setup_error"
tap_check "because both would place tasks" grep -q 'both would place tasks' "$rep"
tap_check "nothing at the top of systemd's tree ($CG/leash/slurm/job_$id)" test ! -e "$CG/leash/slurm/job_$id"
tap_check "Slurm killed the setsid daemon (proctrack/cgroup)" dead "$(cat "$W/daemon.$id" 2>/dev/null)"
tap_check "nothing is left under slurmstepd.scope after job $id" scope_empty

# --- 2. mode nest: leash adopts Slurm's cgroups read-only ----------------------------
slurm_ini "mode = nest"
check_out=$(SLURM_CONF=/etc/slurm/slurm.conf /usr/libexec/leash/leash slurm check 2>&1)
check_rc=$?
tap_diag "$check_out"
tap_is "$check_rc" 0 "leash slurm check: mode nest on this node"

run_job --mem=64M "$W/where.sh"
tap_diag "$(head -c 3000 "$rep")"
in_slurm_cgroups nest
tap_is "$(jget "$rep" cgroup)" "$SCOPE/job_$id" "nest: the report names Slurm's job cgroup"
tap_is "$(jget "$rep" reason)" ok "nest: reason ok"
# the CPU figures are Slurm's job cgroup's, which holds slurmstepd: the report says so
# (it gave 0.724 s for a burner's 0.519 s with no word of why)
tap_check "nest: usage.cpu_time_note says slurmstepd's CPU time counts" \
	grep -q "holds slurmstepd" <<<"$(jget "$rep" usage.cpu_time_note)"
tap_is "$(jget "$rep" placement.kind)" adopted "nest: placement kind adopted (not none)"
tap_is "$(jget "$rep" placement.path)" "$SCOPE" "nest: placement path: slurmstepd.scope, where Slurm made the job"
tap_check "nest: placement why names Slurm's job cgroup" grep -q "Slurm's job cgroup" <<<"$(jget "$rep" placement.why)"
tap_check "nest: the setsid daemon is dead after the job" dead "$(cat "$W/daemon.$id" 2>/dev/null)"
tap_is "$(stepj "$rep" batch leftovers_killed)" 1 "nest: leash killed and counted it at the batch step's end"
tap_check "nest: nothing is left under slurmstepd.scope after job $id" scope_empty

run_job --mem=64M "$W/oom.sh"
tap_diag "$(cat "$out")"
tap_is "$(job_state "$id")" "OUT_OF_MEMORY OutOfMemory" "nest: Slurm says job $id is OUT_OF_MEMORY"
tap_is "$(jget "$rep" reason)" memory "nest: leash's report says reason memory"
# the limit that ended it is Slurm's: the report names it and who enforced it (it
# said reason memory beside no memory limit, its text "memory limit ((not in the report))")
tap_is "$(jget "$rep" limits.memory.value)/$(jget "$rep" limits.memory.enforced_by)" $((64 << 20))/cgroup \
	"nest: limits.memory is Slurm's --mem (64 MiB), enforced by Slurm's job cgroup"
tap_check "nest: its note says it is Slurm's memory.max, read by leash" \
	grep -q "Slurm's --mem" <<<"$(jget "$rep" limits.memory.note)"
tap_check "nest: the batch step had the OOM kill (steps[batch].oom_kills >= 1)" \
	test "$(stepj "$rep" batch oom_kills)" -ge 1
truth=$(sed -n 's/^step_peak=//p' "$out")
tap_is "$(stepj "$rep" batch memory_peak_bytes)" "$truth" "nest: the batch step's peak is its cgroup's memory.peak ($truth)"
keep slurm-nest-oom.json "$rep"
{
	echo "scontrol: $(timeout 10 scontrol show job "$id" | grep -o 'JobState=[^ ]* Reason=[^ ]*')"
	echo "jobcomp: $(grep "JobId=$id " /var/log/slurm/jobcomp.log)"
} >"$TMP/slurm-oom.txt"
# sacct, once slurmctld has sent the job's end to slurmdbd
for _ in $(seq 60); do
	sacct_out=$(timeout 10 sacct -j "$id" -n -P -o JobID,State,ExitCode,MaxRSS 2>&1)
	grep -q "^$id.batch|OUT_OF_MEMORY" <<<"$sacct_out" && grep -q "^$id|OUT_OF_MEMORY" <<<"$sacct_out" && break
	sleep 1
done
echo "sacct -j $id -o JobID,State,ExitCode,MaxRSS: $(tr '\n' ' ' <<<"$sacct_out")" >>"$TMP/slurm-oom.txt"
keep slurm-nest-oom-slurm.txt "$TMP/slurm-oom.txt"
tap_diag "$(cat "$TMP/slurm-oom.txt")"
tap_check "nest: sacct says job $id is OUT_OF_MEMORY" grep -q "^$id|OUT_OF_MEMORY|" <<<"$sacct_out"
tap_check "nest: sacct says its batch step is OUT_OF_MEMORY" grep -q "^$id.batch|OUT_OF_MEMORY|" <<<"$sacct_out"
tap_check "nest: nothing is left under slurmstepd.scope after job $id" scope_empty

# a profile's own memory (truthlim: 64M) beside Slurm's --mem=96M: the profile's stays,
# not applied, and its note and warning name Slurm's, which held (the report named
# only the profile's, not enforced, and said the job might use any amount)
run_job --mem=96M --leash-profile=truthlim "$W/where.sh"
tap_is "$(jget "$rep" limits.memory.value)/$(jget "$rep" limits.memory.enforced_by)" $((64 << 20))/none \
	"nest, profile memory 64M beside --mem=96M: limits.memory is the profile's, not applied"
tap_check "nest: its note names Slurm's memory.max, which held ($(jget "$rep" limits.memory.note))" \
	grep -q "held the job to memory.max 96M, its --mem" <<<"$(jget "$rep" limits.memory.note)"
tap_check "nest: and so does its warning, with mode nest ($(jget "$rep" warnings))" \
	grep -q "memory.max 96M.*mode nest" <<<"$(jget "$rep" warnings)"
tap_check "nest: nothing is left under slurmstepd.scope after job $id" scope_empty

# a measured limit (truthsampled: threads=5, sampled every 100 ms) on a batch script of 4
# threads at most (bash, two sleeps, one more at a time): slurmstepd's own threads, in
# step_batch/slurm, are left out of the count, as the ladder leaves them alone; the script
# reads their count itself. Control, the code before: the job ended at the limit, its
# report counting slurmstepd's threads as the job's.
cat >"$W/sampled.sh" <<-EOF
	#!/bin/bash
	sleep 30 & sleep 30 &
	sleep 1.5
	echo "stepd_threads=\$(wc -l <$SCOPE/job_\$SLURM_JOB_ID/step_batch/slurm/cgroup.threads)"
	kill %1 %2
EOF
run_job --leash-profile=truthsampled "$W/sampled.sh"
stepd=$(sed -n 's/^stepd_threads=//p' "$out")
tap_diag "job $id: slurmstepd's threads in step_batch/slurm: $stepd; peak $(jget "$rep" sampling.peaks.threads.value) ($(jget "$rep" sampling.peaks.threads.basis))"
tap_check "nest, threads=5: slurmstepd has threads of its own to leave out ($stepd)" test "${stepd:-0}" -ge 2
tap_is "$(jget "$rep" reason)/$(jget "$rep" sampling.limit_reached)" ok/null \
	"nest, threads=5: the job of 4 threads ran to its end, no measured limit passed"
tap_check "nest: the threads peak is the script's, at most 5 ($(jget "$rep" sampling.peaks.threads.value))" \
	test "$(jget "$rep" sampling.peaks.threads.value)" -le 5
tap_check "nest: its basis says what was left out ($(jget "$rep" sampling.peaks.threads.basis))" \
	grep -q "less the cgroups not the job's" <<<"$(jget "$rep" sampling.peaks.threads.basis)"
tap_check "nest: and the memory peak's too ($(jget "$rep" sampling.peaks.memory_bytes.basis))" \
	grep -q "^memory.current, less the cgroups not the job's" <<<"$(jget "$rep" sampling.peaks.memory_bytes.basis)"
tap_check "nest: sampling.note names slurmstepd's cgroups ($(jget "$rep" sampling.note))" \
	grep -q "slurmstepd's cgroups (step_\*/slurm) left out" <<<"$(jget "$rep" sampling.note)"
tap_check "nest: nothing is left under slurmstepd.scope after job $id" scope_empty

# --- 3. the truth matrix's slurm-nest section ----------------------------------------
SRC=${LEASH_VM_SRCDIR:-$(cd "$(dirname "$0")/../../.." && pwd)}
cp "$SRC/docs/TRUTH.md" "$TMP/truth.md"
t1=$SECONDS
SLURM_TRUTH_WORK=$W SLURM_TRUTH_REPORTS=/var/log/leash/slurm SLURM_TRUTH_NODE=$node SLURM_TRUTH_USER=$user \
	HELPERS=$B/tests/helpers "$PY" "$SRC/tests/truth/matrix.py" --tier slurm-nest \
	--compare "$SRC/docs/TRUTH.md" --write "$TMP/truth.md" >"$TMP/tap" 2>"$TMP/log"
rc=$?
keep truth-slurm-nest.md "$TMP/truth.md"
truth_tap "$TMP/tap" "truth: "
tap_check "truth: the matrix ran and every nest cell held (status $rc, $((SECONDS - t1)) s)" test "$rc" = 0
[ $rc = 0 ] || tap_diag "$(tail -20 "$TMP/log")"
tap_check "nest: nothing is left under slurmstepd.scope after the matrix's jobs" scope_empty
tap_check "nest: no state of leash's is left" bash -c '[[ -z $(ls /run/leash/slurm) ]]'

timeout 60 systemctl stop slurmd.service slurmctld.service slurmdbd.service mariadb.service munge.service
left=$(pgrep -a -x slurmstepd | grep -v 'slurmstepd infinity')
tap_is "$left" "" "no slurmstepd is left but Slurm's scope keeper (slurmstepd infinity)"
timeout 60 systemctl stop "$scope_unit"
tap_plan "$_tap_n"
tap_done
