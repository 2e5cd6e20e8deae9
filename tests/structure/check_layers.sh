#!/usr/bin/env bash
# The layer rule (docs/internals.md): each layer reaches only the layers
# below it.
#  1. Headers: a layer compiles against build/layers/<layer>/ alone, so an
#     include of a higher layer's public header must not compile there, and
#     each of its own must.
#  2. Symbols: every rig_ function a layer's objects call is defined by the
#     layer itself or by the layers it is declared to stand on.
#  3. Sources: no file includes another folder's files by a relative path.
# Usage: check_layers.sh SOURCE_DIR BINARY_DIR CC "CFLAGS" LAYER=DEP,DEP... ...
# (CFLAGS: where the system's headers the public ones name are, e.g. MPI's.)
set -euo pipefail
src="$1" bin="$2" cc="$3"
read -r -a cflags <<<"$4"
shift 4
fail=0
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

objects() { find "$bin" -path "*/CMakeFiles/$1.dir/*" -name '*.o' | sort; }

for spec in "$@"; do
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
  nm --defined-only "${objs[@]}" | awk 'NF == 3 {print $3}' >"$tmp/defined"
  for dep in ${deps//,/ }; do
    mapfile -t dobjs < <(objects "$dep")
    ((${#dobjs[@]})) && nm --defined-only "${dobjs[@]}" | awk 'NF == 3 {print $3}' >>"$tmp/defined"
  done
  sort -u -o "$tmp/defined" "$tmp/defined"
  nm -u "${objs[@]}" | awk '{print $NF}' | grep '^rig_' | sort -u >"$tmp/needed" || true
  missing="$(comm -23 "$tmp/needed" "$tmp/defined")"
  if [[ -n "$missing" ]]; then
    echo "$layer calls functions of no layer below it (${deps:-none}):" $missing >&2
    fail=1
  fi
done

# 3. sources
if grep -rnE '#include "\.\./' "$src/src" "$src/backends" "$src/launcher" >&2; then
  echo "the includes above reach into another folder by a relative path" >&2
  fail=1
fi

if ((fail)); then exit 1; fi
echo "check_layers: $# layers, each reaching only the layers below it"
