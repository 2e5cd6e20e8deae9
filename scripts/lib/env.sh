# shellcheck shell=bash
# The environment every script runs in: network traffic stays on loopback
# (UCX and Open MPI), and mpirun may run as root (containers, CI).

export UCX_NET_DEVICES=lo
export OMPI_MCA_btl_tcp_if_include=lo
export OMPI_MCA_oob_tcp_if_include=lo
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# shellcheck source=scripts/lib/ompi.sh
source "$(dirname "${BASH_SOURCE[0]}")/ompi.sh"
