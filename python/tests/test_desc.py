"""Descriptions: JSON, bytes, the builder, the checker's messages."""
import os

import pytest
import rig
from rig import build as b
from conftest import EXAMPLES


def saxpy():
    return rig.Description.read(os.path.join(EXAMPLES, "saxpy.json"))


def test_json_text_round_trips_character_for_character():
    text = saxpy().to_json()
    assert rig.Description.of_json(text).to_json() == text


def test_bytes_round_trip_to_the_same_bytes():
    data = saxpy().to_bytes()
    assert data.startswith(b"rig.program\n")
    assert rig.Description.of_bytes(data).to_bytes() == data


def test_a_dict_of_the_json_form_is_the_description():
    d = saxpy()
    assert rig.Description.of_dict(d.to_dict()) == d


def test_the_builder_makes_what_the_json_text_says():
    built = b.description(
        devices=["x86_64"],
        memory=[b.Alloc(0, "Device", 64, "One", init=bytes(range(8)))],
        inputs=[b.input(0, 64)], ints=1,
        steps=[b.Move(b.Input(0), b.Memory(b.view(0, 0, 64)), 64),
               b.Loop(b.Int(0), trip=0, body=[
                   b.Submit(0, parts=[b.Copy(0, 1, 8, src_offset=[(b.Int(0), 8)])],
                            slots=[b.Memory(b.view(0, 0, 64)), b.Input(0)])])])
    text = """{"devices": ["x86_64"],
      "memory": [{"Alloc": {"device": 0, "kind": "Device", "bytes": 64, "copies": "One",
                            "init": {"bytes": "0001020304050607"}}}],
      "inputs": [{"device": 0, "bytes": 64}], "ints": 1,
      "steps": [{"Move": {"src": {"Input": 0},
                          "dst": {"Memory": {"memory": 0, "offset": 0, "length": 64}},
                          "length": 64}},
                {"Loop": {"trips": {"Int": 0}, "trip": 0, "body": [
                  {"Submit": {"device": 0,
                    "parts": [{"Copy": {"src": 0, "src_offset": [[{"Int": 0}, 8]], "dst": 1,
                                        "length": 8}}],
                    "slots": [{"Memory": {"memory": 0, "offset": 0, "length": 64}},
                              {"Input": 0}]}}]}}]}"""
    assert built.to_bytes() == rig.Description.of_json(text).to_bytes()
    built.check()


def test_a_broken_rule_raises_the_checkers_message():
    d = b.description(
        devices=["x86_64"], memory=[b.Alloc(0, "Device", 64)],
        steps=[b.Submit(0, parts=[b.Words(b.view(0, 60, 8))])])
    with pytest.raises(rig.RigError) as e:
        d.check()
    assert str(e.value) == "step 0: memory 0: a view of 8 bytes at 60 outside its 64 bytes"
    assert e.value.status == "RIG_EINVAL"


def test_json_that_is_no_description_raises_its_json_path():
    with pytest.raises(rig.RigError) as e:
        rig.Description.of_json('{"steps": [{"Jump": 1}]}')
    assert str(e.value) == 'steps[0]: "Jump" is not a step (Submit, Move, Loop)'
    assert e.value.status == "RIG_EMALFORMED"


def test_a_file_read_names_itself_in_its_message(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text("rig")
    with pytest.raises(rig.RigError) as e:
        rig.Description.read(str(path))
    assert str(e.value) == (f"{path}:1:3: not a program description: neither the bytes' "
                            "magic nor JSON: invalid token near 'rig'")
