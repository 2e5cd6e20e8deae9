#!/usr/bin/env bash
# Slurm across the simulated hosts (scripts/slurm/start.sh --hosts 4): real
# sbatch and srun, one task a node. One promise a case:
#
#   check_slurm_hosts.sh BUILD SRC CASE
#
#   ring     examples/slurm/jobfile.sh runs ring-4.json on node1..node4:
#            the closed-form sum, `progrun info` naming each node
#   saxpy    examples/slurm/job.sh runs saxpy, each machine's `{rank}`
#            output in a folder of its own, all equal
#   srun     the srun line of docs/jobs.md ("On a cluster"), as written
#   cancel   scancel mid-run: every task ends, progrun says it once,
#            naming Slurm's job, exit 143, CANCELLED
#   timeout  the job's --time reached: the same, TIMEOUT
#   slurmd   node3's slurmd killed: the job ends, NODE_FAIL
#   cut      node3 cut off: progrun names machine 2 (node3), FAILED
#
# After each: no task left on any node, nothing in any node's /dev/shm,
# nothing of the job in any node's spool. The MPI is the build's: PMIx for
# Open MPI, PMI-2 for MPICH (srun --mpi=pmi2). Exit 77 (skipped), saying
# why, where simulated hosts cannot be made.
set -euo pipefail
build="$(cd "$1" && pwd)"
src="$(cd "$2" && pwd)"
case_="$3"
# shellcheck source=scripts/lib/hosts.sh
source "$src/scripts/lib/hosts.sh"
why="$(rig_hosts_why_not)"
if [[ -n "$why" ]]; then
  echo "SKIPPED: no simulated hosts here: $why"
  exit 77
fi

fail() {
  echo "slurm-hosts $case_: $*" >&2
  exit 1
}

rc=0
started="$("$src/scripts/slurm/start.sh" --hosts 4 2>&1)" || rc=$?
if ((rc == 77)); then
  echo "$started"
  echo "SKIPPED: no simulated hosts here"
  exit 77
elif ((rc != 0)); then
  echo "$started" >&2
  fail "scripts/slurm/start.sh --hosts 4 failed (status $rc)"
fi
sdir="${RIG_SLURM_HOSTS_DIR:-/tmp/progrun-slurm-hosts}"
# shellcheck source=/dev/null
source "$sdir/env.sh"

# Across the hosts: their links, not loopback.
export UCX_NET_DEVICES="$RIG_HOSTS_LINK"
export OMPI_MCA_btl_tcp_if_include="$RIG_HOSTS_NET" OMPI_MCA_oob_tcp_if_include="$RIG_HOSTS_NET"
export PROGRUN="$build/progrun"
export SLURM_MPI_TYPE=pmix
if [[ "${RIG_TEST_MPI:-}" == mpich ]]; then export SLURM_MPI_TYPE=pmi2; fi

tmp="$(mktemp -d /tmp/rig-slurm-hosts.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
cp -r "$build/examples" "$tmp/ex"
rm -f "$tmp/ex/ring-4-sum.bin"
cd "$tmp"

# sbatch --wait of batch script $1 (with the arguments after --), options
# before; sets job (the id) and status (sbatch's).
submit() {
  local opts=()
  while [[ "$1" != -- ]]; do opts+=("$1") && shift; done
  shift
  status=0
  timeout 300 sbatch --wait -N 4 -n 4 --ntasks-per-node=1 --output="$tmp/job.out" --chdir="$tmp" \
    "${opts[@]}" "$@" >"$tmp/sbatch.out" 2>&1 || status=$?
  job="$(sed -n 's/^Submitted batch job \([0-9]*\)$/\1/p' "$tmp/sbatch.out")"
  [[ -n "$job" ]] || { cat "$tmp/sbatch.out" >&2; fail "sbatch did not submit"; }
}

# The job's state as Slurm records it (jobcomp/filetxt: no slurmdbd here,
# so no sacct), once it is recorded (at most 60 s).
job_state() {
  local i s
  for ((i = 0; i < 60; i++)); do
    s="$(grep "^JobId=$1 " "$sdir/log/jobcomp.txt" 2>/dev/null | sed -n 's/.* JobState=\([A-Z_]*\) .*/\1/p' | tail -n 1)"
    [[ -n "$s" ]] && break
    sleep 1
  done
  echo "${s:-none}"
}

