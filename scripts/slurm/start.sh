#!/usr/bin/env bash
# scripts/slurm/start.sh — a single-node Slurm on this machine, or a cluster on
# the simulated hosts (--hosts K), for tests.
#
# Usage: scripts/slurm/start.sh [--hosts K]
#
# Installs what is missing (RIG_SLURM_PACKAGES in scripts/lib/packages.sh),
# makes a munge key when there is none, starts munged, writes slurm.conf into
# $RIG_SLURM_DIR (default /tmp/progrun-slurm; never into the source tree) and
# starts slurmctld and slurmd as root on it: one node named after this host
# (address 127.0.0.1) in partition `debug`, MpiDefault=pmix, KillOnBadExit=1
# (a task exiting non-zero ends its step at once). Waits until
# `sinfo` shows the node idle (at most $RIG_SLURM_WAIT seconds, default 60),
# then writes $RIG_SLURM_DIR/env.sh (export SLURM_CONF=...) and prints its
# path. Source it before sinfo, srun, sbatch:
#
#   source "$(scripts/slurm/start.sh | tail -n 1)"
#   srun --mpi=pmix -n 3 ./a.out
#
# Safe to run again: running daemons on an unchanged slurm.conf are kept;
# they are restarted when the configuration changed. The node has
# CPUs=$RIG_SLURM_CPUS (default: nproc, at least 8, so `srun -n 3` runs on a
# 2-core machine); a step with more tasks than that waits for resources
# forever unless started with `srun --overcommit`. scripts/slurm/stop.sh
# stops the daemons.
# Needs root. Slurm traffic stays on 127.0.0.1 (ports 6817, 6818).
#
# --hosts K: a cluster of K nodes on the simulated hosts instead
# (scripts/hosts.sh; docs/jobs.md, "Slurm across hosts"), beside the
# single-node one: hosts node1..nodeK are made when missing, slurmctld runs
# here on the hosts' bridge (10.77.0.129, port 6827) and one slurmd on each
# host, inside it (its network, host name, /dev/shm and boot id; port 6828
# on its own address), as node nodeK with its own spool, pid file and log
# ($RIG_SLURM_HOSTS_DIR, default /tmp/progrun-slurm-hosts, holds them all,
# its env.sh last printed). Each node claims $RIG_SLURM_CPUS CPUs (default
# 8) and 1 GiB; SlurmdTimeout=20 (a node whose slurmd is gone is DOWN
# within about half a minute), JobRequeue=0 (a batch job whose node failed
# ends, NODE_FAIL, not requeued), KillWait=5, completed jobs recorded by
# jobcomp/filetxt in $RIG_SLURM_HOSTS_DIR/log/jobcomp.txt (no slurmdbd, so
# no sacct). Munge is the machine's, shared by every host (its socket is a
# path). Where hosts cannot be made it says why and exits 77. A different
# K replaces the nodes (the daemons restart). scripts/slurm/stop.sh stops
# it too, and takes the hosts down when this script made them.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=scripts/lib/packages.sh
source "$root/scripts/lib/packages.sh"
# shellcheck source=scripts/lib/env.sh
source "$root/scripts/lib/env.sh"

nhosts=0
case "${1:-}" in
  "") ;;
  --hosts)
    nhosts="${2:-}"
    if [[ ! "$nhosts" =~ ^[1-9][0-9]*$ ]] || ((nhosts > 32)); then
      echo "start.sh: --hosts takes a number of hosts, 1 to 32" >&2
      exit 2
    fi
    ;;
  -h | --help)
    awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"
    exit 0
    ;;
  *)
    echo "start.sh: unknown option $1 (try --help)" >&2
    exit 2
    ;;
esac

die() {
  echo "slurm/start.sh: $*" >&2
  exit 1
}

[[ "$(id -u)" == 0 ]] || die "must run as root (it starts munged, slurmctld and slurmd)"

dir="${RIG_SLURM_DIR:-/tmp/progrun-slurm}"
if ((nhosts)); then
  # shellcheck source=scripts/lib/hosts.sh
  source "$root/scripts/lib/hosts.sh"
  rig_hosts_require # exits 77, saying why, where hosts cannot be made
  dir="${RIG_SLURM_HOSTS_DIR:-/tmp/progrun-slurm-hosts}"
