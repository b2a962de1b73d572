#!/usr/bin/env bash
# A one-node SLURM cluster on this machine, for the tests of `polybias sweep --cluster`.
#
#   tests/cluster/slurm_cluster.sh run CMD [ARG...]   stand it up, run CMD, tear it down
#   tests/cluster/slurm_cluster.sh start DIR           stand it up with its files in DIR
#   tests/cluster/slurm_cluster.sh stop DIR            stop the daemons started in DIR
#
# Needs Debian's (or Ubuntu's) `slurm-wlm` and `munge` packages and root (slurmd starts
# the jobs as the user who submits them). Everything lives in a scratch folder:
# slurm.conf, a fresh munge key, state, spool, logs and pid files; the daemons listen on
# free ports of 127.0.0.1 only. munged, slurmctld and slurmd are stopped by the process
# ids they wrote, never by name. Slurm 22.05 as packaged: proctrack/linuxproc, no
# cgroups, no accounting database, no generic resources (GPUs).
#
# `run` exports SLURM_CONF (the clients sbatch, squeue, scancel read it) and
# POLYBIAS_SLURM_CLUSTER=DIR (tests/cluster runs only when it is set), and ends with
# CMD's exit status.
set -euo pipefail

die() { echo "slurm_cluster.sh: $*" >&2; exit 2; }

need() {
  local missing=()
  for tool in munged slurmctld slurmd sbatch squeue scancel sinfo; do
    command -v "$tool" >/dev/null || missing+=("$tool")
  done
  [ ${#missing[@]} -eq 0 ] || die "missing ${missing[*]}: apt-get install -y slurm-wlm munge"
  [ "$(id -u)" -eq 0 ] || die "must run as root (slurmd starts jobs as the submitting user)"
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start() {
  local dir=$1 node cpus mem ctld_port slurmd_port
  need
  mkdir -p "$dir"/{state,spool,log,run}
  dir=$(cd "$dir" && pwd)
  node=$(hostname -s)
  # at least 2 CPUs, so that two one-CPU worker jobs run side by side on a one-core
  # machine too (slurmd takes the configured count: SlurmdParameters=config_overrides);
  # --all: nproc alone honours OMP_NUM_THREADS
  cpus=$(nproc --all)
  [ "$cpus" -ge 2 ] || cpus=2
  mem=$(awk '/MemTotal/ {print int($2 / 1024 / 2)}' /proc/meminfo)  # MiB: half of this machine
  ctld_port=$(free_port)
  slurmd_port=$(free_port)
  [ "$ctld_port" != "$slurmd_port" ] || slurmd_port=$(free_port)

  # munge: a fresh key, its own socket, pid and seed files
  dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 status=none
  chmod 0400 "$dir/munge.key"
  chmod 0700 "$dir/run"
  munged --force --key-file="$dir/munge.key" --socket="$dir/run/munge.socket" \
    --pid-file="$dir/run/munged.pid" --seed-file="$dir/run/munged.seed" \
    --log-file="$dir/log/munged.log"

  cat >"$dir/slurm.conf" <<CONF
ClusterName=polybias-test
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/run/munge.socket
CryptoType=crypto/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
KillWait=5
OverTimeLimit=0
MinJobAge=600
InactiveLimit=0
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=$node NodeAddr=127.0.0.1 NodeHostname=$node CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=polybias Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
  export SLURM_CONF=$dir/slurm.conf
  slurmctld -f "$SLURM_CONF" -i   # -i: ignore state from an earlier start
  slurmd -f "$SLURM_CONF" -N "$node"
  # wait until the node takes jobs
  for _ in $(seq 60); do
    if sinfo -h -o '%t' 2>/dev/null | grep -qE '^(idle|mix|alloc)'; then
      echo "slurm_cluster.sh: one-node SLURM cluster up in $dir (node $node, $cpus CPUs, partition polybias)"
      return 0
    fi
    sleep 1
  done
  echo "slurm_cluster.sh: the node did not come up; logs:" >&2
  tail -n 20 "$dir"/log/*.log >&2 || true
  stop "$dir"
  return 1
}

stop_pid() {  # stop_pid NAME PIDFILE: TERM, then KILL after 10 s, by the pid the daemon wrote
  local name=$1 pidfile=$2 pid
  [ -s "$pidfile" ] || return 0
  pid=$(cat "$pidfile")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 100); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      echo "slurm_cluster.sh: $name (pid $pid) ignored SIGTERM; killing it" >&2
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  rm -f "$pidfile"
}

stop() {
  local dir=$1
  [ -d "$dir/run" ] || die "$dir holds no cluster started by this script"
  if [ -f "$dir/slurm.conf" ] && [ -s "$dir/run/slurmctld.pid" ]; then  # end the jobs first
    SLURM_CONF=$dir/slurm.conf scancel --user="$(id -un)" 2>/dev/null || true
  fi
  stop_pid slurmd "$dir/run/slurmd.pid"
  stop_pid slurmctld "$dir/run/slurmctld.pid"
  stop_pid munged "$dir/run/munged.pid"
}

case "${1:-}" in
  start) [ $# -eq 2 ] || die "usage: $0 start DIR"; start "$2" ;;
  stop) [ $# -eq 2 ] || die "usage: $0 stop DIR"; stop "$2" ;;
  run)
    shift
    [ $# -ge 1 ] || die "usage: $0 run CMD [ARG...]"
    need
    scratch=$(mktemp -d "${TMPDIR:-/tmp}/polybias-slurm.XXXXXX")
    trap 'stop "$scratch"; rm -rf "$scratch"' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    start "$scratch"
    export SLURM_CONF=$scratch/slurm.conf POLYBIAS_SLURM_CLUSTER=$scratch
    status=0
    "$@" || status=$?
    exit $status
    ;;
  *) die "usage: $0 run CMD [ARG...] | start DIR | stop DIR" ;;
esac
