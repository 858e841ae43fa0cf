# loom_target_headers(<target> <PUBLIC|PRIVATE|INTERFACE> <path>...)
#
# Includes name headers from the repository root ("compiler/ir/inst.h"), yet no target sees
# the whole root. Each target gets folders of its own in the build tree,
# include_roots/<target>/<scope>/, holding symbolic links to the source folders (or single
# headers) it owns, at their repository paths. A header of another part is found only through
# a link dependency that exposes it, so an include the link graph does not allow fails to
# compile. PUBLIC: targets that link this one see the paths too; PRIVATE: its own sources only;
# INTERFACE: only what links it (header-only targets).
# docs/ARCHITECTURE.md's layer table is the rule; tools/check_layers.py holds every include
# edge to it, and the link graph here must stay within it.
function(loom_target_headers target scope)
  string(TOLOWER ${scope} scope_folder)
  set(root ${CMAKE_BINARY_DIR}/include_roots/${target}/${scope_folder})
  foreach(path ${ARGN})
    if(NOT EXISTS ${CMAKE_SOURCE_DIR}/${path})
      message(FATAL_ERROR "loom_target_headers(${target}): no ${path} in the source tree")
    endif()
    set(link ${root}/${path})
    get_filename_component(parent ${link} DIRECTORY)
    file(MAKE_DIRECTORY ${parent})
    file(CREATE_LINK ${CMAKE_SOURCE_DIR}/${path} ${link} SYMBOLIC)
  endforeach()
  target_include_directories(${target} ${scope} ${root})
endfunction()