# Nothing of job $1 left: no task or step daemon on a host, nothing in a
# host's /dev/shm, nothing of the job in its spool (at most 60 s).
left_of() {
  local k pid p comm out=""
  for ((k = 1; k <= 4; k++)); do
    for p in $(ip netns pids "$(rig_hosts_ns "$k")" 2>/dev/null); do
      comm="$(cat "/proc/$p/comm" 2>/dev/null || true)"
      [[ "$comm" == slurmd ]] || out+=" node$k: process $p ($comm);"
    done
    pid="$(cat "$sdir/run/slurmd-node$k.pid" 2>/dev/null || true)"
    if [[ -n "$pid" && -d "/proc/$pid" ]]; then
      p="$(nsenter -t "$pid" -m ls -A /dev/shm 2>/dev/null | tr '\n' ' ')"
      [[ -z "$p" ]] || out+=" node$k: /dev/shm holds $p;"
    fi
    p="$(find "$sdir/spool/node$k" "$sdir/tmp/node$k" -mindepth 1 -maxdepth 1 \
      \( -name "*_$1.*" -o -name "job*$1" -o -name "*_$1" -o -name "spmix_appdir_*_$1.*" \) \
      2>/dev/null | tr '\n' ' ')"
    [[ -z "$p" ]] || out+=" node$k: spool holds $p;"
  done
  echo "$out"
}
clean_after() {
  local i out
  for ((i = 0; i < 60; i++)); do
    out="$(left_of "$1")"
    [[ -z "$out" ]] && return 0
    sleep 1
  done
  fail "job $1 left behind:$out"
}

# Waits (at most $2 s) until the job's output matches regex $1.
wait_output() {
  local i
  for ((i = 0; i < $2; i++)); do
    grep -qE "$1" "$tmp/job.out" 2>/dev/null && return 0
    sleep 1
  done
  cat "$tmp/job.out" >&2 || true
  fail "no '$1' in the job's output within $2 s"
}

# Runs batch script $1 for ever (ring-4, a billion runs) in the background,
# until the job runs its ring (every node's info row out): sets job.
start_long() {
  local opts=("$@")
  # The ring spins the cores until the job ends: at the lowest priority.
  printf '#!/bin/sh\nexec nice -n 19 %q "$@"\n' "$build/progrun" >"$tmp/progrun-nice"
  chmod +x "$tmp/progrun-nice"
  export PROGRUN="$tmp/progrun-nice"
  (submit "${opts[@]}" -- "$src/examples/slurm/jobfile.sh" "$tmp/ex/ring-4.json" \
    --runs 1000000000 && echo "$status" >"$tmp/status") &
  waiter=$!
  local i
  for ((i = 0; i < 60; i++)); do
    job="$(squeue -h -o %i -n progrun-jobfile 2>/dev/null | head -n 1)"
    [[ -n "$job" ]] && break
    sleep 1
  done
  [[ -n "$job" ]] || fail "the job did not start within 60 s"
  wait_output '^rank 3: node4' 120
  sleep 3 # runs under way
}

# Once the job ended: sbatch's status, the state, one progrun line.
end_long() {
  wait "$waiter" || true
  status="$(cat "$tmp/status" 2>/dev/null || echo none)"
  cat "$tmp/job.out"
  echo "sbatch --wait: status $status; job $job: $(job_state "$job")"
}

# Exactly one line of progrun's matching regex $1 in the job's output.
one_line() {
  local n
  n="$(grep -cE "$1" "$tmp/job.out" || true)"
  ((n == 1)) || fail "$n lines matching '$1' in the job's output, not one"
}

