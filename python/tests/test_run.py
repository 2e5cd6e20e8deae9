"""rig.run_file: a description file run in one call (librig's
rig_run_file), as progrun runs it alone."""
import os
import subprocess

import numpy as np
import pytest
import rig
from conftest import EXAMPLES, PROGRUN

SAXPY = os.path.join(EXAMPLES, "saxpy.json")


def saxpy_expect(x, trips):
    """What a run of saxpy.json makes of x: y = x, then each trip t:
    y = 2x + y, x = 1.5x + t (in float32, as the kernels)."""
    x, y = x.astype(np.float32), x.astype(np.float32)
    for t in range(trips):
        y = np.float32(2) * x + y
        x = x * np.float32(1.5) + np.float32(t)
    return y


@pytest.fixture
def x_file(tmp_path):
    x = (np.arange(1024) % 97 - 40).astype(np.float32)
    path = tmp_path / "x.bin"
    x.tofile(path)
    return path, x


def test_saxpy_writes_what_its_runs_compute(tmp_path, x_file):
    path, x = x_file
    y = tmp_path / "y.bin"
    rig.run_file(SAXPY, runs=3, ints=[4], inputs={0: path}, outputs={1: y})
    assert np.array_equal(np.fromfile(y, np.float32), saxpy_expect(x, 4))


def test_its_output_is_progruns(tmp_path, x_file):
    path, _ = x_file
    mine, theirs = tmp_path / "mine.bin", tmp_path / "theirs.bin"
    rig.run_file(SAXPY, runs=2, ints=[3], inputs={0: str(path)}, outputs={1: str(mine)})
    subprocess.run([PROGRUN, "run", SAXPY, "-q", "--runs", "2", "--ints", "3", "--input",
                    f"0={path}", "--output", f"1={theirs}"], check=True, timeout=120)
    assert mine.read_bytes() == theirs.read_bytes()


def test_run_is_each_runs_index(tmp_path, x_file):
    path, x = x_file
    y = tmp_path / "y.bin"
    rig.run_file(SAXPY, runs=3, ints=["run"], inputs={0: path}, outputs={1: y})
    assert np.array_equal(np.fromfile(y, np.float32), saxpy_expect(x, 2))  # run 2's


def test_it_gives_each_runs_time():
    times = rig.run_file(SAXPY, runs=4)
    assert len(times) == 4 and all(t > 0 for t in times)


def test_named_devices_stand_for_the_descriptions(tmp_path, x_file):
    path, x = x_file
    y = tmp_path / "y.bin"
    rig.run_file(SAXPY, ints=[2], inputs={0: path}, outputs={1: y}, devices=["host", "cpu:1"])
    assert np.array_equal(np.fromfile(y, np.float32), saxpy_expect(x, 2))


def test_a_missing_input_file_raises_naming_it(tmp_path):
    missing, y = tmp_path / "none.bin", tmp_path / "y.bin"
    with pytest.raises(rig.RigError) as e:
        rig.run_file(SAXPY, inputs={0: missing}, outputs={1: y})
    assert e.value.status == "RIG_ESYS"
    assert str(e.value) == f"input 0={missing}: cannot read {missing}: No such file or directory"
    assert not y.exists()


def test_an_output_whose_folder_is_missing_raises_before_any_run(tmp_path):
    y = tmp_path / "no-dir" / "y.bin"
    with pytest.raises(rig.RigError) as e:
        rig.run_file(SAXPY, outputs={1: y})
    assert str(e.value) == f"cannot write {y}: its folder {y.parent} does not exist"


def test_a_device_name_that_does_not_open_raises_naming_the_field():
    with pytest.raises(rig.RigError) as e:
        rig.run_file(SAXPY, devices=["host", "nope"])
    assert e.value.status == "RIG_EINVAL"
    assert str(e.value) == f"{SAXPY}: devices: nope: no such device"


def test_an_int_of_no_kind_raises():
    with pytest.raises(rig.RigError) as e:
        rig.run_file(SAXPY, ints=["trip"])
    assert str(e.value) == "ints: 'trip' is not a number, run or rank"
