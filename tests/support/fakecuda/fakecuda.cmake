# fakecuda: a test double of the CUDA driver API (libcuda) for machines
# without a GPU, built as libfakecuda.so; tests select it with
# RIG_CUDA_LIBRARY. Included from tests/CMakeLists.txt.
file(GLOB fakecuda_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.c)
list(REMOVE_ITEM fakecuda_sources ${CMAKE_CURRENT_LIST_DIR}/selftest.c)
add_library(fakecuda SHARED ${fakecuda_sources})
target_include_directories(fakecuda PRIVATE ${CMAKE_CURRENT_LIST_DIR}
                                            ${CMAKE_SOURCE_DIR}/backends/cuda
                                            ${CMAKE_SOURCE_DIR}/include)
# Only the CUDA names and the test hooks are exported.
set_target_properties(fakecuda PROPERTIES C_VISIBILITY_PRESET hidden)
target_link_libraries(fakecuda PRIVATE rig_warnings Threads::Threads ${CMAKE_DL_LIBS})

