# shellcheck shell=bash
# Simulated hosts on one machine (scripts/hosts.sh is the command; this is
# its library, sourced). Each host nodeK is a network namespace
# progrun-nodeK with one link, rig0 (address 10.77.0.(129+K)), to the bridge
# progrun-br (10.77.0.129) on this side; a process started on it
# (rig_hosts_ssh) gets, besides, the host name nodeK, a /dev/shm, an IPC
# namespace and a boot id of its own (UCX's system id). So Open MPI and UCX
# see separate hosts and reach one another by TCP only.
#
# Everything made is named progrun-* (rig0 lives only inside the
# namespaces) and lies in 10.77.0.128/25, the upper half of 10.77.0.0/24;
# nothing else on the machine is touched. State: /run/progrun-hosts (boot
# ids, host files); changes are serialized by a lock.

RIG_HOSTS_NET=10.77.0.128/25
RIG_HOSTS_BRIDGE=progrun-br
RIG_HOSTS_BRIDGE_ADDR=10.77.0.129
RIG_HOSTS_LINK=rig0 # the host's side of its link, inside its namespace
RIG_HOSTS_STATE=/run/progrun-hosts
RIG_HOSTS_LOCK=/run/progrun-hosts.lock
RIG_HOSTS_MAX=32
RIG_HOSTS_LIB="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# Skips (CTest's SKIP_RETURN_CODE) use this status: hosts cannot be made here.
RIG_HOSTS_CANNOT=77

rig_hosts_ns() { echo "progrun-node$1"; }
rig_hosts_veth() { echo "progrun-v$1"; }
rig_hosts_addr() { echo "10.77.0.$((129 + $1))"; }

# The number K of a host named nodeK or K; fails with a message otherwise.
rig_hosts_index() {
  local k="${1#node}"
  if [[ ! "$k" =~ ^[1-9][0-9]*$ ]] || ((k > RIG_HOSTS_MAX)); then
    echo "hosts: $1 is not a host (node1 to node$RIG_HOSTS_MAX)" >&2
    return 1
  fi
  echo "$k"
}

# Why simulated hosts cannot be made here, on stdout; nothing when they can.
rig_hosts_why_not() {
  if [[ "$(uname -s)" != Linux ]]; then
    echo "simulated hosts need Linux namespaces, and this is $(uname -s)"
  elif [[ "$(id -u)" != 0 ]]; then
    echo "simulated hosts need root (network namespaces, mounts); this is uid $(id -u)"
  elif ! command -v ip >/dev/null || ! ip netns list >/dev/null 2>&1; then
    echo "simulated hosts need iproute2's \`ip netns\` (package iproute2)"
  elif ! command -v unshare >/dev/null || ! command -v flock >/dev/null ||
    ! command -v setpriv >/dev/null || ! command -v setsid >/dev/null ||
    ! command -v pkill >/dev/null; then
    echo "simulated hosts need unshare, flock, setpriv, setsid (util-linux) and pkill (procps)"
  elif ! unshare --net --mount --uts --ipc true 2>/dev/null; then
    echo "this machine refuses new namespaces (unshare --net --mount --uts --ipc:" \
      "a container without CAP_SYS_ADMIN?)"
  fi
}

# Exits RIG_HOSTS_CANNOT, saying why, when hosts cannot be made here.
rig_hosts_require() {
  local why
  why="$(rig_hosts_why_not)"
  if [[ -n "$why" ]]; then
    echo "hosts: $why" >&2
    exit "$RIG_HOSTS_CANNOT"
  fi
}

# The numbers of the hosts that exist, in order, one a line.
rig_hosts_list() {
  ip netns list 2>/dev/null | awk '{print $1}' | sed -n 's/^progrun-node\([0-9][0-9]*\)$/\1/p' |
    sort -n
}

# Whether host K is whole: its namespace, its link up to the bridge (or cut:
# down), its address.
rig_hosts_whole() {
  local k="$1" ns veth
  ns="$(rig_hosts_ns "$k")"
  veth="$(rig_hosts_veth "$k")"
  ip link show "$veth" 2>/dev/null | grep -q "master $RIG_HOSTS_BRIDGE " &&
    ip netns exec "$ns" ip -o -4 addr show dev "$RIG_HOSTS_LINK" 2>/dev/null |
    grep -q " $(rig_hosts_addr "$k")/25 "
}

