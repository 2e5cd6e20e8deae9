# shellcheck shell=bash
# The Debian packages progrun needs to build, test, fuzz and benchmark, and
# rig_install_packages, which installs the missing ones. Sourced by
# scripts/test.sh, scripts/demo.sh and scripts/bench.sh.

RIG_PACKAGES=(
  cmake pkg-config gcc
  libopenmpi-dev openmpi-bin
  libucx-dev ucx-utils
  libhwloc-dev hwloc
  libcunit1-dev libjansson-dev
  clang libclang-rt-14-dev clang-format
)

# The packages of RIG_PACKAGES that are not installed, one per line.
rig_missing_packages() {
  local pkg status
  for pkg in "${RIG_PACKAGES[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    if [[ "$status" != "install ok installed" ]]; then
      printf '%s\n' "$pkg"
    fi
  done
}

# Installs the missing packages with apt-get when root (one `apt-get update`,
# only when something is missing); otherwise names them and returns 1.
rig_install_packages() {
  local missing
  mapfile -t missing < <(rig_missing_packages)
  if ((${#missing[@]} == 0)); then
    return 0
  fi
  if [[ "$(id -u)" != 0 ]]; then
    echo "missing Debian packages: ${missing[*]}" >&2
    echo "install them as root: apt-get install ${missing[*]}" >&2
    return 1
  fi
  echo "installing missing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update || return 1
  apt-get install -y --no-install-recommends "${missing[@]}" || return 1
}