case "$case_" in
  ring)
    submit -- "$src/examples/slurm/jobfile.sh" "$tmp/ex/ring-4.json" --runs 20
    cat "$tmp/job.out"
    ((status == 0)) || fail "sbatch --wait: status $status"
    for k in 1 2 3 4; do
      grep -q "^rank $((k - 1)): node$k," "$tmp/job.out" || fail "no info row of rank $((k - 1)) on node$k"
    done
    grep -q '^job: runs 20, ' "$tmp/job.out" || fail "no job summary"
    sum="$(od -An -tu8 "$tmp/ex/ring-4-sum.bin" | tr -d ' ')"
    # 20 runs on 4 machines: R (R - 1) / 2 + R N (N - 1) / 2 (kernels/ring.c).
    [[ "$sum" == 310 ]] || fail "ring sum $sum, not 310"
    [[ "$(job_state "$job")" == COMPLETED ]] || fail "job $job: $(job_state "$job"), not COMPLETED"
    clean_after "$job"
    echo "slurm-hosts ring: 4 nodes, sum 310, job $job COMPLETED"
    ;;
  saxpy)
    python3 -c 'import struct,sys; sys.stdout.buffer.write(struct.pack("<1024f", *range(1024)))' >x.bin
    mkdir -p out0 out1 out2 out3
    submit -- "$src/examples/slurm/job.sh" "$tmp/ex/saxpy.json" --runs 3 --ints 4 \
      --input "0=$tmp/x.bin" --output "1=$tmp/out{rank}/y.bin"
    cat "$tmp/job.out"
    ((status == 0)) || fail "sbatch --wait: status $status"
    for r in 0 1 2 3; do [[ -s "out$r/y.bin" ]] || fail "no output of machine $r"; done
    for r in 1 2 3; do cmp out0/y.bin "out$r/y.bin" || fail "machine $r's output differs"; done
    grep -q "^machine 3: runs 3" "$tmp/job.out" || fail "no summary of machine 3"
    clean_after "$job"
    echo "slurm-hosts saxpy: 4 machines' outputs in out0..out3, equal"
    ;;
  srun)
    # docs/jobs.md's line, from here (outside the hosts) as from a login node.
    timeout 180 srun --mpi="$SLURM_MPI_TYPE" -N 4 --ntasks-per-node=1 --exclusive --cpu-bind=none \
      "$PROGRUN" "$tmp/ex/ring-4.json" --runs 20 >"$tmp/job.out" 2>&1 || { cat "$tmp/job.out"; fail "srun failed"; }
    cat "$tmp/job.out"
    [[ "$(od -An -tu8 "$tmp/ex/ring-4-sum.bin" | tr -d ' ')" == 310 ]] || fail "ring sum not 310"
    echo "slurm-hosts srun: the cluster line ran ring-4 on 4 nodes"
    ;;
  cancel)
    start_long
    scancel "$job"
    end_long
    one_line "^progrun: interrupted \(SIGTERM\) in run [0-9]+: Slurm ended job $job "
    grep -q "\*\*\* JOB $job ON node1 CANCELLED AT" "$tmp/job.out" || fail "no Slurm line of the cancel"
    grep -q "task 0: Exited with exit code 143" "$tmp/job.out" || fail "rank 0 did not exit 143"
    [[ "$(job_state "$job")" == CANCELLED ]] || fail "job $job: $(job_state "$job"), not CANCELLED"
    clean_after "$job"
    echo "slurm-hosts cancel: job $job CANCELLED, told once"
    ;;
  timeout)
    # Slurm's limits are in minutes: the job ends 1 to 2 minutes in.
    start_long --time=1
    end_long
    one_line "^progrun: interrupted \(SIGTERM\) in run [0-9]+: Slurm ended job $job "
    grep -q "\*\*\* JOB $job ON node1 CANCELLED AT .* DUE TO TIME LIMIT" "$tmp/job.out" ||
      fail "no Slurm line of the time limit"
    [[ "$(job_state "$job")" == TIMEOUT ]] || fail "job $job: $(job_state "$job"), not TIMEOUT"
    clean_after "$job"
    echo "slurm-hosts timeout: job $job TIMEOUT, told once"
    ;;
  slurmd)
    start_long
    kill -KILL "$(cat "$sdir/run/slurmd-node3.pid")"
    end_long
    state="$(job_state "$job")"
    # Back as it was: slurmd again on node3, which Slurm returns to service.
    "$src/scripts/slurm/start.sh" --hosts 4 >/dev/null || fail "start.sh could not bring node3 back"
    [[ "$state" == NODE_FAIL ]] || fail "job $job: $state, not NODE_FAIL"
    grep -q "Node failure on node3" "$tmp/job.out" || fail "srun did not name node3"
    one_line "^progrun: ended by the launcher in run [0-9]+: machine 2 did not answer \(on node3\)"
    clean_after "$job"
    echo "slurm-hosts slurmd: node3 lost, job $job NODE_FAIL"
    ;;
  cut)
    start_long
    "$src/scripts/hosts.sh" cut node3
    end_long || true
    "$src/scripts/hosts.sh" heal node3
    state="$(job_state "$job")"
    "$src/scripts/slurm/start.sh" --hosts 4 >/dev/null || fail "start.sh could not bring node3 back"
    one_line "^progrun: .*machine 2"
    grep -E "^progrun: .*machine 2" "$tmp/job.out" | grep -q node3 || fail "progrun did not name node3"
    [[ "$state" == FAILED || "$state" == NODE_FAIL ]] || fail "job $job: $state, not FAILED"
    clean_after "$job"
    echo "slurm-hosts cut: node3 cut off, job $job $state"
    ;;
  *) fail "no case $case_" ;;
esac
