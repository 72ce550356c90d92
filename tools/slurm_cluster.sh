#!/usr/bin/env bash
# A real Slurm cluster on this one machine, for the tests of tools/slurm_train.sh: munged, slurmctld and N
# slurmd (nodes cn01..cnNN, Debian's slurm-wlm with MULTIPLE_SLURMD), every node with GPUS stand-in GPU
# devices (character devices made with mknod, so that --gres=gpu:K is granted; torch sees no CUDA), one
# partition `cpu`. Everything lives in one temporary folder; the daemons are stopped by their PIDs.
#   tools/slurm_cluster.sh start [N]     prints `export SLURM_CONF=DIR/slurm.conf` (eval it); N defaults to 2
#   tools/slurm_cluster.sh stop [DIR]    DIR defaults to the folder of $SLURM_CONF
# Environment for start: SLURM_CLUSTER_DIR (the folder; default a new mktemp -d), GPUS (stand-in GPUs per
# node, default 2), CPUS (CPUs per node, default 4; more than the machine has is allowed).
# Needs root and the packages slurmctld slurmd slurm-client munge. start adds `127.0.0.1 cnNN` lines to
# /etc/hosts (a task's master address is its first node's name); stop removes exactly those lines.
set -Eeuo pipefail

HOSTS=${SLURM_CLUSTER_HOSTS_FILE:-/etc/hosts}

