# The project's dependencies, found the standard way. A missing one stops
# configure with the Debian package that provides it.
find_package(PkgConfig)
if(NOT PKG_CONFIG_FOUND)
  message(FATAL_ERROR "pkg-config not found: install the Debian package pkg-config")
endif()

function(rig_require_pkg var module debian_package)
  pkg_check_modules(${var} QUIET IMPORTED_TARGET GLOBAL ${module})
  if(NOT ${var}_FOUND)
    message(FATAL_ERROR "${module} not found by pkg-config: install the Debian package ${debian_package}")
  endif()
  message(STATUS "Found ${module} ${${var}_VERSION}")
endfunction()

rig_require_pkg(JANSSON jansson libjansson-dev)
rig_require_pkg(HWLOC hwloc libhwloc-dev)
rig_require_pkg(UCX ucx libucx-dev)
if(RIG_TESTS)
  rig_require_pkg(CUNIT cunit libcunit1-dev)
endif()

find_package(MPI QUIET COMPONENTS C)
if(NOT MPI_C_FOUND)
  message(FATAL_ERROR "MPI (C) not found: install the Debian packages libopenmpi-dev and openmpi-bin")
endif()
message(STATUS "Found MPI ${MPI_C_VERSION}: ${MPIEXEC_EXECUTABLE}")
# The launcher's flags differ by family (tests, examples): Open MPI's
# mpirun binds ranks to cores and refuses more ranks than cores unless
# told; MPICH's hydra does neither. The recovery flag keeps the other ranks
# running when one dies, as the loss tests need. Told by the launcher's
# --version (hydra, MPICH's, says HYDRA).
execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE rig_mpiexec_version
                ERROR_QUIET RESULT_VARIABLE rig_mpiexec_rc)
if(rig_mpiexec_version MATCHES "HYDRA|MPICH|Intel")
  set(RIG_MPI_FAMILY mpich)
  set(RIG_MPIEXEC_FLAGS "")
  set(RIG_MPIEXEC_RECOVERY -disable-auto-cleanup)
else()
  set(RIG_MPI_FAMILY openmpi)
  set(RIG_MPIEXEC_FLAGS --oversubscribe --bind-to none)
  set(RIG_MPIEXEC_RECOVERY --enable-recovery)
endif()
message(STATUS "MPI family: ${RIG_MPI_FAMILY}")
find_package(Threads REQUIRED)
