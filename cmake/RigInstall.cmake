# cmake --install: the library, its headers, progrun, rig.pc and the CMake
# package config that find_package(rig) reads.
include(CMakePackageConfigHelpers)

install(TARGETS rig EXPORT rigTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
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

configure_file(cmake/rig.pc.in ${CMAKE_CURRENT_BINARY_DIR}/rig.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/rig.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
