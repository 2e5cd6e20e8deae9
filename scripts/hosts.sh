#!/usr/bin/env bash
# scripts/hosts.sh — a cluster on one machine: simulated hosts for trying
# and testing multi-host MPI jobs (docs/jobs.md, "Several hosts on one
# machine").
#
# Usage: scripts/hosts.sh COMMAND
#
#   up [N]               make hosts node1..nodeN (default 4; those up are
#                        kept): each a network namespace linked to a bridge,
#                        address 10.77.0.(129+K)
#   mpirun [--hosts K] [--plain] ARGS...
#                        mpirun over node1..nodeK (default: every host up),
#                        one rank a host in turn, TCP over the hosts' links
#                        only (the loopback-only settings of scripts/env.sh
#                        are dropped); --plain: Open MPI's own placement
#                        and binding instead (by slot, 64 a host; to cores),
#                        which ARGS choose, as on a cluster
#   mpich [--hosts K] [--plain] ARGS...
#                        the same with MPICH's mpiexec (hydra), for a build
#                        of the mpich preset; --plain: ARGS name the hosts
#   cut HOST             take HOST (nodeK or K) off the network: a partition
#   heal HOST            put it back
#   status               the hosts, their links and processes
#   check                two hosts: separate names, boot ids, /dev/shm; MPI
#                        between them, and UCX by TCP only
#   down                 end what runs on the hosts and remove them all
#   ssh HOST COMMAND...  what mpirun and mpiexec run instead of ssh
#   -h, --help           this text
#
# A process on nodeK has the host name nodeK, its own /dev/shm, IPC
# namespace and boot id (UCX's system id), so neither Open MPI nor UCX
# finds shared memory between hosts: they talk TCP over the links, as on an
# Ethernet cluster. The file system and the cores are this machine's.
# Needs root; where hosts cannot be made (not root, no `ip netns` or
# unshare, no namespaces allowed) up, mpirun and check say why and exit 77.
# Traffic stays in 10.77.0.128/25; only progrun-* interfaces and namespaces
# are made or removed.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/lib/hosts.sh
source "$here/lib/hosts.sh"

usage() {
  awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"
}

# check: two hosts whose ranks see different host names, boot ids and
# /dev/shm, an MPI program that crosses them, and UCX between them by TCP
# alone.
check() {
  rig_hosts_up 2 || return
  local dir rc=0
  dir="$(mktemp -d "${TMPDIR:-/tmp}/progrun-hosts-check.XXXXXX")"
  check_in "$dir" || rc=$?
  rm -rf "$dir"
  ((rc == 0)) && echo "hosts check: ok"
  return "$rc"
}

# The checks, their files in the folder $1.
check_in() {
  local dir="$1" rc=0
  # Each rank leaves a file in its /dev/shm, then lists what is there.
  # shellcheck disable=SC2016 # expanded by each rank's sh
  "$here/hosts.sh" mpirun --hosts 2 -n 2 sh -c 'r=$OMPI_COMM_WORLD_RANK
    touch /dev/shm/progrun-check-$r
    echo "$r $(hostname) $(cat /proc/sys/kernel/random/boot_id) $(ls /dev/shm | tr "\n" " ")"' \
    >"$dir/seen" || {
    echo "hosts check: mpirun over 2 hosts failed" >&2
    return 1
  }
  sort "$dir/seen"
  python3 - "$dir/seen" <<'PY' || rc=1
import sys
rows = {}
for line in open(sys.argv[1]):
    r, host, boot, *shm = line.split()
    rows[int(r)] = (host, boot, set(shm))
bad = []
if sorted(rows) != [0, 1]:
    bad.append(f"ranks {sorted(rows)}, not 0 and 1")
else:
    (h0, b0, s0), (h1, b1, s1) = rows[0], rows[1]
    if (h0, h1) != ("node1", "node2"):
        bad.append(f"host names {h0} and {h1}, not node1 and node2")
    if b0 == b1:
        bad.append("one boot id for both hosts")
    if "progrun-check-1" in s0 or "progrun-check-0" in s1:
        bad.append("one /dev/shm for both hosts")
for b in bad:
    print(f"hosts check: {b}", file=sys.stderr)