fi
wait_s="${RIG_SLURM_WAIT:-60}"
conf="$dir/slurm.conf"
node="$(hostname -s)"
# The node claims at least 8 CPUs so that a test can run `srun -n 3` (or up
# to -n 8) on a 2-core machine without --overcommit (else the step waits for
# resources forever); SlurmdParameters=config_overrides makes slurmd report
# the configured count instead of draining the node for having fewer.
nproc="$(nproc)"
cpus="${RIG_SLURM_CPUS:-$((nproc > 8 ? nproc : 8))}"
((nhosts == 0)) || cpus="${RIG_SLURM_CPUS:-8}"
overrides=
if ((cpus > nproc)); then
  overrides="SlurmdParameters=config_overrides"
fi
# A bit under the machine's memory (95 %, in MiB), so slurmd's own count
# (`slurmd -C`) is never below it and the node never drains for it.
mem_mb="$(awk '/^MemTotal:/ { printf "%d", $2 / 1024 * 0.95 }' /proc/meminfo)"

rig_install_slurm_packages || die "could not install the Slurm packages"

mkdir -p "$dir"/{log,state,spool/slurmd,run}
chmod 755 "$dir"

# True when the process whose id is in pid file $1 runs and is named $2.
pid_alive() {
  local pid
  [[ -r "$1" ]] || return 1
  pid="$(cat "$1" 2>/dev/null)" || return 1
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  [[ "$(cat "/proc/$pid/comm" 2>/dev/null)" == "$2" ]]
}

# Polls command "$@" once a second until it succeeds, for at most $wait_s s.
wait_for() {
  local i
  for ((i = 0; i < wait_s; i++)); do
    if "$@"; then return 0; fi
    sleep 1
  done
  "$@"
}

# ---- munge ---------------------------------------------------------------

munge_works() { munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; }

key=/etc/munge/munge.key
if [[ ! -s "$key" ]]; then
  echo "writing a munge key: $key"
  install -d -o munge -g munge -m 700 /etc/munge
  dd if=/dev/urandom of="$key" bs=1024 count=1 status=none
  chown munge:munge "$key"
  chmod 400 "$key"
fi

if ! munge_works; then
  install -d -o munge -g munge -m 755 /run/munge
  install -d -o munge -g munge -m 700 /var/lib/munge /var/log/munge
  echo "starting munged"
  runuser -u munge -- /usr/sbin/munged
  # stop.sh stops munged only when this script started it.
  cp /run/munge/munged.pid "$dir/munged.pid" 2>/dev/null || true
  wait_for munge_works || die "munged does not answer (see /var/log/munge/munged.log)"
fi

# ---- slurm.conf ------------------------------------------------------------

if ((nhosts)); then
  # stop.sh takes the hosts down only when this script made them.
  [[ -n "$(rig_hosts_list)" ]] || touch "$dir/hosts.made"
  "$root/scripts/hosts.sh" up "$nhosts" || die "could not make the simulated hosts"
  cat >"$conf.new" <<EOF
# Written by scripts/slurm/start.sh --hosts $nhosts: a Slurm cluster on the
# simulated hosts (scripts/hosts.sh) for progrun's tests.
ClusterName=progrun-hosts
SlurmctldHost=$node($RIG_HOSTS_BRIDGE_ADDR)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
SlurmctldPort=6827
SlurmdPort=6828
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%h
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd-%h.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%h.log
# PMIx's folders for the tasks (spmix_appdir_*), named after the step
# alone, go under TmpFS: one a node, since /tmp is every host's.
TmpFS=$dir/tmp/%n
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
MpiDefault=pmix
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/log/jobcomp.txt
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
ReturnToService=2
KillOnBadExit=1
SlurmdTimeout=20
# A batch job whose node failed ends (NODE_FAIL) rather than waiting,
# requeued, for the node to come back.
JobRequeue=0
InactiveLimit=0
KillWait=5
MinJobAge=300
SlurmdParameters=config_overrides
EOF
  for ((k = 1; k <= nhosts; k++)); do
    echo "NodeName=node$k NodeAddr=$(rig_hosts_addr "$k") NodeHostname=node$k" \
      "CPUs=$cpus RealMemory=1024 State=UNKNOWN"
  done >>"$conf.new"
  echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP" >>"$conf.new"
  # `ip netns exec` gives each slurmd a sysfs of its host's network, with
  # nothing on /sys/fs/cgroup, where Slurm 22.05's slurmd refuses to start
  # ("No filesystem mounted on /sys/fs/cgroup") even with proctrack/linuxproc
  # and task/none: the v1 plugin, told to, mounts what it needs itself.
  printf '%s\n' "# Written by scripts/slurm/start.sh --hosts (see slurm.conf)." \
    CgroupPlugin=cgroup/v1 CgroupAutomount=yes >"$dir/cgroup.conf"
else
  cat >"$conf.new" <<EOF
