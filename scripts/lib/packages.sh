# shellcheck shell=bash
# The Debian packages progrun needs to build, test, fuzz and benchmark, and
# rig_install_packages, which installs the missing ones. Sourced by
# scripts/test.sh, scripts/demo.sh and scripts/bench.sh.
#
# RIG_SLURM_PACKAGES and rig_install_slurm_packages: the single-node Slurm
# used by tests (scripts/slurm/start.sh), installed only when that runs.

RIG_PACKAGES=(
  cmake pkg-config gcc
  libopenmpi-dev openmpi-bin
  libmpich-dev mpich # the second MPI (the mpich preset); Open MPI stays the default mpicc
  libucx-dev ucx-utils
  libhwloc-dev hwloc
  libcunit1-dev libjansson-dev
  clang libclang-rt-14-dev clang-format
  graphviz groff-base
  iproute2 procps # simulated hosts (scripts/hosts.sh): ip netns, pkill
  python3-numpy python3-mpi4py python3-pytest # the rig Python package (python/)
  python3-venv python3-setuptools python3-wheel # its offline pip install (docs/python.md)
)

# Slurm 22.05 (controller, node daemon, client commands), munge for its
# authentication, and PMIx for `srun --mpi=pmix`: Slurm's mpi_pmix_v4.so
# dlopens the unversioned libpmix.so under /usr/lib/x86_64-linux-gnu/pmix2/lib,
# which only libpmix-dev ships (Open MPI 4.1 uses the same PMIx through its
# ext3x component).
RIG_SLURM_PACKAGES=(
  slurmctld slurmd slurm-client slurm-wlm-basic-plugins
  munge
  libpmix2 libpmix-dev
)

# The packages named as arguments (default: RIG_PACKAGES) that are not
# installed, one per line.
rig_missing_packages() {
  local pkg status
  if (($# == 0)); then
    set -- "${RIG_PACKAGES[@]}"
  fi
  for pkg in "$@"; do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    if [[ "$status" != "install ok installed" ]]; then
      printf '%s\n' "$pkg"
    fi
  done
}

# Installs the missing ones of the packages named as arguments with apt-get
# when root (one `apt-get update`, only when something is missing); otherwise
# names them and returns 1.
rig_install_package_list() {
  local missing
  mapfile -t missing < <(rig_missing_packages "$@")
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

# Installs the missing packages of RIG_PACKAGES (see rig_install_package_list).
rig_install_packages() {
  rig_install_package_list "${RIG_PACKAGES[@]}"
}

# Installs the missing packages of RIG_SLURM_PACKAGES.
rig_install_slurm_packages() {
  rig_install_package_list "${RIG_SLURM_PACKAGES[@]}"
}