# Removes host K (its processes, link, namespace, state); what is gone
# already is fine.
rig_hosts_remove() {
  local k="$1" ns pids i
  ns="$(rig_hosts_ns "$k")"
  if ip netns list 2>/dev/null | awk '{print $1}' | grep -qx "$ns"; then
    # Processes left on the host (a job killed half-way): it goes, they go.
    pids="$(ip netns pids "$ns" 2>/dev/null || true)"
    if [[ -n "$pids" ]]; then
      # shellcheck disable=SC2086
      kill -TERM $pids 2>/dev/null || true
      for ((i = 0; i < 20; i++)); do
        [[ -z "$(ip netns pids "$ns" 2>/dev/null)" ]] && break
        sleep 0.1
      done
      pids="$(ip netns pids "$ns" 2>/dev/null || true)"
      # shellcheck disable=SC2086
      [[ -z "$pids" ]] || kill -KILL $pids 2>/dev/null || true
    fi
  fi
  ip link del "$(rig_hosts_veth "$k")" 2>/dev/null || true
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "${RIG_HOSTS_STATE:?}/node$k"
}

# Fails, saying so, when an address of 10.77.0.128/25 is on an interface
# that is not ours, or the subnet is routed elsewhere: two networks there
# would mix.
rig_hosts_net_free() {
  local other
  other="$(ip -o -4 addr show 2>/dev/null | awk -v br="$RIG_HOSTS_BRIDGE" '
    $2 != br && $4 ~ /^10\.77\.0\./ { split($4, a, "[./]"); if (a[4] >= 128) print $2 " " $4 }')"
  if [[ -z "$other" ]]; then
    other="$(ip -4 route show "$RIG_HOSTS_NET" 2>/dev/null | grep -v " dev $RIG_HOSTS_BRIDGE " || true)"
  fi
  if [[ -n "$other" ]]; then
    echo "hosts: $RIG_HOSTS_NET is in use on this machine ($other): not made" >&2
    return 1
  fi
}

# Makes the bridge when it is missing; fails when it cannot.
rig_hosts_bridge() {
  if ! ip link show "$RIG_HOSTS_BRIDGE" >/dev/null 2>&1; then
    rig_hosts_net_free || return 1
    ip link add "$RIG_HOSTS_BRIDGE" type bridge || return 1
  fi
  if ! ip -o -4 addr show dev "$RIG_HOSTS_BRIDGE" | grep -q " $RIG_HOSTS_BRIDGE_ADDR/25 "; then
    ip addr add "$RIG_HOSTS_BRIDGE_ADDR/25" dev "$RIG_HOSTS_BRIDGE" || return 1
  fi
  ip link set "$RIG_HOSTS_BRIDGE" up
}

# Makes host K (none of it may exist): namespace, link, address, boot id.
rig_hosts_make() {
  local k="$1" ns veth
  ns="$(rig_hosts_ns "$k")"
  veth="$(rig_hosts_veth "$k")"
  ip netns add "$ns" &&
    ip link add "$veth" type veth peer name "$RIG_HOSTS_LINK" netns "$ns" &&
    ip link set "$veth" master "$RIG_HOSTS_BRIDGE" &&
    ip link set "$veth" up &&
    ip netns exec "$ns" ip addr add "$(rig_hosts_addr "$k")/25" dev "$RIG_HOSTS_LINK" &&
    ip netns exec "$ns" ip link set "$RIG_HOSTS_LINK" up &&
    ip netns exec "$ns" ip link set lo up &&
    mkdir -p "$RIG_HOSTS_STATE/node$k" &&
    cat /proc/sys/kernel/random/uuid >"$RIG_HOSTS_STATE/node$k/boot_id"
}

