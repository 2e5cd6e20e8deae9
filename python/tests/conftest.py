"""Where the build tree is: RIG_TEST_BINARY_DIR (CTest's), else the one
the rig package was imported from (build/default/python/rig)."""
import os

import pytest
import rig

BUILD = os.environ.get("RIG_TEST_BINARY_DIR") or os.path.normpath(
    os.path.join(os.path.dirname(rig.__file__), "..", ".."))
EXAMPLES = os.path.join(BUILD, "examples")
PROGRUN = os.path.join(BUILD, "progrun")


@pytest.fixture
def examples():
    return EXAMPLES
