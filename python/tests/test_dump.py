"""Description.dump is progrun dump's listing, byte for byte."""
import glob
import os
import subprocess

import pytest
import rig
from conftest import EXAMPLES, PROGRUN

# Every kind of line: each part, slot, leaf and value, holes, long bytes.
EVERY_LINE = {
    "devices": ["x86_64", "cpu x", {"hex": "660a"}],
    "memory": [{"Alloc": {"device": 0, "kind": "Pinned", "bytes": 4096, "copies": "Two"}},
               {"Rail": {"rail": 3, "area": "Counts"}},
               {"Alloc": {"device": 0, "kind": "Device", "bytes": 1, "copies": "One",
                          "init": {"bytes": "00" * 300, "holes": [
                              {"at": 0, "width": "W64",
                               "terms": [[{"Address": {"memory": 2, "on": 0}}, 1],
                                         [{"Handle": 1}, 2]], "add": 3, "shift": 1}]}}}],
    "images": [{"device": 0, "binary": {"bytes": "7f454c46", "holes": [
        {"at": 0, "width": "W32"}]}}],
    "inputs": [{"device": 0, "bytes": 1}],
    "ints": 2,
    "steps": [
        {"Move": {"src": {"Input": 0}, "src_offset": [[{"Int": 1}, 8]],
                  "dst": {"Memory": {"memory": 0, "offset": 0, "length": 4096}}, "length": 4}},
        {"Loop": {"trips": {"Int": 0}, "trip": 1, "body": [
            {"Submit": {"device": 1, "parts": [
                {"Launch": {"image": 0, "name": "saxpy", "params": {"bytes": "00" * 40, "holes": [
                    {"at": 16, "width": "W32", "terms": [[{"Int": 1}, 4]]},
                    {"at": 0, "width": "W64",
                     "terms": [[{"Leaf": {"Entry": {"image": 0, "name": "f\""}}}, 1]]}]},
                    "refs": [{"slot": 0, "at": 0, "use": "Read"}],
                    "groups": [{"Fixed": 4}, {"Fixed": 1}, {"Fixed": 1}],
                    "threads": [{"Fixed": 256}, {"Int": 0}, {"Leaf": {"Ready": 2}}],
                    "shared": {"Fixed": 8}}},
                {"Fill": {"fill": {"Entry": {"image": 0, "name": "clear"}},
                          "params": {"bytes": "00000000"}}},
                {"Copy": {"src": 0, "src_offset": [[{"Int": 1}, 8]], "dst": 1, "length": 8}},
                {"Words": {"memory": 0, "offset": 8, "length": 16}}],
                "slots": [{"Memory": {"memory": 0, "offset": 0, "length": 4096}},
                          {"Input": 0}, "Ints"],
                "fixed": [[{"memory": 2, "offset": 0, "length": 8}, "Read_write"]]}}]}},
        {"Loop": {"trips": {"Fixed": 3},
                  "flag": [{"Memory": {"memory": 2, "offset": 0, "length": 8}}, 0]}},
        {"Submit": {"device": 0}}],
}


def progrun_dump(path):
    return subprocess.run([PROGRUN, "dump", path], capture_output=True, text=True, check=True,
                          timeout=60).stdout


@pytest.mark.parametrize("name", sorted(
    os.path.basename(p) for p in glob.glob(os.path.join(EXAMPLES, "*.json"))
    if "machines" not in open(p).read()))
def test_dump_of_each_example_is_progruns(name):
    path = os.path.join(EXAMPLES, name)
    assert rig.Description.read(path).dump() == progrun_dump(path)


def test_dump_of_every_kind_of_line_is_progruns(tmp_path):
    d = rig.Description.of_dict(EVERY_LINE)
    path = tmp_path / "every.bin"
    d.write(str(path))
    assert d.dump() == progrun_dump(str(path))