# Writes hostfile.J for J = 1..N (nodes 1..J, 64 slots each), each whole
# or not at all.
rig_hosts_hostfiles() {
  local n="$1" j i f
  for ((j = 1; j <= n; j++)); do
    f="$RIG_HOSTS_STATE/hostfile.$j"
    for ((i = 1; i <= j; i++)); do echo "node$i slots=64"; done >"$f.tmp" && mv "$f.tmp" "$f" ||
      return 1
  done
}

# Holds the lock (fd 9) for the rest of the calling subshell.
rig_hosts_lock() {
  exec 9>"$RIG_HOSTS_LOCK" || return 1
  if ! flock -w 120 9; then
    echo "hosts: another hosts.sh holds $RIG_HOSTS_LOCK (120 s)" >&2
    return 1
  fi
}

# up N: hosts node1..nodeN exist and are whole afterwards (those there
# already are kept; a broken one is made again). On failure, what this call
# made is removed again.
rig_hosts_up() (
  local n="${1:-4}" k made=() bridge_made=0
  if [[ ! "$n" =~ ^[1-9][0-9]*$ ]] || ((n > RIG_HOSTS_MAX)); then
    echo "hosts: up takes a number of hosts, 1 to $RIG_HOSTS_MAX, not '$n'" >&2
    return 2
  fi
  rig_hosts_require
  rig_hosts_lock || return 1
  undo() {
    local m
    for m in "${made[@]}"; do rig_hosts_remove "$m"; done
    if ((bridge_made)); then ip link del "$RIG_HOSTS_BRIDGE" 2>/dev/null || true; fi
  }
  ip link show "$RIG_HOSTS_BRIDGE" >/dev/null 2>&1 || bridge_made=1
  mkdir -p "$RIG_HOSTS_STATE"
  if ! rig_hosts_bridge; then
    echo "hosts: cannot make the bridge $RIG_HOSTS_BRIDGE" >&2
    undo
    return 1
  fi
  for ((k = 1; k <= n; k++)); do
    rig_hosts_whole "$k" && [[ -s "$RIG_HOSTS_STATE/node$k/boot_id" ]] && continue
    rig_hosts_remove "$k"
    made+=("$k")
    if ! rig_hosts_make "$k"; then
      echo "hosts: cannot make node$k; undoing this up" >&2
      undo
      return 1
    fi
  done
  if ! rig_hosts_hostfiles "$(rig_hosts_list | tail -n 1)"; then
    undo
    return 1
  fi
)

# down: every host, the bridge and the state gone; nothing there is fine.
rig_hosts_down() (
  local k
  rig_hosts_require
  rig_hosts_lock || return 1
  for k in $(rig_hosts_list); do rig_hosts_remove "$k"; done
  ip link del "$RIG_HOSTS_BRIDGE" 2>/dev/null || true
  rm -rf "$RIG_HOSTS_STATE"
)

# cut/heal HOST: its link down (no packet in or out) or up again.
rig_hosts_link() {
  local state="$1" k
  k="$(rig_hosts_index "$2")" || return 2
  if ! rig_hosts_whole "$k"; then
    echo "hosts: node$k is not up (scripts/hosts.sh up $k)" >&2
    return 1
  fi
  ip link set "$(rig_hosts_veth "$k")" "$state"
}

