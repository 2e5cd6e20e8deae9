#!/usr/bin/env bash
# pip install ./python into a venv against an installed librig: the
# package finds the library by the prefix's pkg-config, by CMAKE_PREFIX_PATH
# and by RIG_LIBRARY, and `rig check` runs on the installed example.
# Usage: check_pip.sh SOURCE_DIR BUILD_DIR PYTHON
set -euo pipefail
src="$1" build="$2" python="$3"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
"$python" -m venv --system-site-packages "$tmp/venv"
# A copy: pip's build writes beside the sources.
cp -r "$src/python" "$tmp/pkg"
# Offline, with the interpreter's setuptools: nothing is fetched.
"$tmp/venv/bin/pip" install -q --no-index --no-build-isolation "$tmp/pkg"
example="$tmp/prefix/share/rig/examples/saxpy.json"
cd "$tmp"
for how in "PKG_CONFIG_PATH=$tmp/prefix/lib/pkgconfig" "CMAKE_PREFIX_PATH=$tmp/prefix" \
           "RIG_LIBRARY=$tmp/prefix/lib/librig.so.0"; do
  got="$(env -u PYTHONPATH "$how" "$tmp/venv/bin/rig" check "$example")"
  [ "$got" = ok ] || { echo "check_pip: $how: rig check said '$got'" >&2; exit 1; }
  lib="$(env -u PYTHONPATH "$how" "$tmp/venv/bin/python" -c 'import rig._lib as l; print(l.lib._name)')"
  case "$(realpath "$lib")" in
    "$tmp/prefix/"*) ;;
    *) echo "check_pip: $how: librig from $lib, not the prefix" >&2; exit 1 ;;
  esac
done
echo "check_pip: rig from pip finds the installed librig 3 ways"