# Written by scripts/slurm/start.sh: a single-node Slurm for progrun's tests.
ClusterName=progrun
SlurmctldHost=$node(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
SlurmctldPort=6817
SlurmdPort=6818
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/slurmd
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
MpiDefault=pmix
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
ReturnToService=2
# A task that exits non-zero (even before MPI_Init, where PMIx would not
# notice) ends its whole step at once instead of leaving the others hanging.
KillOnBadExit=1
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
MinJobAge=60
$overrides
NodeName=$node NodeAddr=127.0.0.1 NodeHostname=$node CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
fi

changed=0
if [[ -f "$conf" ]] && cmp -s "$conf" "$conf.new"; then
  rm -f "$conf.new"
else
  mv "$conf.new" "$conf"
  changed=1
fi
export SLURM_CONF="$conf"

# ---- slurmctld, slurmd -------------------------------------------------------

# The nodes: this host's, or node1..nodeK. Their slurmd pid files.
if ((nhosts)); then
  nodes=()
  for ((k = 1; k <= nhosts; k++)); do nodes+=("node$k"); done
else
  nodes=("$node")
fi
slurmd_pidfile() {
  if ((nhosts)); then echo "$dir/run/slurmd-$1.pid"; else echo "$dir/slurmd.pid"; fi
}

# Stops the daemon named $2 whose pid is in file $1, waiting up to 10 s.
stop_daemon() {
  local pidfile="$1" pid i
  pid_alive "$pidfile" "$2" || return 0
  pid="$(cat "$pidfile")"
  echo "stopping $2 ($pid): slurm.conf changed"
  kill "$pid" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do
    [[ -d "/proc/$pid" ]] || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
}

if ((changed)); then
  shopt -s nullglob
  for f in "$dir"/slurmd.pid "$dir"/run/slurmd-*.pid; do stop_daemon "$f" slurmd; done
  shopt -u nullglob
  stop_daemon "$dir/slurmctld.pid" slurmctld
fi

if ! pid_alive "$dir/slurmctld.pid" slurmctld; then
  echo "starting slurmctld"
  slurmctld -f "$conf" || die "slurmctld did not start (see $dir/log/slurmctld.log)"
fi
ctld_up() { scontrol ping 2>/dev/null | grep -q 'is UP'; }
wait_for ctld_up || {
  tail -n 20 "$dir/log/slurmctld.log" >&2 || true
  die "slurmctld does not answer after ${wait_s} s (log: $dir/log/slurmctld.log)"
}

for n in "${nodes[@]}"; do
  pid_alive "$(slurmd_pidfile "$n")" slurmd && continue
  if ((nhosts)); then
    echo "starting slurmd on $n"
    mkdir -p "$dir/spool/$n" "$dir/tmp/$n"
    rig_hosts_daemon "$n" slurmd -f "$conf" -N "$n" ||
      die "slurmd did not start on $n (see $dir/log/slurmd-$n.log)"
  else
    echo "starting slurmd"
    slurmd -f "$conf" || die "slurmd did not start (see $dir/log/slurmd.log)"
  fi
done

node_state() { sinfo -h -N -n "$1" -o '%T' 2>/dev/null | head -n 1; }
node_idle() { [[ "$(node_state "$1")" =~ ^(idle|mixed|allocated|completing)$ ]]; }
all_idle() {
  local n
  for n in "${nodes[@]}"; do node_idle "$n" || return 1; done
}

# A node left drained or down by an earlier run (state kept in $dir/state)
# is put back into service once.
if ! wait_for all_idle; then
  for n in "${nodes[@]}"; do
    case "$(node_state "$n")" in
      drain* | down*)
        echo "node $n is $(node_state "$n"): resuming it"
        scontrol update NodeName="$n" State=RESUME || true
        ;;
    esac
  done
  if ! wait_for all_idle; then
    sinfo -N -l >&2 || true
    for n in "${nodes[@]}"; do
      node_idle "$n" && continue
      scontrol show node "$n" 2>/dev/null | grep -i reason >&2 || true
      if ((nhosts)); then log="$dir/log/slurmd-$n.log"; else log="$dir/log/slurmd.log"; fi
      tail -n 20 "$log" >&2 || true
      die "node $n is not idle after ${wait_s} s (state: '$(node_state "$n")'; logs in $dir/log)"
    done
  fi
fi

printf 'export SLURM_CONF=%q\n' "$conf" >"$dir/env.sh"
if ((nhosts)); then
  echo "slurm is up on $nhosts simulated hosts: nodes node1..node$nhosts, $cpus CPUs each"
else
  echo "slurm is up: node $node ($(node_state "$node")), $cpus CPUs, ${mem_mb} MiB"
fi
echo "$dir/env.sh"
