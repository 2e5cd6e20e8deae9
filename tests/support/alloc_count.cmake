# The allocation count (alloc_count.h), one library for the suites and the
# benchmarks that count: included from tests/ and bench/, made once. It
# defines malloc, so it is a library of its own, linked only where counted
# (every binary calls malloc).
include_guard(GLOBAL)
add_library(rig_alloc_count STATIC ${CMAKE_CURRENT_LIST_DIR}/alloc_count.c)
target_include_directories(rig_alloc_count PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_compile_definitions(rig_alloc_count PRIVATE _GNU_SOURCE)
target_link_libraries(rig_alloc_count PRIVATE rig_warnings)
