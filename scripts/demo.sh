#!/usr/bin/env bash
# scripts/demo.sh — install what is missing, build progrun (preset default),
# show each example description (`progrun check` then `progrun dump`), then
# run the examples on this machine and check their results against values
# computed here, independently, in Python; then the pipeline and the ring of
# 4 again across simulated hosts (scripts/hosts.sh; skipped, saying why,
# where they cannot be made).
#
# Usage: scripts/demo.sh
#
# Exits non-zero when the build, any example or any check fails.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# shellcheck source=scripts/lib/packages.sh
source scripts/lib/packages.sh
# shellcheck source=scripts/lib/env.sh
source scripts/lib/env.sh
# shellcheck source=scripts/lib/hosts.sh
source scripts/lib/hosts.sh

rig_install_packages
cmake --preset default
cmake --build --preset default -j"$(nproc)"

progrun=build/default/progrun
# The build's copies: their images name the kernels built beside them
# (build/default/examples/kernels/*.so).
examples_dir=build/default/examples
shopt -s nullglob
examples=("$examples_dir"/*.json)
shopt -u nullglob
if ((${#examples[@]} == 0)); then
  echo "no $examples_dir/*.json: is examples/ in the build?" >&2
  exit 1
fi

failed=0
for example in "${examples[@]}"; do
  # Job files (a "machines" list) run below, under mpirun.
  if grep -q '"machines"' "$example"; then continue; fi
  echo
  echo "==== $example ===="
  echo "\$ progrun check $example"
  "$progrun" check "$example" || failed=1
  echo "\$ progrun dump $example"
  "$progrun" dump "$example" || failed=1
done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Runs progrun, echoing the command first.
show_run() {
  echo "\$ progrun ${*}"
  "$progrun" "$@"
}

# The pipeline example under the launcher given as arguments (an mpirun
# and its options), its sums checked in closed form.
run_pipeline() {
  rm -f "$examples_dir/pipeline-sum.bin"
  echo "\$ $* progrun $examples_dir/pipeline.json"
  "$@" "$progrun" "$examples_dir/pipeline.json" || return
  python3 - "$examples_dir/pipeline-sum.bin" <<'EOF'
import struct, sys
runs = 100
got = struct.unpack("<512Q", open(sys.argv[1], "rb").read())
want = [runs * i + runs * (runs - 1) // 2 for i in range(512)]
print("sum[0:4] =", " ".join(str(v) for v in got[:4]), " expected", " ".join(str(v) for v in want[:4]))
if list(got) != want:
    print("pipeline: the sums differ from R i + R (R - 1) / 2", file=sys.stderr)
    sys.exit(1)
print("pipeline: all 512 sums as expected")
EOF
}

# The ring example of $1 machines under the launcher given as the other
# arguments, its sum checked in closed form.
run_ring() {
  local n="$1"
  shift
  rm -f "$examples_dir/ring-$n-sum.bin"
  echo "\$ $* progrun $examples_dir/ring-$n.json"
  "$@" "$progrun" "$examples_dir/ring-$n.json" || return
  python3 - "$examples_dir/ring-$n-sum.bin" "$n" <<'EOF'
import struct, sys
runs, n = 100, int(sys.argv[2])
(got,) = struct.unpack("<Q", open(sys.argv[1], "rb").read())
want = runs * (runs - 1) // 2 + runs * n * (n - 1) // 2
print(f"ring of {n}: sum {got}, expected {want}")
if got != want:
    sys.exit(1)
EOF
}

echo
echo "==== running $examples_dir/hello.json and scale.json ===="
echo "hello: x[i] = i, y[i] = 100 (16 uint32 each), y += x on the host;"
echo "scale: x[i] = i (64 uint32), copied to m, then 4 trips t of x = m (t + 1)."
python3 - "$work" <<'EOF'
import struct, sys
open(sys.argv[1] + "/a.bin", "wb").write(struct.pack("<16I", *range(16)))
open(sys.argv[1] + "/b.bin", "wb").write(struct.pack("<16I", *[100] * 16))
open(sys.argv[1] + "/m.bin", "wb").write(struct.pack("<64I", *range(64)))
EOF
if show_run run "$examples_dir/hello.json" --input 0="$work/a.bin" --input 1="$work/b.bin" \
  --output 1="$work/sum.bin" &&
  show_run run "$examples_dir/scale.json" --input 0="$work/m.bin" --output 0="$work/m4.bin"; then
  python3 - "$work" <<'EOF' || failed=1
import struct, sys
y = struct.unpack("<16I", open(sys.argv[1] + "/sum.bin", "rb").read())
x = struct.unpack("<64I", open(sys.argv[1] + "/m4.bin", "rb").read())
print("hello: y =", " ".join(str(v) for v in y[:8]), "...")
print("scale: x =", " ".join(str(v) for v in x[:8]), "...")
if y != tuple(100 + i for i in range(16)) or x != tuple(4 * i for i in range(64)):
    print("hello or scale: the result differs from the expected one", file=sys.stderr)
    sys.exit(1)
print("hello and scale: all values as expected")
EOF
else
  failed=1
fi

echo
echo "==== running $examples_dir/saxpy.json ===="
echo "x[i] = i mod 17 - 3 (1024 floats); y = x, then each of the 4 trips t:"
echo "y = 2x + y on cpu:0, then x = 1.5x + t on the host."
python3 - "$work/x.bin" <<'EOF'
import struct, sys
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<1024f", *[float(i % 17 - 3) for i in range(1024)]))
EOF
if show_run run "$examples_dir/saxpy.json" --runs 5 --ints 4 \
  --input 0="$work/x.bin" --output 1="$work/y.bin"; then
  python3 - "$work/y.bin" <<'EOF' || failed=1
import struct, sys

def f32(v):  # round to float32, as the kernels do
    return struct.unpack("<f", struct.pack("<f", v))[0]

got = struct.unpack("<1024f", open(sys.argv[1], "rb").read())
want = []
for i in range(1024):
    x = y = float(i % 17 - 3)
    for t in range(4):
        y = f32(f32(2.0 * x) + y)
        x = f32(f32(x * 1.5) + t)
    want.append(y)
print("y[0:8]  =", " ".join(f"{v:g}" for v in got[:8]))
print("expected", " ".join(f"{v:g}" for v in want[:8]))
bad = [i for i in range(1024) if got[i] != want[i]]
if bad:
    print(f"saxpy: {len(bad)} of 1024 values differ, first at {bad[0]}", file=sys.stderr)
    sys.exit(1)
print("saxpy: all 1024 values as expected")
EOF
else
  failed=1
fi

echo
echo "==== running $examples_dir/stencil.json ===="
echo "64 cells, cell 0 held at 1000, cell 40 at 77: v[i] = (u[i-1] + 2u[i] + u[i+1]) / 4"
echo "on cpu:0 until no cell changes (the loop's flag), at most 1000 trips."
python3 - "$work/u.bin" <<'EOF'
import struct, sys
u = [0] * 64
u[0], u[40] = 1000, 77
open(sys.argv[1], "wb").write(struct.pack("<64Q", *u))
EOF
if show_run run "$examples_dir/stencil.json" --runs 3 \
  --input 0="$work/u.bin" --output 1="$work/v.bin"; then
  python3 - "$work/v.bin" <<'EOF' || failed=1
import struct, sys
got = struct.unpack("<65Q", open(sys.argv[1], "rb").read())
u = [0] * 64
u[0], u[40] = 1000, 77
trips = 0
while trips < 1000:
    v = [u[0]] + [(u[i - 1] + 2 * u[i] + u[i + 1]) >> 2 for i in range(1, 63)] + [u[63]]
    trips += 1
    changed, u = v != u, v
    if not changed:
        break
print("cells[0:12] =", " ".join(str(c) for c in got[:12]))
print("expected      ", " ".join(str(c) for c in u[:12]))
print(f"trips: {got[64]} (expected {trips})")
if list(got[:64]) != u or got[64] != trips:
    print("stencil: the result differs from the expected one", file=sys.stderr)
    sys.exit(1)
print("stencil: all 64 cells and the trip count as expected")
EOF
else
  failed=1
fi

echo
echo "==== the same saxpy on 3 machines: mpirun -n 3 (rank 0 the controller) ===="
echo "\$ mpirun -n 3 progrun $examples_dir/saxpy.json --runs 5 --ints 4 \\"
echo "    --input 0=x.bin --output '1=y{rank}.bin'"
if mpirun -n 3 --oversubscribe --bind-to none "$progrun" "$examples_dir/saxpy.json" --runs 5 \
  --ints 4 --input 0="$work/x.bin" --output "1=$work/y{rank}.bin"; then
  for r in 0 1 2; do
    if cmp -s "$work/y.bin" "$work/y$r.bin"; then
      echo "machine $r: y as on one machine"
    else
      echo "machine $r: y differs from the one-machine run" >&2
      failed=1
    fi
  done
else
  failed=1
fi

echo
echo "==== a pipeline over a rail: mpirun -n 2 progrun $examples_dir/pipeline.json ===="
echo "machine 0 sends run r's block (word i = r + i, 4 KiB) over rail 1; machine 1 adds"
echo "it into its output and acknowledges it back, which paces the producer."
if ! run_pipeline mpirun -n 2 --oversubscribe --bind-to none; then failed=1; fi

for n in 2 4; do
  echo
  echo "==== a ring of $n machines: mpirun -n $n progrun $examples_dir/ring-$n.json ===="
  echo "each run machine 0 sends r around the ring, each machine adding its index."
  if ! run_ring "$n" mpirun -n "$n" --oversubscribe --bind-to none; then failed=1; fi
done

# The same two across simulated hosts (scripts/hosts.sh): one rank a host,
# TCP between them, as on a cluster. The hosts are removed afterwards
# unless some were up before.
echo
echo "==== across simulated hosts: scripts/hosts.sh mpirun (one rank a host, TCP between) ===="
why="$(rig_hosts_why_not)"
if [[ -n "$why" ]]; then
  echo "skipped: $why"
else
  hosts_before="$(rig_hosts_list)"
  echo "\$ scripts/hosts.sh up 4 && scripts/hosts.sh mpirun -n 4 progrun info"
  if scripts/hosts.sh up 4 && scripts/hosts.sh mpirun -n 4 "$progrun" info; then
    echo
    echo "the pipeline, machine 0 on node1 and machine 1 on node2:"
    run_pipeline scripts/hosts.sh mpirun --hosts 2 -n 2 || failed=1
    echo
    echo "the ring of 4, machine k on node(k+1):"
    run_ring 4 scripts/hosts.sh mpirun --hosts 4 -n 4 || failed=1
  else
    failed=1
  fi
  if [[ -z "$hosts_before" ]]; then scripts/hosts.sh down || failed=1; fi
fi

if ((failed)); then
  echo
  echo "some examples failed" >&2
fi
exit "$failed"