die() {
    echo "$0: $*" >&2
    exit 2
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# the hosts file without this cluster's lines, written in place (it may be a bind mount that cannot be renamed)
hosts_without() {
    local tag=$1 kept
    kept=$(grep -v -F -- "$tag" "$HOSTS" || true)
    printf '%s\n' "$kept" > "$HOSTS"
}

stop_pid() {  # stop_pid NAME PIDFILE: SIGTERM, up to 10 s, then SIGKILL
    local name=$1 file=$2 pid i
    [ -s "$file" ] || return 0
    pid=$(cat "$file")
    kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for i in $(seq 100); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    echo "$0: $name (pid $pid) still running after SIGTERM: SIGKILL" >&2
    kill -KILL "$pid" 2>/dev/null || true
}

wait_for() {  # wait_for WHAT SECONDS COMMAND...: poll COMMAND every 0.1 s
    local what=$1 limit=$2 i
    shift 2
    for i in $(seq $((limit * 10))); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    return 1
}

nodes_idle() {
    local n
    n=$(sinfo -h -p cpu -t idle,mix -o '%D' 2>/dev/null | awk '{s += $1} END {print s + 0}')
    [ "$n" -ge "$NODES" ]
}

start() {
    NODES=${1:-2}
    [[ "$NODES" =~ ^[1-9][0-9]?$ ]] || die "start: N must be a number of nodes from 1 to 99, got '$NODES'"
    [ "$(id -u)" = 0 ] || die "start: needs root (slurmd runs the tasks as any user; mknod)"
    local bin
    for bin in munged slurmctld slurmd srun scontrol sinfo; do
        command -v "$bin" >/dev/null 2>&1 || PATH=$PATH:/usr/sbin command -v "$bin" >/dev/null 2>&1 ||
            die "start: $bin not found: apt-get install -y --no-install-recommends slurmctld slurmd slurm-client munge"
    done
    export PATH=$PATH:/usr/sbin
    local gpus=${GPUS:-2} cpus=${CPUS:-4} dir host ctld_port i name tag last
    dir=${SLURM_CLUSTER_DIR:-$(mktemp -d /tmp/kradar-slurm.XXXXXX)}
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    chmod 755 "$dir"
    : > "$dir/.slurm_cluster"    # stop removes only a folder with this mark
    host=$(hostname -s)
    tag="# kradar slurm_cluster $dir"
    last=$(printf 'cn%02d' "$NODES")

    # from here on a failure stops what was started
    trap 'echo "$0: start failed; stopping what was started" >&2; stop "$dir"' ERR
    # munge: its own key, socket and pid file, run as the munge user (munged wants the key's folder private,
    # the socket's folder open to all for execute, writable by its owner only)
    mkdir -p "$dir/munge" "$dir/munge-key"
    dd if=/dev/urandom of="$dir/munge-key/munge.key" bs=128 count=1 status=none
    chown -R munge:munge "$dir/munge" "$dir/munge-key"
    chmod 711 "$dir/munge"
    chmod 700 "$dir/munge-key"
    chmod 400 "$dir/munge-key/munge.key"
    runuser -u munge -- munged --key-file="$dir/munge-key/munge.key" --socket="$dir/munge/munge.socket" \
        --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/seed"
    cp "$dir/munge/munged.pid" "$dir/munged.pid"

    # stand-in GPUs: character devices (a count-only gres is dropped, a plain file refused)
    mkdir -p "$dir/dev"
    for i in $(seq 0 $((gpus - 1))); do
        mknod "$dir/dev/gpu$i" c 1 3
    done
    ctld_port=$(free_port)
    {
        echo "ClusterName=kradar"
        echo "SlurmctldHost=$host(127.0.0.1)"
        echo "SlurmctldPort=$ctld_port"
        echo "AuthType=auth/munge"
        echo "AuthInfo=socket=$dir/munge/munge.socket"
        echo "CredType=cred/munge"
        echo "SlurmUser=root"
        echo "SlurmdUser=root"
        echo "StateSaveLocation=$dir/ctld"
        echo "SlurmdSpoolDir=$dir/%n"
        echo "SlurmctldPidFile=$dir/slurmctld.pid"
        echo "SlurmdPidFile=$dir/slurmd.%n.pid"
        echo "SlurmctldLogFile=$dir/slurmctld.log"
        echo "SlurmdLogFile=$dir/slurmd.%n.log"
        echo "ProctrackType=proctrack/linuxproc"
        echo "TaskPlugin=task/none"
        echo "SelectType=select/cons_tres"
        echo "SelectTypeParameters=CR_Core"
        echo "SlurmdParameters=config_overrides"
        echo "GresTypes=gpu"
        echo "ReturnToService=2"
        echo "KillWait=5"
        echo "MpiDefault=none"
        echo "JobCompType=jobcomp/none"
        echo "AccountingStorageType=accounting_storage/none"
        echo "JobAcctGatherType=jobacct_gather/none"
        for i in $(seq 1 "$NODES"); do
            name=$(printf 'cn%02d' "$i")
            echo "NodeName=$name NodeHostname=$host NodeAddr=127.0.0.1 Port=$(free_port) CPUs=$cpus Gres=gpu:$gpus State=UNKNOWN"
        done
        echo "PartitionName=cpu Nodes=cn[01-${last#cn}] Default=YES MaxTime=INFINITE State=UP"
    } > "$dir/slurm.conf"
    {
        echo "AutoDetect=off"
        echo "Name=gpu File=$dir/dev/gpu[0-$((gpus - 1))]"
    } > "$dir/gres.conf"
    mkdir -p "$dir/ctld"
    export SLURM_CONF=$dir/slurm.conf

    # the first node's name is every task's master address
    hosts_without "$tag"
    for i in $(seq 1 "$NODES"); do
        printf '127.0.0.1 cn%02d %s\n' "$i" "$tag" >> "$HOSTS"
    done

    slurmctld -f "$SLURM_CONF" -i
    for i in $(seq 1 "$NODES"); do
        name=$(printf 'cn%02d' "$i")
        mkdir -p "$dir/$name"
        slurmd -f "$SLURM_CONF" -N "$name"
    done
    if ! wait_for "nodes" 60 nodes_idle; then
        echo "$0: the nodes did not come up within 60 s:" >&2
        sinfo -N >&2 || true
        tail -n 5 "$dir"/*.log >&2 || true
        trap - ERR
        stop "$dir"
        exit 1
    fi
    trap - ERR
    echo "export SLURM_CONF=$SLURM_CONF"
}

stop() {
    local dir=${1:-}
    if [ -z "$dir" ]; then
        [ -n "${SLURM_CONF:-}" ] || die "stop: give the cluster's folder, or set SLURM_CONF"
        dir=$(dirname "$SLURM_CONF")
    fi
    [ -f "$dir/.slurm_cluster" ] || die "stop: $dir is not a folder of tools/slurm_cluster.sh start"
    dir=$(cd "$dir" && pwd)
    export PATH=$PATH:/usr/sbin SLURM_CONF=$dir/slurm.conf
    local f jobs i
    # running jobs first: their slurmstepd outlive slurmd
    if [ -f "$SLURM_CONF" ] && [ -s "$dir/slurmctld.pid" ] && kill -0 "$(cat "$dir/slurmctld.pid")" 2>/dev/null; then
        jobs=$(squeue -h -o %i 2>/dev/null || true)
        if [ -n "$jobs" ]; then
            # shellcheck disable=SC2086
            scancel $jobs 2>/dev/null || true
            for i in $(seq 200); do
                [ -z "$(squeue -h -o %i 2>/dev/null || true)" ] && break
                sleep 0.1
            done
        fi
    fi
    for f in "$dir"/slurmd.*.pid; do
        [ -e "$f" ] && stop_pid "slurmd" "$f"
    done
    stop_pid slurmctld "$dir/slurmctld.pid"
    stop_pid munged "$dir/munged.pid"
    hosts_without "# kradar slurm_cluster $dir"
    rm -rf "$dir"
}

case "${1:-}" in
    start) shift; start "$@" ;;
    stop) shift; stop "$@" ;;
    *) echo "usage: $0 start [N] | stop [DIR]" >&2; exit 2 ;;
esac
