"""Programs on this machine: inputs as arrays, runs, times."""
import os

import numpy as np
import pytest
import rig
from conftest import EXAMPLES

TRIPS = 4


def expected_y(x, trips):
    """What saxpy.json computes (examples/README.md): y = x, then each trip
    t: y = 2x + y, x = 1.5x + t. Exact in float32 for these x."""
    x, y = x.astype(np.float64), x.astype(np.float64)
    for t in range(trips):
        y = 2 * x + y
        x = 1.5 * x + t
    return y.astype(np.float32)


@pytest.fixture
def saxpy():
    with rig.Program(rig.Description.read(os.path.join(EXAMPLES, "saxpy.json"))) as p:
        yield p


def test_devices_are_mapped_by_arch(saxpy):
    assert saxpy.devices == ["host", "cpu:0"]


def test_runs_compute_saxpy_byte_for_byte(saxpy):
    x = (np.arange(1024) % 17 - 3).astype(np.float32)
    saxpy.set_input(0, x)
    times = saxpy.run(3, ints=[TRIPS])
    assert len(times) == 3 and all(t > 0 for t in times)
    assert saxpy.input(1, np.float32).tobytes() == expected_y(x, TRIPS).tobytes()


def test_an_input_is_a_view_of_its_memory_not_a_copy(saxpy):
    x = saxpy.input(0, np.float32)
    x[:] = np.arange(1024, dtype=np.float32)  # written in place, no set_input
    saxpy.run(1, ints=[1])
    y = saxpy.input(1, np.float32)
    assert np.shares_memory(y, saxpy.input(1))
    assert y.tobytes() == expected_y(np.arange(1024, dtype=np.float32), 1).tobytes()


def test_named_devices_stand_for_the_descriptions():
    d = rig.Description.read(os.path.join(EXAMPLES, "saxpy.json"))
    with rig.Program(d, devices=["host", "cpu:1"]) as p:
        assert p.devices == ["host", "cpu:1"]


def test_a_device_of_another_arch_raises_the_loads_message():
    d = rig.Description.read(os.path.join(EXAMPLES, "saxpy.json"))
    with pytest.raises(rig.RigError) as e:
        rig.Program(d, devices=["cpu:0", "cpu:1"])
    assert str(e.value) == 'device 0: cpu:0 is "cpu-x86_64", not "x86_64"'


def test_more_ints_than_the_program_has_are_refused(saxpy):
    with pytest.raises(rig.RigError) as e:
        saxpy.run(1, ints=[1, 2, 3])
    assert str(e.value) == "3 ints for a program of 2"


def test_the_summary_line_is_progruns():
    assert rig.summary([45000, 64200, 98100]) == (
        "runs 3, min 45.0 us, median 64.2 us, mean 69.1 us, p99 98.1 us, max 98.1 us, "
        "stddev 22.0 us per run")
