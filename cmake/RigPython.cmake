# The interpreter the package rig (python/) is tested with, and why not
# where it cannot be: RIG_PYTHON, RIG_PYTHON_WHY_NOT (empty when it can).
# Debian's interpreter first: python3-numpy and python3-mpi4py install
# into it, and a python3 earlier on PATH (pyenv's) may lack them.
find_program(RIG_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
find_program(RIG_PYTHON NAMES python3)
set(RIG_PYTHON_WHY_NOT "")
if(NOT RIG_PYTHON)
  set(RIG_PYTHON_WHY_NOT "no python3 found")
elseif(RIG_SANITIZE)
  # librig then needs the sanitizers' runtime loaded first, which an
  # interpreter does not do: the package is tested on the default build.
  set(RIG_PYTHON_WHY_NOT "librig is built with the sanitizers, whose runtime python3 does not load first")
else()
  execute_process(COMMAND ${RIG_PYTHON} -c "import numpy, mpi4py, pytest"
                  RESULT_VARIABLE rig_py_missing OUTPUT_QUIET ERROR_VARIABLE rig_py_why)
  if(rig_py_missing)
    string(STRIP "${rig_py_why}" rig_py_why)
    string(REGEX REPLACE ".*\n" "" rig_py_why "${rig_py_why}")
    set(RIG_PYTHON_WHY_NOT
        "${RIG_PYTHON} lacks numpy, mpi4py or pytest (${rig_py_why}); Debian's python3-numpy, python3-mpi4py and python3-pytest have them")
  endif()
endif()
