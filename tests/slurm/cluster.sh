# SPDX-License-Identifier: LGPL-2.1-or-later
# A single-node Slurm cluster on 127.0.0.1 for the slurm tier, sourced by
# tests/slurm/run. Everything lives in $SLURM_DIR (a private temp directory):
# configuration, munge key and socket, state, spool, logs, pid files. The
# daemons run as root, are started by pid and stopped by pid; nothing of the
# host's own Slurm or munge (if any) is read or touched.
#
#   cluster_write_conf EXTRA_SLURM_CONF_LINES   writes slurm.conf (+ plugstack.conf)
#   cluster_start                                munged, slurmctld, slurmd; waits until the node is idle
#   cluster_restart                              slurmctld + slurmd again (after a conf change)
#   cluster_stop                                 kills what cluster_start started, by pid
#   cluster_node_state                           sinfo's state of the node ("idle", "drained", ...)

cluster_free_port() { # a TCP port nobody listens on, from a range unlikely to be used
        local p
        for _ in $(seq 50); do
                p=$((20000 + RANDOM % 20000))
                if ! ss -Htln "sport = :$p" 2>/dev/null | grep -q .; then
                        echo "$p"
                        return 0
                fi
        done
        return 1
}

cluster_write_conf() { # EXTRA: lines appended to slurm.conf
        local extra=$1
        : "${SLURM_CTLD_PORT:=$(cluster_free_port)}" "${SLURM_D_PORT:=$(cluster_free_port)}"
        cat >"$SLURM_DIR/slurm.conf" <<CONF
ClusterName=leashtest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$SLURM_CTLD_PORT
SlurmdPort=$SLURM_D_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SLURM_DIR/munge/munge.sock
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SlurmctldPidFile=$SLURM_DIR/slurmctld.pid
SlurmdPidFile=$SLURM_DIR/slurmd.pid
SlurmdSpoolDir=$SLURM_DIR/spool
StateSaveLocation=$SLURM_DIR/state
SlurmctldLogFile=$SLURM_DIR/slurmctld.log
SlurmdLogFile=$SLURM_DIR/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
MessageTimeout=10
KillWait=2
InactiveLimit=0
MinJobAge=2
PrologEpilogTimeout=60
PlugStackConfig=$SLURM_DIR/plugstack.conf
$extra
NodeName=leashnode NodeHostname=$(hostname -s) NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=leashnode Default=YES MaxTime=INFINITE State=UP
PartitionName=short Nodes=leashnode MaxTime=INFINITE State=UP
PartitionName=truth Nodes=leashnode MaxTime=INFINITE State=UP
CONF
        [ -f "$SLURM_DIR/plugstack.conf" ] || : >"$SLURM_DIR/plugstack.conf"
        chmod 644 "$SLURM_DIR/slurm.conf" "$SLURM_DIR/plugstack.conf"
}

cluster_pid() { # NAME: the pid in NAME.pid, if that process lives
        local f=$SLURM_DIR/$1.pid pid
        [ -f "$f" ] || return 1
        pid=$(cat "$f")
        [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

cluster_start_munge() {
        mkdir -p "$SLURM_DIR/munge"
        chmod 755 "$SLURM_DIR/munge" # users reach the socket; the key stays 0400
        dd if=/dev/urandom of="$SLURM_DIR/munge/munge.key" bs=1024 count=1 status=none
        chmod 400 "$SLURM_DIR/munge/munge.key"
        # munged insists that its directories are not writable by others; the
        # temp dir's parent (/tmp) is sticky, which --force accepts
        munged --force --socket="$SLURM_DIR/munge/munge.sock" --key-file="$SLURM_DIR/munge/munge.key" \
                --pid-file="$SLURM_DIR/munged.pid" --log-file="$SLURM_DIR/munge/munged.log" \
                --seed-file="$SLURM_DIR/munge/munged.seed" || return 1
        for _ in $(seq 50); do
                [ -S "$SLURM_DIR/munge/munge.sock" ] && return 0
                sleep 0.1
        done
        return 1
}

cluster_start_daemons() {
        mkdir -p "$SLURM_DIR/spool" "$SLURM_DIR/state"
        slurmctld -f "$SLURM_DIR/slurm.conf" -i || return 1
        slurmd -f "$SLURM_DIR/slurm.conf" -N leashnode || return 1
        # idle within 30 s, or say why not
        for _ in $(seq 300); do
                case $(cluster_node_state) in
                idle*) return 0 ;;
                esac
                sleep 0.1
        done
        echo "# the node did not become idle: $(cluster_node_state)" >&2
        tail -5 "$SLURM_DIR/slurmctld.log" "$SLURM_DIR/slurmd.log" | sed 's/^/# /' >&2
        return 1
}

cluster_start() {
        export SLURM_CONF=$SLURM_DIR/slurm.conf
        cluster_start_munge || { echo "# munged did not start" >&2; return 1; }
        cluster_start_daemons
}

cluster_stop_daemons() {
        local pid pids=()
        for d in slurmd slurmctld; do
                pid=$(cluster_pid "$d") && pids+=("$pid")
        done
        [ ${#pids[@]} -gt 0 ] || return 0
        kill -TERM "${pids[@]}" 2>/dev/null
        for _ in $(seq 100); do
                kill -0 "${pids[@]}" 2>/dev/null || return 0
                sleep 0.1
        done
        kill -KILL "${pids[@]}" 2>/dev/null
        sleep 0.2
}

cluster_restart() {
        cluster_stop_daemons
        rm -f "$SLURM_DIR/slurmd.pid" "$SLURM_DIR/slurmctld.pid"
        cluster_start_daemons
}

cluster_stop() {
        local pid
        cluster_stop_daemons
        if pid=$(cluster_pid munged); then
                kill -TERM "$pid" 2>/dev/null
                for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        fi
}

cluster_node_state() {
        sinfo -h -N -n leashnode -o '%T' 2>/dev/null | head -1
}
