# Install rules (docs/install.md).
#   cmake --install build/release [--prefix P]:
#     bin/nbody                                  component cli
#     lib/libnbody_lib.a, include/nbody/*.hpp,   component development
#     lib/cmake/nbody/nbody{Config,ConfigVersion,Targets}.cmake: find_package(nbody) gives
#     nbody::nbody, with the dependencies the library was built with found again
#   pip install . (scikit-build-core, SKBUILD set): the python component (the module, in
#   src/python) and the cli component, whose command goes to the environment's bin/
#   (SKBUILD_SCRIPTS_DIR); pyproject.toml installs only those two.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

if(SKBUILD)
  set(_nbody_bindir ${SKBUILD_SCRIPTS_DIR})
else()
  set(_nbody_bindir ${CMAKE_INSTALL_BINDIR})
endif()
install(TARGETS nbody RUNTIME DESTINATION ${_nbody_bindir} COMPONENT cli)

set(_nbody_cmakedir ${CMAKE_INSTALL_LIBDIR}/cmake/nbody)
install(TARGETS nbody_lib EXPORT nbodyTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/nbody DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  COMPONENT development)
install(EXPORT nbodyTargets NAMESPACE nbody:: DESTINATION ${_nbody_cmakedir} COMPONENT development)
# The config file finds again what nbody_lib links (its INTERFACE_LINK_LIBRARIES name their
# imported targets): fmt always, the optional ones as this build found them.
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/nbodyConfig.cmake.in
  ${PROJECT_BINARY_DIR}/nbodyConfig.cmake INSTALL_DESTINATION ${_nbody_cmakedir})
# 0.x: a new minor version may change the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/nbodyConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/nbodyConfig.cmake ${PROJECT_BINARY_DIR}/nbodyConfigVersion.cmake
  DESTINATION ${_nbody_cmakedir} COMPONENT development)
