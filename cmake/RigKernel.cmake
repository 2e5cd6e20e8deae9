# rig_add_kernel(NAME SOURCE...): a host kernel, the image a program loads
# on the host or a cpu:N device (docs/embedding.md, "Kernels"): a module
# NAME.so (no "lib"), built against rig's headers alone (rig::kernel), so
# that it links nothing of librig or of MPI. Installed beside rigConfig.cmake:
#
#   find_package(rig REQUIRED COMPONENTS kernel)   # or find_package(rig)
#   rig_add_kernel(saxpy saxpy.c)                  # saxpy.so
function(rig_add_kernel name)
  if(NOT ARGN)
    message(FATAL_ERROR "rig_add_kernel(${name}): no source given")
  endif()
  add_library(${name} MODULE ${ARGN})
  target_link_libraries(${name} PRIVATE rig::kernel)
  set_target_properties(${name} PROPERTIES PREFIX "" C_STANDARD 17 C_STANDARD_REQUIRED ON)
endfunction()
