"""The builder takes every form the JSON text takes (docs/json.md): each
example description, rebuilt call by call with rig.build from its JSON,
is the bytes `progrun pack` makes of that JSON."""
import glob
import json
import os
import subprocess

import pytest
import rig
from rig import build as b
from conftest import EXAMPLES, PROGRUN


def descriptions():
    """Every example that is a description (a job file has machines)."""
    out = []
    for p in sorted(glob.glob(os.path.join(EXAMPLES, "**", "*.json"), recursive=True)):
        if "machines" not in json.load(open(p)):
            out.append(os.path.relpath(p, EXAMPLES))
    return out


# ---- the JSON, as a person would write it with the builder ------------------


def build_description(j, base_dir):
    return b.description(devices=j.get("devices", []),
                         memory=[memory(m) for m in j.get("memory", [])],
                         images=[b.image(i["device"], data(i["binary"]))
                                 for i in j.get("images", [])],
                         inputs=[b.input(i["device"], i["bytes"]) for i in j.get("inputs", [])],
                         ints=j.get("ints", 0), steps=[step(s) for s in j.get("steps", [])],
                         base_dir=base_dir)


def one(c):
    """A constructor's name and its argument."""
    (k, v), = c.items()
    return k, v


def memory(m):
    k, a = one(m)
    if k == "Rail":
        return b.Rail(a["rail"], a["area"])
    return b.Alloc(a["device"], a["kind"], a["bytes"], a.get("copies", "One"),
                   init=data(a["init"]) if "init" in a else None)


def data(d):
    return b.data(bytes_of(d["bytes"]), [b.hole(h["at"], h["width"], terms(h.get("terms", [])),
                                                h.get("add", 0), h.get("shift", 0))
                                         for h in d.get("holes", [])])


def bytes_of(x):
    if isinstance(x, str):
        return bytes.fromhex(x)
    if isinstance(x, dict) and "file" in x:
        return b.file(x["file"])
    return x  # {"hex"}, {"base64"}, typed values: the JSON's own forms


def leaf(x):
    k, a = one(x)
    return {"Address": lambda: b.Address(a["memory"], a["on"]), "Handle": lambda: b.Handle(a),
            "Entry": lambda: b.Entry(a["image"], a["name"]), "Ready": lambda: b.Ready(a)}[k]()


def value(x):
    k, a = one(x)
    return {"Fixed": b.Fixed, "Int": b.Int, "Leaf": lambda a: b.Leaf(leaf(a))}[k](a)


def terms(ts):
    # A leaf data's terms are leaves, a value data's values.
    return [((value(x) if one(x)[0] in ("Fixed", "Int", "Leaf") else leaf(x)), f) for x, f in ts]


def slot(s):
    if s == "Ints":
        return b.Ints
    k, a = one(s)
    return b.Memory(view(a)) if k == "Memory" else b.Input(a)


def view(v):
    return b.view(v["memory"], v["offset"], v["length"])


def typed(p):
    if "int" in p:
        return b.param.int(p["int"], p["width"])
    k, a = one(p)
    if k == "ref":
        return b.param.ref(a["slot"], a["use"])
    if k == "leaf":
        return b.param.leaf(leaf(a))
    if k == "hole":
        return b.param.hole(a["width"], terms(a.get("terms", [])), a.get("add", 0),
                            a.get("shift", 0))
    return getattr(b.param, k)(a)  # pad, hex, u8 ... f64


def params_and_refs(a):
    p = a.get("params")
    if isinstance(p, list):
        return [typed(x) for x in p], ()
    refs = [b.ref(r["slot"], r["at"], r["use"]) for r in a.get("refs", [])]
    return (data(p) if p is not None else None), refs


def part(x):
    k, a = one(x)
    if k == "Words":
        return b.Words(view(a))
    if k == "Copy":
        return b.Copy(a["src"], a["dst"], a["length"], terms(a.get("src_offset", [])),
                      terms(a.get("dst_offset", [])))
    params, refs = params_and_refs(a)
    if k == "Fill":
        return b.Fill(leaf(a["fill"]), params, refs)
    return b.Launch(a["image"], a["name"], [value(v) for v in a["groups"]],
                    [value(v) for v in a["threads"]], params, refs,
                    value(a["shared"]) if "shared" in a else None)


def step(x):
    k, a = one(x)
    if k == "Submit":
        return b.Submit(a["device"], [part(p) for p in a.get("parts", [])],
                        [slot(s) for s in a.get("slots", [])],
                        [(view(v), acc) for v, acc in a.get("fixed", [])])
    if k == "Move":
        return b.Move(slot(a["src"]), slot(a["dst"]), a["length"], terms(a.get("src_offset", [])),
                      terms(a.get("dst_offset", [])))
    flag = a.get("flag")
    return b.Loop(value(a["trips"]), [step(s) for s in a.get("body", [])], a.get("trip"),
                  (slot(flag[0]), flag[1]) if flag else None)


# ---- the promise ---------------------------------------------------------------


@pytest.mark.parametrize("name", descriptions())
def test_the_builder_writes_the_bytes_progrun_pack_writes_of_every_example(name, tmp_path):
    path = os.path.join(EXAMPLES, name)
    packed = tmp_path / "packed.bin"
    subprocess.run([PROGRUN, "pack", path, "-o", str(packed)], check=True)
    built = build_description(json.load(open(path)), os.path.dirname(path))
    assert built.to_bytes() == packed.read_bytes()


def test_every_example_description_of_the_sources_is_among_those_compared():
    """The build copies examples/*.json (cuda/ only where nvcc is)."""
    src = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
    mine = [os.path.basename(p) for p in glob.glob(os.path.join(src, "*.json"))
            if "machines" not in json.load(open(p))]
    assert mine and set(mine) <= set(descriptions())


def test_a_params_list_holds_its_refs_and_holes_in_place():
    """saxpy's struct {const float *x; float *y; float a; uint32_t n;} and
    an int: the refs at 0 and 8, the hole at 24, 32 bytes in all."""
    d = b.description(
        devices=["x86_64"], memory=[b.Alloc(0, "Device", 64)], ints=1,
        steps=[b.Submit(0, slots=[b.Memory(b.view(0, 0, 32)), b.Memory(b.view(0, 32, 32))],
                        parts=[b.Launch(0, "saxpy", 1, 1, params=[
                            b.param.ref(0, "Read"), b.param.ref(1, "Write"), b.param.f32(2.0),
                            b.param.u32(1024), b.param.int(0, "W32")])])])
    launch = d.to_dict()["steps"][0]["Submit"]["parts"][0]["Launch"]
    assert launch["params"]["bytes"] == "00" * 16 + "00000040" + "00040000" + "00" * 8
    assert [h["at"] for h in launch["params"]["holes"]] == [24]
    assert launch["refs"] == [{"slot": 0, "at": 0, "use": "Read"},
                              {"slot": 1, "at": 8, "use": "Write"}]


def test_refs_beside_a_params_list_raise_the_readers_message():
    with pytest.raises(rig.RigError) as e:
        b.description(devices=["x86_64"], steps=[b.Submit(0, parts=[
            b.Launch(0, "f", 1, 1, params=[b.param.u32(1)], refs=[b.ref(0, 0, "Read")])])])
    assert str(e.value) == ('steps[0].Submit.parts[0].Launch: "refs" beside params written as a '
                            'list (write each ref in its place there)')
