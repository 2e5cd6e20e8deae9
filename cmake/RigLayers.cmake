# The layers of librig (docs/internals.md): one object library each, that
# sees only the public headers of its own layer and of the layers below it
# (symbolic links in build/layers/<layer>/rig/), the shared helpers of
# src/base (as base/), and its own folder. An include of a higher layer's
# header does not compile; tests/layers checks the symbols each layer's
# objects need against the layers below it.
#
# rig_layer(NAME [SOURCES ...] HEADERS ... [DEPS layers below] [LINK libraries]
#           [INCLUDES extra private include directories])
function(rig_layer name)
  cmake_parse_arguments(L "" "" "SOURCES;HEADERS;DEPS;LINK;INCLUDES" ${ARGN})
  add_library(${name} OBJECT ${L_SOURCES})
  set(dir ${CMAKE_BINARY_DIR}/layers/${name})
  file(REMOVE_RECURSE ${dir})
  file(MAKE_DIRECTORY ${dir}/rig)
  foreach(header IN LISTS L_HEADERS)
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/include/rig/${header} ${dir}/rig/${header} SYMBOLIC)
  endforeach()
  file(CREATE_LINK ${PROJECT_SOURCE_DIR}/src/base ${dir}/base SYMBOLIC)
  # The base kit's array is public (rig_array.h), and every layer's.
  if(NOT "rig_array.h" IN_LIST L_HEADERS)
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/include/rig/rig_array.h ${dir}/rig/rig_array.h SYMBOLIC)
  endif()
  target_include_directories(${name} PRIVATE ${dir} ${L_INCLUDES})
  target_compile_definitions(${name} PRIVATE _GNU_SOURCE)
  set_target_properties(${name} PROPERTIES C_VISIBILITY_PRESET hidden)
  target_link_libraries(${name} PRIVATE rig_warnings ${L_DEPS} ${L_LINK})
  set_property(GLOBAL APPEND PROPERTY RIG_LAYERS ${name})
  set_property(GLOBAL PROPERTY RIG_LAYER_DEPS_${name} "${L_DEPS}")
endfunction()

# Links every layer's objects and the provider table into `target` (librig
# itself; tests and benchmarks that reach past the public headers, such as
# the polled driver that runs host code).
function(rig_link_layers target)
  get_property(layers GLOBAL PROPERTY RIG_LAYERS)
  target_link_libraries(${target} PRIVATE ${layers} rig_providers)
endfunction()
