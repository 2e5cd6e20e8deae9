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
find_package(Threads REQUIRED)
