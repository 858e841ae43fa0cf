# Included by `cmake --install` for the cpp component (cmake/LoomInstall.cmake) with SOURCE (a
# header of the C++ API), NAME (its installed name), STAGING (a folder of the build tree) and
# DESTINATION (include/loom under the install prefix).
#
# Installs SOURCE as DESTINATION/NAME with its includes of the runtime's headers renamed to the
# names they are installed under (<loom/scalar.h> for "runtime/common/scalar.h"), read at
# install time so the copy is never older than the source. Any other include of this
# repository is an error: an installed header must not name a path that exists only here.
file(READ ${SOURCE} loom_header_text)
string(REGEX REPLACE "#include \"runtime/common/(error|scalar|kernel_abi)\\.h\""
       "#include <loom/\\1.h>" loom_header_text "${loom_header_text}")
string(REGEX MATCH "#include \"[^\"]*\"" loom_header_internal "${loom_header_text}")
if(loom_header_internal)
  message(FATAL_ERROR "${SOURCE}: '${loom_header_internal}' names a header that is not installed")
endif()
file(WRITE ${STAGING}/${NAME} "${loom_header_text}")
# file(INSTALL) honours DESTDIR and --prefix and lists the file in install_manifest.txt.
file(INSTALL DESTINATION ${DESTINATION} TYPE FILE FILES ${STAGING}/${NAME})
