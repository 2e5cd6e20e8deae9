#!/usr/bin/env bash
# The export rule: librig exports exactly the functions include/rig/
# declares (src/librig.map), nothing internal and nothing missing.
# Usage: check_exports.sh SOURCE_DIR LIBRIG
set -euo pipefail
src="$1" lib="$2"
want="$(mktemp)" have="$(mktemp)"
trap 'rm -f "$want" "$have"' EXIT
python3 "$src/tests/structure/public_symbols.py" "$src" >"$want"
# Defined dynamic symbols, less the linker's own.
nm -D --defined-only "$lib" | awk '{print $NF}' | sed 's/@.*//' |
  grep -v -E '^(_init|_fini|_edata|_end|__bss_start|RIG_0)$' | sort -u >"$have"
if ! diff -u --label declared "$want" --label exported "$have"; then
  echo "check_exports: librig's exports differ from include/rig/'s declarations" \
    "(- declared, not exported; + exported, not declared): mend src/librig.map" >&2
  exit 1
fi
echo "check_exports: $(wc -l <"$have") functions exported, each declared in include/rig/"
