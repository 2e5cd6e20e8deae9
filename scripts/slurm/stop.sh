#!/usr/bin/env bash
# scripts/slurm/stop.sh — stops the Slurm that scripts/slurm/start.sh started.
#
# Usage: scripts/slurm/stop.sh [--hosts] [--clean]
#
#   (no option)  stops slurmd and slurmctld (by their pid files in
#                $RIG_SLURM_DIR, default /tmp/progrun-slurm), and munged when
#                start.sh started it; the configuration, logs and state stay.
#                The cluster on the simulated hosts (start.sh --hosts K, in
#                $RIG_SLURM_HOSTS_DIR, default /tmp/progrun-slurm-hosts) as
#                well: each node's slurmd, then what its Slurm started and
#                left there (step daemons, tasks: the processes that share
#                that slurmd's mount namespace), then slurmctld; the hosts
#                are taken down (scripts/hosts.sh down) when start.sh made
#                them
#   --hosts      the cluster on the simulated hosts alone (the single-node
#                one keeps running)
#   --clean      also removes $RIG_SLURM_DIR and $RIG_SLURM_HOSTS_DIR (with
#                --hosts, the latter alone)
#   -h, --help   this text
#
# Safe to run when nothing runs. Only processes named in those pid files are
# signalled: SIGTERM, then SIGKILL after 10 s.
set -euo pipefail

clean=0
only_hosts=0
for arg in "$@"; do
  case "$arg" in
    --clean) clean=1 ;;
    --hosts) only_hosts=1 ;;
    -h | --help)
      awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"
      exit 0
      ;;
    *)
      echo "stop.sh: unknown option $arg (try --help)" >&2
      exit 2
      ;;
  esac
done

dir="${RIG_SLURM_DIR:-/tmp/progrun-slurm}"

# Stops the process whose id is in pid file $1 when it is named $2.
stop_pid() {
  local pidfile="$1" name="$2" pid i
  [[ -r "$pidfile" ]] || return 0
  pid="$(cat "$pidfile" 2>/dev/null || true)"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 0
  [[ "$(cat "/proc/$pid/comm" 2>/dev/null)" == "$name" ]] || return 0
  echo "stopping $name ($pid)"
  kill "$pid" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do
    [[ -d "/proc/$pid" ]] || return 0
    sleep 0.1
  done
  echo "$name ($pid) still runs after 10 s: SIGKILL"
  kill -KILL "$pid" 2>/dev/null || true
}

if ((only_hosts == 0)); then
  stop_pid "$dir/slurmd.pid" slurmd
  stop_pid "$dir/slurmctld.pid" slurmctld
fi

# The cluster on the simulated hosts: a slurmd a node, each in a mount
# namespace of its own that every process it starts shares.
hdir="${RIG_SLURM_HOSTS_DIR:-/tmp/progrun-slurm-hosts}"
shopt -s nullglob
for pidfile in "$hdir"/run/slurmd-*.pid; do
  pid="$(cat "$pidfile" 2>/dev/null || true)"
  [[ "$pid" =~ ^[0-9]+$ && "$(cat "/proc/$pid/comm" 2>/dev/null)" == slurmd ]] || continue
  mnt="$(readlink "/proc/$pid/ns/mnt" 2>/dev/null || true)"
  stop_pid "$pidfile" slurmd
  [[ -n "$mnt" && "$mnt" != "$(readlink /proc/1/ns/mnt)" ]] || continue
  left=()
  for p in /proc/[0-9]*; do
    [[ "$(readlink "$p/ns/mnt" 2>/dev/null)" == "$mnt" ]] && left+=("${p#/proc/}")
  done
  if ((${#left[@]})); then
    echo "ending what Slurm left on $(basename "$pidfile" .pid | sed 's/^slurmd-//'): ${left[*]}"
    kill -KILL "${left[@]}" 2>/dev/null || true
  fi
done
shopt -u nullglob
stop_pid "$hdir/slurmctld.pid" slurmctld
if [[ -e "$hdir/hosts.made" ]]; then
  "$(dirname "${BASH_SOURCE[0]}")/../hosts.sh" down && rm -f "$hdir/hosts.made"
fi
# munged only when start.sh started it (its pid recorded in munged.pid in
# either folder, and still the one in munged's own pid file).
dirs=("$dir" "$hdir")
((only_hosts == 0)) || dirs=("$hdir")
for d in "${dirs[@]}"; do
  # (not while the single-node Slurm, left running by --hosts, needs it)
  if ((only_hosts)) && [[ "$(cat "/proc/$(cat "$dir/slurmctld.pid" 2>/dev/null)/comm" 2>/dev/null)" == slurmctld ]]; then
    continue
  fi
  if [[ -r "$d/munged.pid" ]] && cmp -s "$d/munged.pid" /run/munge/munged.pid; then
    stop_pid "$d/munged.pid" munged
  fi
  rm -f "$d/munged.pid"
done

if ((clean)); then
  for d in "${dirs[@]}"; do
    case "$d" in
      /tmp/?* | /var/tmp/?* | /var/?*) rm -rf -- "$d" ;;
      *) echo "stop.sh: not removing $d (not under /tmp or /var)" >&2 ;;
    esac
  done
fi
