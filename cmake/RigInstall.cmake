# cmake --install: the library, its headers, progrun, rig.pc, rig-kernel.pc
# and the CMake package config that find_package(rig) reads (with
# rig_add_kernel). Everything installed is
# relocatable (cmake --install --prefix anywhere) and names no build path:
# rigTargets.cmake finds the prefix from its own place, rig.pc from
# ${pcfiledir}, progrun its library through $ORIGIN.
include(CMakePackageConfigHelpers)

# progrun finds librig beside it, wherever the prefix is.
file(RELATIVE_PATH _rig_bin_to_lib ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_LIBDIR})
set_target_properties(progrun PROPERTIES INSTALL_RPATH "$ORIGIN/${_rig_bin_to_lib}")

# The headers' install directory comes from rig's INSTALL_INTERFACE include
# directory (CMakeLists.txt).
install(TARGETS rig EXPORT rigTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS progrun RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/rig DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")

# rig::kernel: the headers a host kernel includes (rig/rig_host_abi.h),
# with nothing to link; rig_add_kernel builds a kernel with it.
add_library(rig_kernel INTERFACE)
add_library(rig::kernel ALIAS rig_kernel)
target_include_directories(rig_kernel INTERFACE $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
                                                $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
set_target_properties(rig_kernel PROPERTIES EXPORT_NAME kernel)
install(TARGETS rig_kernel EXPORT rigTargets)

install(EXPORT rigTargets NAMESPACE rig:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/rig)
install(FILES cmake/RigKernel.cmake DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/rig)
configure_package_config_file(cmake/rigConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/rigConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/rig)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/rigConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/rigConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/rigConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/rig)

# rig.pc: the prefix relative to the .pc file itself (pkg-config's
# ${pcfiledir}), so that it holds wherever the tree is installed; absolute
# directories stay absolute.
file(RELATIVE_PATH RIG_PC_TO_PREFIX ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" RIG_PC_TO_PREFIX "${RIG_PC_TO_PREFIX}")
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(RIG_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
  set(RIG_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(RIG_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(RIG_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
# MPI as the MPI CMake found gives it (Open MPI, MPICH, Intel MPI, Cray MPI
# alike; no MPI ships one .pc name): rig/rig_job.h includes mpi.h and an
# application that embeds a job calls MPI itself, so MPI's compile flags go
# into Cflags and its libraries into Libs. A library path becomes -L DIR
# -lNAME; anything else (a linker flag, a framework) is kept as it is.
function(rig_pc_libs out)
  set(flags "")
  foreach(lib IN LISTS ARGN)
    if(lib MATCHES "^/.*/lib([^/]+)\\.(so|a|dylib)(\\.[0-9.]*)?$")
      get_filename_component(dir "${lib}" DIRECTORY)
      list(APPEND flags "-L${dir}" "-l${CMAKE_MATCH_1}")
    elseif(lib MATCHES "^-" OR IS_ABSOLUTE "${lib}")
      list(APPEND flags "${lib}")
    elseif(lib)
      list(APPEND flags "-l${lib}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES flags)
  string(JOIN " " flags ${flags})
  set(${out} "${flags}" PARENT_SCOPE)
endfunction()
set(rig_pc_mpi_cflags ${MPI_C_COMPILE_OPTIONS})
foreach(def IN LISTS MPI_C_COMPILE_DEFINITIONS)
  list(APPEND rig_pc_mpi_cflags "-D${def}")
endforeach()
foreach(dir IN LISTS MPI_C_INCLUDE_DIRS)
  list(APPEND rig_pc_mpi_cflags "-I${dir}")
endforeach()
list(REMOVE_DUPLICATES rig_pc_mpi_cflags)
string(JOIN " " RIG_PC_MPI_CFLAGS ${rig_pc_mpi_cflags})
separate_arguments(rig_pc_mpi_link_flags UNIX_COMMAND "${MPI_C_LINK_FLAGS}")
rig_pc_libs(RIG_PC_MPI_LIBS ${rig_pc_mpi_link_flags} ${MPI_C_LIBRARIES})
# librig's own dependencies are private to the shared library: listed for
# a static link only (pkg-config --static), as their pkg-config gave them.
rig_pc_libs(RIG_PC_LIBS_PRIVATE ${JANSSON_LDFLAGS} ${HWLOC_LDFLAGS} ${UCX_LDFLAGS}
            ${CMAKE_THREAD_LIBS_INIT} ${CMAKE_DL_LIBS})
# rig-kernel.pc: a host kernel's flags, the headers alone: no MPI, no
# library (pkg-config --cflags rig-kernel). The installed pair is made
# aside (pkgconfig-install/): its folders are the prefix's, not the build's.
set(RIG_PC_PREFIX "\${pcfiledir}/${RIG_PC_TO_PREFIX}")
configure_file(cmake/rig.pc.in ${CMAKE_CURRENT_BINARY_DIR}/pkgconfig-install/rig.pc @ONLY)
configure_file(cmake/rig-kernel.pc.in ${CMAKE_CURRENT_BINARY_DIR}/pkgconfig-install/rig-kernel.pc
               @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/pkgconfig-install/rig.pc
              ${CMAKE_CURRENT_BINARY_DIR}/pkgconfig-install/rig-kernel.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
# The build tree's own pair (PKG_CONFIG_PATH=build/default): librig where
# the build puts it, the headers in the sources, which the build does not
# copy; absolute, as a build tree does not move.
set(RIG_PC_PREFIX "${CMAKE_CURRENT_BINARY_DIR}")
set(RIG_PC_LIBDIR "\${prefix}")
set(RIG_PC_INCLUDEDIR "${CMAKE_CURRENT_SOURCE_DIR}/include")
configure_file(cmake/rig.pc.in ${CMAKE_CURRENT_BINARY_DIR}/rig.pc @ONLY)
configure_file(cmake/rig-kernel.pc.in ${CMAKE_CURRENT_BINARY_DIR}/rig-kernel.pc @ONLY)
