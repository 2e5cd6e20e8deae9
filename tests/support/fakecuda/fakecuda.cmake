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

# The double's own test: it dlopens the library as a backend would.
add_executable(test_fakecuda_self ${CMAKE_CURRENT_LIST_DIR}/selftest.c)
target_include_directories(test_fakecuda_self PRIVATE ${CMAKE_CURRENT_LIST_DIR}
                                                      ${CMAKE_SOURCE_DIR}/backends/cuda)
target_compile_definitions(test_fakecuda_self PRIVATE _GNU_SOURCE)
target_link_libraries(test_fakecuda_self PRIVATE rig_warnings PkgConfig::CUNIT Threads::Threads
                                                 ${CMAKE_DL_LIBS})
add_dependencies(test_fakecuda_self fakecuda cuda_kernels)
add_test(NAME fakecuda-self COMMAND test_fakecuda_self)
set_tests_properties(fakecuda-self PROPERTIES
  ENVIRONMENT "RIG_CUDA_LIBRARY=$<TARGET_FILE:fakecuda>;RIG_TEST_CUDA_KERNELS=${RIG_CUDA_FIXTURE_SO};RIG_TEST_CUDA_CUBIN=${RIG_CUDA_FIXTURE_CUBIN};RIG_TEST_CUDA_PTX=${RIG_CUDA_FIXTURE_PTX}"
  TIMEOUT 120 LABELS cuda)
if(TARGET cuda_kernels_nvcc)
  add_dependencies(test_fakecuda_self cuda_kernels_nvcc)
endif()