# ssh [OPTIONS] HOST COMMAND...: what mpirun calls instead of ssh. COMMAND,
# its words joined as ssh joins them, runs under sh on HOST: in its network
# namespace, with its own host name, IPC namespace, /dev/shm (a tmpfs of
# this command's own) and boot id. The environment is passed on, as under
# a batch system. COMMAND runs as a session of its own, which ends (every
# process of it) when this command's caller does: as sshd hangs up on a
# client that is gone, but even on a cut host, so nothing outlives mpirun.
rig_hosts_ssh() {
  while [[ $# -gt 0 && "$1" == -* ]]; do shift; done # ssh's options: none apply
  if (($# < 2)); then
    echo "usage: hosts.sh ssh HOST COMMAND..." >&2
    return 2
  fi
  local k
  k="$(rig_hosts_index "$1")" || return 255
  shift
  if [[ ! -s "$RIG_HOSTS_STATE/node$k/boot_id" ]]; then
    echo "hosts: node$k is not up" >&2
    return 255 # ssh's status when the host cannot be reached
  fi
  # The inner sh waits for the session; the caller's death (pdeathsig) or
  # a hang-up ends every process of the session (the daemon puts each rank
  # in a process group of its own). stdin stays the caller's.
  # shellcheck disable=SC2016 # expanded by the inner shell
  exec setpriv --pdeathsig TERM ip netns exec "$(rig_hosts_ns "$k")" \
    unshare --mount --uts --ipc --propagation private sh -c '
      echo "$1" >/proc/sys/kernel/hostname &&
        mount -t tmpfs -o mode=1777 tmpfs /dev/shm &&
        mount --bind "$2" /proc/sys/kernel/random/boot_id || exit 255
      session=
      trap "[ -z \"\$session\" ] || pkill -KILL -s \$session; exit 129" TERM HUP INT
      setsid sh -c "$3" <&0 &
      session=$!
      wait "$session"
      rc=$?
      pkill -KILL -s "$session"
      exit "$rc"' hosts-ssh "node$k" "$RIG_HOSTS_STATE/node$k/boot_id" "$*"
}

# daemon HOST COMMAND...: runs COMMAND (its words as given, no shell) on
# HOST as rig_hosts_ssh does (its network namespace, host name, IPC
# namespace, /dev/shm and boot id), but as a daemon's start: no session
# that ends with the caller, so a daemon that forks itself away (slurmd)
# outlives it, its children (Slurm's step daemons, the tasks) on HOST too.
# Ends with COMMAND's status.
rig_hosts_daemon() {
  if (($# < 2)); then
    echo "usage: rig_hosts_daemon HOST COMMAND..." >&2
    return 2
  fi
  local k
  k="$(rig_hosts_index "$1")" || return 2
  shift
  if [[ ! -s "$RIG_HOSTS_STATE/node$k/boot_id" ]]; then
    echo "hosts: node$k is not up" >&2
    return 1
  fi
  # shellcheck disable=SC2016 # expanded by the inner shell
  ip netns exec "$(rig_hosts_ns "$k")" \
    unshare --mount --uts --ipc --propagation private sh -c '
      echo "$1" >/proc/sys/kernel/hostname &&
        mount -t tmpfs -o mode=1777 tmpfs /dev/shm &&
        mount --bind "$2" /proc/sys/kernel/random/boot_id || exit 1
      shift 2
      exec "$@"' hosts-daemon "node$k" "$RIG_HOSTS_STATE/node$k/boot_id" "$@"
}

# mpirun [--hosts K] ARGS...: mpirun over node1..nodeK (default: every host
# up; K hosts are made when fewer are up), one rank a host in turn (ranks
# past K start again at node1). The loopback-only settings are dropped;
# Open MPI's and UCX's traffic goes over the hosts' links alone.
# The hosts a launcher ($1, for messages) runs over: `--hosts K` among the
# arguments that follow, else every host up; K made when fewer are up.
# Sets rig_hosts_k, and rig_hosts_shift to the arguments it took (0 or 2).
rig_hosts_pick() {
  local cmd="$1" k=""
  shift
  rig_hosts_shift=0
  if [[ "${1:-}" == --hosts ]]; then
    if [[ ! "${2:-}" =~ ^[1-9][0-9]*$ ]] || (($2 > RIG_HOSTS_MAX)); then
      echo "hosts: $cmd --hosts takes a number of hosts, 1 to $RIG_HOSTS_MAX" >&2
      return 2
    fi
    k="$2"
    rig_hosts_shift=2
  fi
  if [[ -z "$k" ]]; then k="$(rig_hosts_list | tail -n 1)"; fi
  if [[ -z "$k" ]]; then
    rig_hosts_require
    echo "hosts: no hosts are up (scripts/hosts.sh up N, or $cmd --hosts N)" >&2
    return 1
  fi
  if [[ ! -s "$RIG_HOSTS_STATE/hostfile.$k" ]] || ! rig_hosts_whole "$k"; then
    rig_hosts_up "$k" || return
  fi
  rig_hosts_k="$k"
}

# `--plain` (before or after `--hosts K`): no placement of its own, so that
# a cluster's mpirun line is tried as it is (docs/jobs.md, "On a cluster").
rig_hosts_mpirun() {
  local plain=0
  if [[ "${1:-}" == --plain ]]; then plain=1 && shift; fi
  rig_hosts_pick mpirun "$@" || return
  shift "$rig_hosts_shift"
  if [[ "${1:-}" == --plain ]]; then plain=1 && shift; fi
  local k="$rig_hosts_k"
  unset UCX_NET_DEVICES OMPI_MCA_btl_tcp_if_include OMPI_MCA_oob_tcp_if_include \
    OMPI_MCA_btl_tcp_if_exclude OMPI_MCA_oob_tcp_if_exclude
  export UCX_NET_DEVICES="$RIG_HOSTS_LINK"
  export OMPI_MCA_btl_tcp_if_include="$RIG_HOSTS_NET" OMPI_MCA_oob_tcp_if_include="$RIG_HOSTS_NET"
  export OMPI_MCA_plm_rsh_agent="$RIG_HOSTS_LIB/hosts-ssh" OMPI_MCA_plm_rsh_no_tree_spawn=1
  export OMPI_MCA_orte_default_hostfile="$RIG_HOSTS_STATE/hostfile.$k"
  # Daemons stay below mpirun (not daemonized): tests find the ranks among
  # its descendants, and the sessions end with it (rig_hosts_ssh).
  export OMPI_MCA_orte_leave_session_attached=1
  unset OMPI_MCA_rmaps_base_mapping_policy OMPI_MCA_hwloc_base_binding_policy
  if ((!plain)); then
    export OMPI_MCA_rmaps_base_mapping_policy=node OMPI_MCA_hwloc_base_binding_policy=none
  fi
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  # A host cut off ends mpirun too, not only the ranks (ompi.sh).
  # shellcheck source=scripts/lib/ompi.sh
  source "$RIG_HOSTS_LIB/ompi.sh"
  exec mpirun "$@"
}

# mpich [--hosts K] [--plain] ARGS...: MPICH's mpiexec (hydra) over
# node1..nodeK as rig_hosts_mpirun, its proxies started by `hosts.sh ssh`;
# hydra, in this namespace, listens on the bridge. --plain: no host list
# of its own, ARGS name the hosts (-f, -hosts), as on a cluster.
rig_hosts_mpiexec_mpich() {
  local plain=0
  if [[ "${1:-}" == --plain ]]; then plain=1 && shift; fi
  rig_hosts_pick mpich "$@" || return
  shift "$rig_hosts_shift"
  if [[ "${1:-}" == --plain ]]; then plain=1 && shift; fi
  local k="$rig_hosts_k" list="" i hosts=()
  for ((i = 1; i <= k; i++)); do list+="${list:+,}node$i"; done
  ((plain)) || hosts=(-hosts "$list")
  unset UCX_NET_DEVICES
  export UCX_NET_DEVICES="$RIG_HOSTS_LINK"
  exec mpiexec.mpich -launcher ssh -launcher-exec "$RIG_HOSTS_LIB/hosts-ssh" \
    -iface "$RIG_HOSTS_BRIDGE" "${hosts[@]}" "$@"
}

# status: each host, its address, its link and how many processes run there.
rig_hosts_status() {
  local why k state n
  why="$(rig_hosts_why_not)"
  if [[ -n "$why" ]]; then
    echo "no simulated hosts here: $why"
    return 0
  fi
  if [[ -z "$(rig_hosts_list)" ]]; then
    echo "no simulated hosts are up (scripts/hosts.sh up N)"
    return 0
  fi
  printf '%-8s %-14s %-6s %s\n' host address link processes
  for k in $(rig_hosts_list); do
    state=up
    if ! rig_hosts_whole "$k"; then
      state=broken
    elif ! ip link show "$(rig_hosts_veth "$k")" | grep -q ',UP'; then
      state="cut"
    fi
    n="$(ip netns pids "$(rig_hosts_ns "$k")" 2>/dev/null | wc -l)"
    printf '%-8s %-14s %-6s %s\n' "node$k" "$(rig_hosts_addr "$k")" "$state" "$n"
  done
}
