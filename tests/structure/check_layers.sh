#!/usr/bin/env bash
# The layer rule (docs/internals.md): each layer reaches only the layers
# below it.
#  1. Headers: a layer compiles against build/layers/<layer>/ alone, so an
#     include of a higher layer's public header must not compile there, and
#     each of its own must.
#  2. Symbols: every global symbol a layer's objects need that some layer
#     defines (rig_ functions, a backend's cuda_ functions, any other) is
#     defined by the layer itself or by the layers it is declared to stand
#     on; a rig_ symbol no layer defines is missing.
#  3. Order inside a layer: where ORDER below lists a layer's files in
#     tiers, no file needs a symbol of a file in a tier above its own, and
#     no files need each other's in a loop (inside a tier either). A
#     program's files are checked so too, given as @TARGET (the command,
#     @progrun): it stands on librig's public headers, so only its order.
#  4. Sources: no file of any folder includes another folder's files by a
#     relative path.
# Usage: check_layers.sh SOURCE_DIR BINARY_DIR CC "CFLAGS" LAYER=DEP,DEP... ... @TARGET...
# (CFLAGS: where the system's headers the public ones name are, e.g. MPI's.)
set -euo pipefail
export LC_ALL=C # sort and join agree on the order of names
src="$1" bin="$2" cc="$3"
read -r -a cflags <<<"$4"
shift 4
fail=0
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# The order of a layer's files, top first: tiers separated by ">", the
# files of a tier (their names less .c) by spaces. A file may need symbols
# of its own tier and those below it; every file of the layer is listed.
# The job layer's files call one way (docs/internals.md "The job layer";
# its routes, launcher/route/, sit between the start and the agent),
# and so do the command's ("The command"): at the bottom what every file
# of it uses (what it says, how it was started), then its options, its
# files and job files, the reports and views, the run, and main.
declare -A ORDER=(
  [rig_job]="job > tree > tree_runs > tree_memory > tree_mpi > tree_peers > rail_connect > bootstrap
             > route > route_frames route_memory route_messages > route_express
             > agent > executor > agent_rails > holdings > trace
             > proxy > proxy_submit > controller_rails > rail_table > request > express_messages > far_copy > express
             > told > failure > control > queue > machine > jobs"
  [@progrun]="progrun
              > cli_run cli_job > cli_session > cli_local > cli_control cli_plan
              > cli_progress cli_machine cli_fault
              > cli_desc cli_info > cli_info_warn cli_jobview cli_report_put
              > cli_report cli_table cli_trace dot_job > cli_trace_clock cli_times
              > jobfile > jobfile_rails jobfile_railmap cli_desc_read cli_outset > cli_file
              > cli_opts > cli_args
              > cli_bound > cli_say cli_launcher cli_units cli_wire cli_signal > cli_help"
)

