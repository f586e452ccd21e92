# The installable package: one library (librdmaproxy.so and librdmaproxy.a, made from the
# library modules' objects), its public headers, the `rdmaproxy` CLI, a CMake package
# (find_package(rdmaproxy) -> rdmaproxy::rdmaproxy, rdmaproxy::rdmaproxy_static) and a
# pkg-config file; `cpack -G DEB` turns the same install rules into Debian packages.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
find_package(Threads REQUIRED)

# Library modules, in dependency order; a module that joins the library adds itself here.
set(RDMAPROXY_LIBRARY_MODULES rxp_abi rxp_engine rxp_sysfs rxp_capi)

add_library(rdmaproxy_shared SHARED)
add_library(rdmaproxy_static STATIC)
foreach(lib rdmaproxy_shared rdmaproxy_static)
  foreach(module ${RDMAPROXY_LIBRARY_MODULES})
    target_sources(${lib} PRIVATE $<TARGET_OBJECTS:${module}>)
  endforeach()
  target_link_libraries(${lib} PUBLIC fmt::fmt Threads::Threads)
  target_include_directories(${lib} PUBLIC
    $<BUILD_INTERFACE:${RDMAPROXY_ROOT}>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/rdmaproxy>)
  target_compile_features(${lib} PUBLIC cxx_std_20)
endforeach()
set_target_properties(rdmaproxy_shared PROPERTIES
  OUTPUT_NAME rdmaproxy EXPORT_NAME rdmaproxy
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}
  LINK_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/librdmaproxy.map)
# Only the C and C++ APIs are exported (librdmaproxy.map says why).
target_link_options(rdmaproxy_shared PRIVATE
  "LINKER:--version-script=${CMAKE_CURRENT_LIST_DIR}/librdmaproxy.map")
set_target_properties(rdmaproxy_static PROPERTIES
  OUTPUT_NAME rdmaproxy EXPORT_NAME rdmaproxy_static)

# Public headers: the C API (rdmaproxy/rdmaproxy.h), the C++ API (rdmaproxy/sentry.h,
# rdmaproxy/embedder.h, rdmaproxy/engine.h, ..., sysfs/vfs.h and the rest of sysfs/) and the
# abi/ headers they include. Test helpers and the C API's internals stay out.
foreach(dir abi rdmaproxy sysfs)
  install(DIRECTORY ${RDMAPROXY_ROOT}/${dir}/
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/rdmaproxy/${dir}
    COMPONENT Development
    FILES_MATCHING PATTERN "*.h"
    PATTERN "testing" EXCLUDE
    PATTERN "c_handles.h" EXCLUDE
    PATTERN "c_api_internal.h" EXCLUDE)
endforeach()

install(TARGETS rdmaproxy_shared EXPORT rdmaproxyTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Runtime NAMELINK_COMPONENT Development)
install(TARGETS rdmaproxy_static EXPORT rdmaproxyTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Development)
install(TARGETS rdmaproxy RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT Runtime)

set(config_dir ${CMAKE_INSTALL_LIBDIR}/cmake/rdmaproxy)
install(EXPORT rdmaproxyTargets NAMESPACE rdmaproxy:: DESTINATION ${config_dir}
  COMPONENT Development)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/templates/rdmaproxyConfig.cmake.in
  ${CMAKE_BINARY_DIR}/rdmaproxyConfig.cmake INSTALL_DESTINATION ${config_dir})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/rdmaproxyConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/rdmaproxyConfig.cmake
              ${CMAKE_BINARY_DIR}/rdmaproxyConfigVersion.cmake
  DESTINATION ${config_dir} COMPONENT Development)

# The .pc file finds its prefix relative to itself, so an installed tree can move.
file(RELATIVE_PATH RDMAPROXY_PC_TO_PREFIX /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
configure_file(${CMAKE_CURRENT_LIST_DIR}/templates/rdmaproxy.pc.in
  ${CMAKE_BINARY_DIR}/rdmaproxy.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/rdmaproxy.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT Development)

# Debian packages: `rdmaproxy` (the CLI and the shared library) and `rdmaproxy-dev` (headers,
# static library, CMake and pkg-config files).
set(CPACK_PACKAGE_NAME rdmaproxy)
set(CPACK_PACKAGE_VENDOR "rdmaproxy developers")
set(CPACK_PACKAGE_CONTACT "rdmaproxy developers <rdmaproxy@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_GENERATOR DEB)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL Runtime Development)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME rdmaproxy)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_NAME rdmaproxy-dev)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_DEPENDS "rdmaproxy (= ${PROJECT_VERSION}), libfmt-dev")
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_SECTION libdevel)
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/packages)
include(CPack)
