#!/usr/bin/env bash
# A one-machine Slurm cluster from Debian's packages (slurm-wlm, munge), for CI and for
# trying `mlbench run --slurm --submit` (docs/runner.md, "Slurm"). Idempotent; as root.
#
#   scripts/slurm-local.sh start   install if needed, write the config, start munged,
#                                   slurmctld and slurmd; waits until the node is idle
#   scripts/slurm-local.sh stop    stop the three daemons by the pids they left
#   scripts/slurm-local.sh status  sinfo
#
# $SLURM_LOCAL_NODES nodes (default 2: n1, n2), each a slurmd of its own on this machine
# with its share of the CPUs and memory, so that multi-node jobs (srun over 2 nodes,
# `mlbench run --slurm --across-nodes`) run for real; ProctrackType=proctrack/linuxproc and
# TaskPlugin=task/none (no cgroups needed, so it runs in containers); SelectType
# select/cons_tres. State lives under $SLURM_LOCAL_DIR (default /var/lib/mlbench-slurm).
set -euo pipefail

dir=${SLURM_LOCAL_DIR:-/var/lib/mlbench-slurm}
nodes=${SLURM_LOCAL_NODES:-2}
conf=/etc/slurm/slurm.conf
host=$(hostname -s)

need_root() {
    if [ "$(id -u)" -ne 0 ]; then
        echo "slurm-local: run as root (it installs packages and starts daemons)" >&2
        exit 2
    fi
}

running() { local pid; pid=$(cat "$1" 2>/dev/null) && kill -0 "$pid" 2>/dev/null; }

start() {
    need_root
    if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
        log=$(mktemp)
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge; } \
            >"$log" 2>&1 || { tail -20 "$log" >&2; exit 1; }
    fi
    mkdir -p "$dir"/{ctld,d,log} /etc/slurm /etc/munge /run/munge /var/log/munge /var/lib/munge
    # munge: a key once, then the daemon (as root: no munge user needed in containers).
    if [ ! -s /etc/munge/munge.key ]; then
        if command -v mungekey >/dev/null; then
            mungekey --create --force --keyfile=/etc/munge/munge.key >/dev/null
        else
            dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 2>/dev/null
        fi
    fi
    chown -R root:root /etc/munge /var/lib/munge /var/log/munge /run/munge
    chmod 0400 /etc/munge/munge.key
    chmod 0700 /etc/munge /var/lib/munge /var/log/munge
    chmod 0755 /run/munge
    if ! running "$dir/munged.pid"; then
        munged --force --pid-file="$dir/munged.pid" --socket=/run/munge/munge.socket.2
    fi
    cpus=$(( $(nproc) / nodes )); [ "$cpus" -ge 1 ] || cpus=1
    mem=$(awk -v n="$nodes" '/MemTotal/ { printf "%d", $2 / 1024 * 0.9 / n }' /proc/meminfo)
    node_lines=""
    for i in $(seq "$nodes"); do
        node_lines+="NodeName=n$i NodeHostname=$host Port=$((17000 + i)) CPUs=$cpus RealMemory=$mem State=UNKNOWN"$'\n'
    done
    cat >"$conf" <<CONF
# Written by mlbench's scripts/slurm-local.sh: $nodes nodes, all on this machine.
ClusterName=mlbench-local
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
ReturnToService=2
StateSaveLocation=$dir/ctld
SlurmdSpoolDir=$dir/d-%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
MinJobAge=3600
${node_lines}PartitionName=local Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
    if ! running "$dir/slurmctld.pid"; then
        slurmctld
    fi
    for i in $(seq "$nodes"); do
        mkdir -p "$dir/d-n$i"
        running "$dir/slurmd-n$i.pid" || slurmd -N "n$i"
    done
    for _ in $(seq 60); do
        states=$(sinfo -h -N -o %t 2>/dev/null | sort -u | tr '\n' ' ')
        up=$(sinfo -h -N -o %t 2>/dev/null | grep -cE '^(idle|mix|alloc)' || true)
        if [ "$up" -ge "$nodes" ]; then
            echo "slurm-local: $nodes nodes up on $host ($states)"
            return 0
        fi
        case "$states" in
            *down*|*drain*) scontrol update nodename="n[1-$nodes]" state=resume 2>/dev/null || true ;;
        esac
        sleep 1
    done
    echo "slurm-local: the nodes did not come up; see $dir/log" >&2
    tail -5 "$dir"/log/*.log >&2 || true
    exit 1
}

stop() {
    need_root
    local daemons=""
    for i in $(seq "$nodes"); do daemons+="slurmd-n$i "; done
    for d in $daemons slurmd slurmctld munged; do
        if running "$dir/$d.pid"; then
            kill "$(cat "$dir/$d.pid")"
            for _ in $(seq 20); do running "$dir/$d.pid" || break; sleep 0.5; done
        fi
        rm -f "$dir/$d.pid"
    done
    echo "slurm-local: stopped"
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    status) sinfo ;;
    *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
