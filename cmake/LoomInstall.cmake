# Install rules (docs/installing.md), included by the top-level CMakeLists.txt once the
# product targets exist.
#
# Three components, so a game ships only what it runs:
#   runtime  libloom.so (with its SONAME links), include/loom/loom.h, the CMake package
#            (find_package(Loom): Loom::loom) and loom.pc: what a game ships and builds against.
#   tools    the `loom` compiler command line and `loom-module`, and the editor where it is
#            built: what a developer runs.
#   cpp      the C++ API with the compiler: libloom_cpp.so, its headers (program.h,
#            aot_module.h and the vocabulary they use, cmake/LoomCppHeaders.cmake), Loom::cpp
#            (find_package(Loom COMPONENTS cpp)) and loom-cpp.pc. Links LLVM.
# `cmake --install build --prefix P --component runtime` installs the runtime alone; CPack
# makes a .deb of each (end of this file).
include(CMakePackageConfigHelpers)

set(LOOM_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/Loom)
# The package's version is the C ABI's (libloom's VERSION from loom.h, 3.1.0 -> SOVERSION 3), not the
# product's: SameMajorVersion then means "links against the same libloom.so.N".
get_target_property(LOOM_ABI_VERSION loom_plugin VERSION)

# ---- runtime ---------------------------------------------------------------------------------

# Consumers name the C ABI runtime Loom::loom; the target `loom` is the command line here.
set_target_properties(loom_plugin PROPERTIES EXPORT_NAME loom)
install(TARGETS loom_plugin EXPORT LoomTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT runtime
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# loom.h includes only the Vulkan and C standard headers, loom.hpp only loom.h and the C++
# standard library, so they install alone.
install(FILES ${PROJECT_SOURCE_DIR}/engine_plugin/include/loom/loom.h
              ${PROJECT_SOURCE_DIR}/engine_plugin/include/loom/loom.hpp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/loom COMPONENT runtime)

install(EXPORT LoomTargets NAMESPACE Loom:: FILE LoomTargets.cmake
  DESTINATION ${LOOM_INSTALL_CMAKEDIR} COMPONENT runtime)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/LoomConfig.cmake.in
  ${PROJECT_BINARY_DIR}/install/LoomConfig.cmake
  INSTALL_DESTINATION ${LOOM_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/install/LoomConfigVersion.cmake
  VERSION ${LOOM_ABI_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/install/LoomConfig.cmake
              ${PROJECT_BINARY_DIR}/install/LoomConfigVersion.cmake
  DESTINATION ${LOOM_INSTALL_CMAKEDIR} COMPONENT runtime)

# loom.pc finds its prefix from its own place (${pcfiledir}), so `--prefix P` at install time
# and a moved install both work; an absolute CMAKE_INSTALL_LIBDIR or INCLUDEDIR is used as is.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(LOOM_PC_PREFIX ${CMAKE_INSTALL_PREFIX})
  set(LOOM_PC_LIBDIR ${CMAKE_INSTALL_LIBDIR})
else()
  file(RELATIVE_PATH pc_to_prefix /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
  string(REGEX REPLACE "/$" "" pc_to_prefix "${pc_to_prefix}")
  set(LOOM_PC_PREFIX "\${pcfiledir}/${pc_to_prefix}")
  set(LOOM_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(LOOM_PC_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR})
else()
  set(LOOM_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/loom.pc.in ${PROJECT_BINARY_DIR}/install/loom.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/install/loom.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT runtime)

# ---- cpp: the C++ API -------------------------------------------------------------------------

# Its own export set and targets file, read by LoomConfig.cmake only when the cpp component is
# asked for, so a runtime-only install never names libloom_cpp.so.
install(TARGETS loom_cpp EXPORT LoomCppTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT cpp NAMELINK_COMPONENT cpp
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# LLVM where it is not in a system folder.
set_target_properties(loom_cpp PROPERTIES INSTALL_RPATH_USE_LINK_PATH TRUE)
install(EXPORT LoomCppTargets NAMESPACE Loom:: FILE LoomCppTargets.cmake
  DESTINATION ${LOOM_INSTALL_CMAKEDIR} COMPONENT cpp)
# The headers, each with its includes renamed to the installed names (LoomInstallCppHeader.cmake).
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(loom_cpp_header_destination "${CMAKE_INSTALL_INCLUDEDIR}/loom")
else()
  set(loom_cpp_header_destination "\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_INCLUDEDIR}/loom")
endif()
include(LoomCppHeaders)
set(loom_cpp_headers ${LOOM_CPP_HEADERS})
while(loom_cpp_headers)
  list(POP_FRONT loom_cpp_headers name source)
  install(CODE "
    set(SOURCE \"${PROJECT_SOURCE_DIR}/${source}\")
    set(NAME ${name})
    set(STAGING \"${PROJECT_BINARY_DIR}/install/cpp_headers\")
    set(DESTINATION \"${loom_cpp_header_destination}\")
    include(\"${PROJECT_SOURCE_DIR}/cmake/LoomInstallCppHeader.cmake\")"
    COMPONENT cpp)
endwhile()
get_target_property(LOOM_CPP_VERSION loom_cpp VERSION)
configure_file(${PROJECT_SOURCE_DIR}/cmake/loom-cpp.pc.in ${PROJECT_BINARY_DIR}/install/loom-cpp.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/install/loom-cpp.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT cpp)

# ---- tools -----------------------------------------------------------------------------------

# They link Loom statically and read nothing of the source tree at run time; libloom.so finds
# an installed `loom` as <libdir>/../bin/loom to compile graph documents (hot reload).
set(tools loom loom-module)
# The editor is one executable (shaders built in, fonts from the system, a document's mesh
# paths relative to the document), so it runs from an install as it does from the build.
if(TARGET loom-editor)
  list(APPEND tools loom-editor)
endif()
# Keep the run path to libraries outside the system folders (LLVM where it is not in one).
set_target_properties(${tools} PROPERTIES INSTALL_RPATH_USE_LINK_PATH TRUE)
install(TARGETS ${tools} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT tools)

# ---- packages --------------------------------------------------------------------------------

# `cpack -G DEB --config build/CPackConfig.cmake`: one .deb per component, loom-runtime and
# loom-tools, installing under /usr; dependencies from the binaries (dpkg-shlibdeps).
set(CPACK_PACKAGE_NAME loom)
set(CPACK_PACKAGE_VENDOR "Loom")
set(CPACK_PACKAGE_CONTACT "Loom maintainers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Loom: node-graph simulation kernels for the CPU and Vulkan")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON) # a RelWithDebInfo libloom.so is 80 MB with its debug info
set(CPACK_COMPONENTS_ALL runtime tools cpp)
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION "libloom.so (the C ABI runtime), loom.h, the CMake package and loom.pc")
set(CPACK_COMPONENT_TOOLS_DESCRIPTION "the loom compiler command line and loom-module")
set(CPACK_COMPONENT_CPP_DESCRIPTION "libloom_cpp.so (the C++ API with the compiler), its headers, Loom::cpp and loom-cpp.pc")
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
include(CPack)
