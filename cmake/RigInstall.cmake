# cmake --install: the library, its headers, progrun, rig.pc and the CMake
# package config that find_package(rig) reads. Everything installed is
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

install(EXPORT rigTargets NAMESPACE rig:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/rig)
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
configure_file(cmake/rig.pc.in ${CMAKE_CURRENT_BINARY_DIR}/rig.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/rig.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
