"""Description.dot is progrun dot's graph, byte for byte."""
import glob
import os
import subprocess

import pytest
import rig
from conftest import EXAMPLES, PROGRUN
from test_dump import EVERY_LINE


def progrun_dot(path, *flags):
    return subprocess.run([PROGRUN, "dot", path, *flags], capture_output=True, text=True,
                          check=True, timeout=60).stdout


@pytest.mark.parametrize("name", sorted(
    os.path.basename(p) for p in glob.glob(os.path.join(EXAMPLES, "*.json"))
    if "machines" not in open(p).read()))
def test_dot_of_each_example_is_progruns(name):
    path = os.path.join(EXAMPLES, name)
    d = rig.Description.read(path)
    assert d.dot() == progrun_dot(path)
    assert d.dot(all=True) == progrun_dot(path, "--all")


def test_dot_draws_every_kind_of_step_as_progrun_does(tmp_path):
    path = str(tmp_path / "every.bin")
    d = rig.Description.of_dict(EVERY_LINE)
    d.write(path)
    assert d.dot().startswith("digraph program {\n")
    assert d.dot() == progrun_dot(path)
    assert d.dot(all=True) == progrun_dot(path, "--all")
