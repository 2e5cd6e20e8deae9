# Warnings as errors for the project's own code, and the sanitizer flags of
# the asan preset, as an interface target every project target links.
add_library(rig_warnings INTERFACE)
target_compile_options(rig_warnings INTERFACE -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes
                                              -Wmissing-prototypes -Wno-missing-field-initializers)

if(RIG_SANITIZE)
  set(RIG_SAN_FLAGS -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_compile_options(${RIG_SAN_FLAGS})
  add_link_options(${RIG_SAN_FLAGS})
endif()