sys.exit(1 if bad else 0)
PY
  cat >"$dir/ping.c" <<'C'
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>
/* 64-byte ping-pong between ranks 0 and 1, and the host each is on. */
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int r;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  char host[64] = {0}, other[64] = {0}, b[64] = {0};
  gethostname(host, sizeof host - 1);
  MPI_Sendrecv(host, 64, MPI_CHAR, 1 - r, 0, other, 64, MPI_CHAR, 1 - r, 0, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  double t0 = MPI_Wtime();
  for (int i = 0; i < 1000; i++) {
    if (r == 0) {
      MPI_Send(b, 64, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
      MPI_Recv(b, 64, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(b, 64, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(b, 64, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
    }
  }
  if (r == 0)
    printf("MPI from %s to %s and back, 64 B: %.1f us\n", host, other,
           (MPI_Wtime() - t0) / 1000 * 1e6);
  MPI_Finalize();
  return 0;
}
C
  if mpicc -O2 "$dir/ping.c" -o "$dir/ping" && "$here/hosts.sh" mpirun --hosts 2 -n 2 "$dir/ping"; then
    :
  else
    echo "hosts check: MPI between node1 and node2 failed" >&2
    rc=1
  fi
  ucx_between "$dir" || rc=1
  return "$rc"
}

# UCX from node1 to node2 (ucx_perftest; skipped where ucx-utils is not
# installed): with shared memory and cross-memory attach only, unreachable;
# with TCP on the hosts' links (not loopback, whatever the caller's
# UCX_NET_DEVICES), a put latency. $1: a folder for the output.
ucx_between() {
  local tls out server rc=0 i
  if ! command -v ucx_perftest >/dev/null; then
    echo "hosts check: no ucx_perftest (ucx-utils): UCX between hosts not checked"
    return 0
  fi
  for tls in posix,sysv,cma,self tcp,self; do
    out="$1/ucx-$tls"
    UCX_TLS="$tls" UCX_NET_DEVICES="$RIG_HOSTS_LINK" timeout 60 "$here/hosts.sh" ssh node2 \
      ucx_perftest -p 13337 >"$out.server" 2>&1 &
    server=$!
    for ((i = 0; i < 100; i++)); do # listening within 10 s
      ip netns exec "$(rig_hosts_ns 2)" ss -Hltn 'sport = :13337' | grep -q . && break
      sleep 0.1
    done
    UCX_TLS="$tls" UCX_NET_DEVICES="$RIG_HOSTS_LINK" timeout 60 "$here/hosts.sh" ssh node1 \
      ucx_perftest "$(rig_hosts_addr 2)" -p 13337 -t ucp_put_lat -n 1000 >"$out" 2>&1 || true
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
    if [[ "$tls" == tcp,self ]]; then
      if grep -q '^Final:' "$out"; then
        echo "UCX from node1 to node2 over $tls: $(awk '/^Final:/ {print $3}' "$out") us a put"
      else
        echo "hosts check: UCX over TCP from node1 to node2 failed:" >&2
        tail -n 3 "$out" >&2
        rc=1
      fi
    elif grep -q 'Destination is unreachable' "$out"; then
      echo "UCX from node1 to node2 over $tls: unreachable, as between hosts"
    else
      echo "hosts check: UCX reached node2 from node1 over $tls (shared memory between hosts):" >&2
      tail -n 3 "$out" >&2
      rc=1
    fi
  done
  return "$rc"
}

cmd="${1:-}"
(($# > 0)) && shift
case "$cmd" in
  up) rig_hosts_up "$@" ;;
  down) rig_hosts_down ;;
  mpirun) rig_hosts_mpirun "$@" ;;
  mpich) rig_hosts_mpiexec_mpich "$@" ;;
  ssh) rig_hosts_ssh "$@" ;;
  cut) rig_hosts_link down "${1:?cut HOST}" ;;
  heal) rig_hosts_link up "${1:?heal HOST}" ;;
  status) rig_hosts_status ;;
  check) check ;;
  -h | --help)
    usage
    exit 0
    ;;
  *)
    usage >&2
    exit 2
    ;;
esac
