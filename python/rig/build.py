"""A small builder of descriptions: one function per constructor or record
of the JSON form (docs/json.md), named as the JSON names it, each giving
the JSON form's Python value; description() makes the Description. So

    description(devices=["x86_64"], inputs=[input(0, 64)],
                steps=[Move(Input(0), Memory(view(0, 0, 64)), 64)])

is the JSON text {"devices": ["x86_64"], ...} read by the library, whose
reader judges the form and whose checker the rules."""
from .desc import Description

# ---- the top object --------------------------------------------------------


def description(devices=(), memory=(), images=(), inputs=(), ints=0, steps=(), base_dir=None):
    """The Description of these fields; base_dir is where {"file": ...}
    bytes are read from."""
    return Description.of_dict(
        {"format": 4, "devices": list(devices), "memory": list(memory), "images": list(images),
         "inputs": list(inputs), "ints": ints, "steps": list(steps)}, base_dir)


# ---- records ---------------------------------------------------------------


def view(memory, offset, length):
    return {"memory": memory, "offset": offset, "length": length}


def data(bytes_=b"", holes=()):
    """A data: bytes (Python bytes, or any JSON bytes form: hex, typed
    values, {"file": ...}) and holes."""
    if isinstance(bytes_, (bytes, bytearray, memoryview)):
        bytes_ = bytes(bytes_).hex()
    return {"bytes": bytes_, "holes": list(holes)}


def hole(at, width, terms=(), add=0, shift=0):
    return {"at": at, "width": width, "terms": [list(t) for t in terms], "add": add,
            "shift": shift}


def image(device, binary):
    """binary: a data, or bytes (an image's code)."""
    return {"device": device, "binary": binary if isinstance(binary, dict) else data(binary)}


def input(device, bytes_):  # noqa: A001 - the JSON's name
    return {"device": device, "bytes": bytes_}


def ref(slot, at, use):
    return {"slot": slot, "at": at, "use": use}


def file(path):
    """Bytes read from a file, relative to the description's base_dir."""
    return {"file": path}


# ---- constructors (the JSON's one-key objects) -----------------------------


def Alloc(device, kind, bytes_, copies="One", init=None):
    a = {"device": device, "kind": kind, "bytes": bytes_, "copies": copies}
    if init is not None:
        a["init"] = init if isinstance(init, dict) else data(init)
    return {"Alloc": a}


def Rail(rail, area):
    return {"Rail": {"rail": rail, "area": area}}


def Address(memory, on):
    return {"Address": {"memory": memory, "on": on}}


def Handle(memory):
    return {"Handle": memory}


def Entry(image_, name):
    return {"Entry": {"image": image_, "name": name}}


def Ready(rail):
    return {"Ready": rail}


def Fixed(n):
    return {"Fixed": n}


def Int(i):
    return {"Int": i}


def Leaf(leaf):
    return {"Leaf": leaf}


def Memory(view_):
    return {"Memory": view_}


def Input(i):
    return {"Input": i}


Ints = "Ints"


def Words(view_):
    return {"Words": view_}


def Fill(fill, params=None, refs=()):
    return {"Fill": {"fill": fill, "params": _data(params), "refs": list(refs)}}


def Copy(src, dst, length, src_offset=(), dst_offset=()):
    return {"Copy": {"src": src, "src_offset": [list(t) for t in src_offset], "dst": dst,
                     "dst_offset": [list(t) for t in dst_offset], "length": length}}


def Launch(image_, name, groups, threads, params=None, refs=(), shared=None):
    """groups, threads: three values each, or an int for (n, 1, 1)."""
    p = {"image": image_, "name": name, "params": _data(params), "refs": list(refs),
         "groups": _triple(groups), "threads": _triple(threads)}
    if shared is not None:
        p["shared"] = shared
    return {"Launch": p}


def Submit(device, parts=(), slots=(), fixed=()):
    return {"Submit": {"device": device, "parts": list(parts), "slots": list(slots),
                       "fixed": [list(f) for f in fixed]}}


def Move(src, dst, length, src_offset=(), dst_offset=()):
    return {"Move": {"src": src, "src_offset": [list(t) for t in src_offset], "dst": dst,
                     "dst_offset": [list(t) for t in dst_offset], "length": length}}


def Loop(trips, body=(), trip=None, flag=None):
    """flag: (slot, at) or None."""
    return {"Loop": {"trips": trips, "trip": trip, "flag": list(flag) if flag else None,
                     "body": list(body)}}


def _data(d):
    if d is None:
        return data()
    return d if isinstance(d, dict) else data(d)


def _triple(v):
    if isinstance(v, int):
        return [Fixed(v), Fixed(1), Fixed(1)]
    return [Fixed(x) if isinstance(x, int) else x for x in v]