objects() { find "$bin" -path "*/CMakeFiles/$1.dir/*" -name '*.o' | sort; }
# "symbol object" for each global symbol the objects define (U excluded).
# One nm for every object (-A names each line's object): a process an
# object would make the test slow on a busy machine.
defines() {
  (($#)) || return 0
  nm -A --defined-only "$@" |
    awk 'NF == 3 && $2 ~ /^[A-TV-Z]$/ {o = $1; sub(/:[^:]*$/, "", o); print $3, o}'
}
# "symbol object" for each symbol the objects need.
needs() {
  (($#)) || return 0
  nm -A -u "$@" | awk '{o = $1; sub(/:[^:]*$/, "", o); print $NF, o}'
}
# Each object's file name less .c.o.
stem() { local b="${1##*/}"; echo "${b%.c.o}"; }

# Which layer defines each global symbol of any layer: "symbol layer".
: >"$tmp/owners"
for spec in "$@"; do
  [[ "$spec" == @* ]] && continue
  layer="${spec%%=*}"
  mapfile -t objs < <(objects "$layer")
  ((${#objs[@]})) && defines "${objs[@]}" | awk -v l="$layer" '{print $1, l}' >>"$tmp/owners"
done
sort -u -o "$tmp/owners" "$tmp/owners"

check_order() { # layer objects...
  local layer="$1" tier=0 file
  shift
  declare -A rank=()
  for file in ${ORDER[$layer]}; do
    if [[ "$file" == ">" ]]; then tier=$((tier + 1)); else rank[$file]=$tier; fi
  done
  for o in "$@"; do
    file="$(stem "$o")"
    if [[ -z "${rank[$file]:-}" ]]; then
      echo "$layer: $file.c is in no tier of its ORDER (tests/structure/check_layers.sh)" >&2
      fail=1
    fi
  done
  defines "$@" | sort >"$tmp/file_defs"
  needs "$@" | sort >"$tmp/file_needs"
  # "symbol needer definer", by file names less .c.o (one awk, no fork a line).
  join "$tmp/file_needs" "$tmp/file_defs" |
    awk '{for (i = 2; i <= 3; i++) {sub(/.*\//, "", $i); sub(/\.c\.o$/, "", $i)} print}' >"$tmp/pairs"
  for file in "${!rank[@]}"; do echo "$file ${rank[$file]}"; done >"$tmp/ranks"
  if ! awk -v layer="$layer" 'NR == FNR {rank[$1] = $2; next}
      ($2 in rank) && ($3 in rank) && rank[$3] < rank[$2] {
        printf "%s: %s.c calls %s of %s.c, a file above it (ORDER)\n", layer, $2, $1, $3; bad = 1}
      END {exit bad}' "$tmp/ranks" "$tmp/pairs" >&2; then
    fail=1
  fi
  # tsort names a loop on stderr: files that need each other, in any tier.
  awk '{print $2, $3}' "$tmp/pairs" | sort -u | tsort >/dev/null 2>"$tmp/loop" || true
  if [[ -s "$tmp/loop" ]]; then
    echo "$layer: files that need each other in a loop:" >&2
    grep -v 'input contains a loop' "$tmp/loop" | sed 's/^tsort: /  /' >&2
    fail=1
  fi
}

for spec in "$@"; do
  if [[ "$spec" == @* ]]; then # a program: its order only
    mapfile -t objs < <(objects "${spec#@}")
    if ((${#objs[@]} == 0)); then
      echo "$spec: no objects under $bin" >&2
      fail=1
    elif [[ -n "${ORDER[$spec]:-}" ]]; then
      check_order "$spec" "${objs[@]}"
    fi
    continue
  fi
  layer="${spec%%=*}" deps="${spec#*=}"
  dir="$bin/layers/$layer"
  # 1. headers
  for header in "$src"/include/rig/*.h; do
    name="$(basename "$header")"
    printf '#include "rig/%s"\nint rig_probe;\n' "$name" >"$tmp/probe.c"
    if [[ -e "$dir/rig/$name" ]]; then
      if ! "$cc" -fsyntax-only "${cflags[@]}" -I"$dir" "$tmp/probe.c" 2>"$tmp/err"; then
        echo "$layer: its own header $name does not compile:" >&2
        cat "$tmp/err" >&2
        fail=1
      fi
    elif "$cc" -fsyntax-only "${cflags[@]}" -I"$dir" "$tmp/probe.c" 2>/dev/null; then
      echo "$layer: $name, a header of a layer above it, compiles there" >&2
      fail=1
    fi
  done
  # 2. symbols
  mapfile -t objs < <(objects "$layer")
  if ((${#objs[@]} == 0)); then
    echo "$layer: no objects under $bin" >&2
    fail=1
    continue
  fi
  allowed=" $layer ${deps//,/ } "
  needs "${objs[@]}" | awk '{print $1}' | sort -u >"$tmp/needed"
  # Needed symbols some layer defines, with that layer.
  join "$tmp/needed" "$tmp/owners" >"$tmp/owned"
  bad="$(awk -v ok="$allowed" 'index(ok, " " $2 " ") == 0 {print $1 " (" $2 ")"}' "$tmp/owned")"
  if [[ -n "$bad" ]]; then
    echo "$layer calls what only layers it does not stand on (${deps:-none}) define:" $bad >&2
    fail=1
  fi
  missing="$(grep '^rig_' "$tmp/needed" | join -v 1 - <(awk '{print $1}' "$tmp/owners" | sort -u) || true)"
  if [[ -n "$missing" ]]; then
    echo "$layer calls rig_ functions no layer defines:" $missing >&2
    fail=1
  fi
  # 3. order inside the layer
  if [[ -n "${ORDER[$layer]:-}" ]]; then check_order "$layer" "${objs[@]}"; fi
done

for layer in "${!ORDER[@]}"; do
  if ! printf '%s\n' "$@" | grep -qxF -e "$layer" && ! printf '%s\n' "$@" | grep -q "^$layer="; then
    echo "ORDER names $layer, which is no layer nor program given" >&2
    fail=1
  fi
done

# 4. sources, in every folder but the build's and git's
if find "$src" \( -path "$src/build" -o -path "$src/.git" \) -prune -o -type f \
  \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.in' \) -print0 |
  xargs -0 grep -nE '#include "\.\./' >&2; then
  echo "the includes above reach into another folder by a relative path" >&2
  fail=1
fi

if ((fail)); then exit 1; fi
echo "check_layers: $# layers and programs, each reaching only the layers below it, their" \
  "files in tiers; every folder's includes its own"
