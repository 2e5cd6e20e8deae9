#!/usr/bin/env bash
# scripts/demo.sh — install what is missing, build progrun (preset default),
# and show each example description: `progrun check` then `progrun dump`.
#
# Usage: scripts/demo.sh
#
# Exits non-zero when the build or any example fails.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# shellcheck source=scripts/lib/packages.sh
source scripts/lib/packages.sh
# shellcheck source=scripts/lib/env.sh
source scripts/lib/env.sh

rig_install_packages
cmake --preset default
cmake --build --preset default -j"$(nproc)"

progrun=build/default/progrun
shopt -s nullglob
examples=(examples/*.json)
shopt -u nullglob
if ((${#examples[@]} == 0)); then
  echo "no examples/*.json yet"
  exit 0
fi

failed=0
for example in "${examples[@]}"; do
  echo
  echo "==== $example ===="
  echo "\$ progrun check $example"
  "$progrun" check "$example" || failed=1
  echo "\$ progrun dump $example"
  "$progrun" dump "$example" || failed=1
done
if ((failed)); then
  echo
  echo "some examples failed" >&2
fi
exit "$failed"
