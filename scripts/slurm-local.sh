#!/usr/bin/env bash
# A real single-node SLURM on this machine, for the kit's tests and for trying
# `nox -s matrix -- --slurm` without a cluster.
#
#   scripts/slurm-local.sh up       # install (Debian: slurm-wlm, munge) if needed, start munged, slurmctld, slurmd
#   scripts/slurm-local.sh down     # cancel its jobs, stop the daemons, remove the state folder
#   scripts/slurm-local.sh status   # sinfo and squeue
#   scripts/slurm-local.sh env      # the line to source so sbatch/srun/squeue find this cluster
#
# Everything it writes (slurm.conf, the munge key and socket, spool, logs,
# pid files) lives in one state folder, KIT_SLURM_STATE (default
# /tmp/kit-slurm), so it never touches /etc/slurm or a system munged, and two
# clusters with different state folders (two CI runs on one machine) do not
# meet: each gets free ports (or KIT_SLURM_CTLD_PORT / KIT_SLURM_SLURMD_PORT). The node
# has this machine's CPUs and most of its memory. Daemons run as root: this is
# a test cluster on a machine you own, not a template for a real one.
#
# Clients need SLURM_CONF=$KIT_SLURM_STATE/slurm.conf: `eval "$(scripts/slurm-local.sh env)"`.
set -euo pipefail

STATE="${KIT_SLURM_STATE:-/tmp/kit-slurm}"
NODE="$(hostname -s)"
CONF="$STATE/slurm.conf"

say() { echo "slurm-local: $*" >&2; }
die() { echo "slurm-local: ERROR: $*" >&2; exit 1; }

as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"
    elif command -v sudo >/dev/null; then sudo "$@"
    else die "needs root to install packages and start slurmd (no sudo here)"; fi
}

install_packages() {
    if command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v munged >/dev/null; then
        return
    fi
    command -v apt-get >/dev/null || die "slurmctld/slurmd/munged are missing and this is not a Debian-like system; install SLURM and munge first"
    say "installing slurm-wlm and munge with apt-get (a minute or two)"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("", 0)); print(s.getsockname()[1])'
}

write_config() {
    local ctld_port="${KIT_SLURM_CTLD_PORT:-$(free_port)}" slurmd_port="${KIT_SLURM_SLURMD_PORT:-$(free_port)}"
    mkdir -p "$STATE"/{ctld,spool,log,run,munge}
    chmod 700 "$STATE/munge"
    local cpus mem_mb
    cpus="$(nproc)"
    # Below what slurmd measures, or the node is drained for "low RealMemory".
    mem_mb="$(awk '/MemTotal/ {printf "%d", $2 / 1024 * 0.9}' /proc/meminfo)"
    cat >"$CONF" <<EOF
# Written by scripts/slurm-local.sh; removed by "down".
ClusterName=kitlocal
SlurmctldHost=$NODE
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$STATE/munge/munge.socket
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/spool
SlurmctldPidFile=$STATE/run/slurmctld.pid
SlurmdPidFile=$STATE/run/slurmd.pid
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
SlurmdTimeout=60
InactiveLimit=0
KillWait=5
MinJobAge=300
NodeName=$NODE CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=kit Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
    # An empty cgroup.conf keeps slurmd from looking for the system's.
    echo "# no cgroup settings: proctrack/linuxproc, task/none" >"$STATE/cgroup.conf"
}

start_munge() {
    if [ ! -f "$STATE/munge/munge.key" ]; then
        dd if=/dev/urandom of="$STATE/munge/munge.key" bs=1024 count=1 status=none
        chmod 400 "$STATE/munge/munge.key"
    fi
    as_root munged --force --key-file="$STATE/munge/munge.key" --socket="$STATE/munge/munge.socket" \
        --pid-file="$STATE/run/munged.pid" --log-file="$STATE/log/munged.log" \
        --seed-file="$STATE/munge/munged.seed"
}

wait_for_node() {
    local deadline=$((SECONDS + 60)) state=""
    while [ $SECONDS -lt $deadline ]; do
        state="$(SLURM_CONF="$CONF" sinfo -h -n "$NODE" -o '%t' 2>/dev/null || true)"
        case "$state" in idle*|mix*|alloc*) say "up: node $NODE ($(nproc) CPUs) is $state; $(cmd_env)"; return;; esac
        sleep 1
    done
    say "the node did not come up (state '${state:-none}'); last log lines:"
    tail -n 20 "$STATE/log/slurmctld.log" "$STATE/log/slurmd.log" >&2 || true
    return 1
}

cmd_up() {
    if [ -f "$STATE/run/slurmctld.pid" ] && kill -0 "$(cat "$STATE/run/slurmctld.pid")" 2>/dev/null; then
        say "already up ($STATE)"; return
    fi
    install_packages
    write_config
    start_munge
    as_root slurmctld -f "$CONF"
    as_root slurmd -f "$CONF"
    wait_for_node
}

stop_pid() {  # the daemon named by a pid file this script wrote, TERM then KILL
    local file="$STATE/run/$1.pid" pid
    [ -f "$file" ] || return 0
    pid="$(cat "$file")"
    as_root kill "$pid" 2>/dev/null || return 0
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
    as_root kill -9 "$pid" 2>/dev/null || true
}

cmd_down() {
    if [ -f "$CONF" ]; then
        SLURM_CONF="$CONF" timeout 10 scancel --quiet --user="$(id -un)" 2>/dev/null || true
    fi
    stop_pid slurmd
    stop_pid slurmctld
    stop_pid munged
    rm -rf "$STATE"
    say "down"
}

cmd_env() { echo "export SLURM_CONF=$CONF"; }

cmd_status() {
    SLURM_CONF="$CONF" sinfo
    SLURM_CONF="$CONF" squeue
}

case "${1:-}" in
    up) cmd_up ;;
    down) cmd_down ;;
    env) cmd_env ;;
    status) cmd_status ;;
    *) echo "usage: $0 up|down|status|env" >&2; exit 2 ;;
esac
