#!/usr/bin/env bash
# scripts/slurm/stop.sh — stops the Slurm that scripts/slurm/start.sh started.
#
# Usage: scripts/slurm/stop.sh [--clean]
#
#   (no option)  stops slurmd and slurmctld (by their pid files in
#                $RIG_SLURM_DIR, default /tmp/progrun-slurm), and munged when
#                start.sh started it; the configuration, logs and state stay
#   --clean      also removes $RIG_SLURM_DIR
#   -h, --help   this text
#
# Safe to run when nothing runs. Only processes named in those pid files are
# signalled: SIGTERM, then SIGKILL after 10 s.
set -euo pipefail

clean=0
for arg in "$@"; do
  case "$arg" in
    --clean) clean=1 ;;
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

stop_pid "$dir/slurmd.pid" slurmd
stop_pid "$dir/slurmctld.pid" slurmctld
# munged only when start.sh started it (its pid recorded in $dir/munged.pid
# and still the one in munged's own pid file).
if [[ -r "$dir/munged.pid" ]] && cmp -s "$dir/munged.pid" /run/munge/munged.pid; then
  stop_pid "$dir/munged.pid" munged
fi
rm -f "$dir/munged.pid"

if ((clean)); then
  case "$dir" in
    /tmp/?* | /var/tmp/?* | /var/?*) rm -rf -- "$dir" ;;
    *) echo "stop.sh: not removing $dir (not under /tmp or /var)" >&2 ;;
  esac
fi
