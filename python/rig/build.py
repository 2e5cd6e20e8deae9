"""A small builder of descriptions: one function per constructor or record
of the JSON form (docs/json.md), named as the JSON names it, each giving
the JSON form's Python value; description() makes the Description. So

    description(devices=["x86_64"], inputs=[input(0, 64)],
                steps=[Move(Input(0), Memory(view(0, 0, 64)), 64)])

is the JSON text {"devices": ["x86_64"], ...} read by the library, whose
reader judges the form and whose checker the rules. A fill's or launch's
params may be a list of typed parameters (param.ref, param.u32, ...), as
in the JSON: the reader lays them out as a C struct and places their refs
and holes, so that nothing is packed or offset by hand."""
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
    """params: a data, bytes, or a list of typed parameters (param.*)."""
    return {"Fill": _params({"fill": fill}, params, refs)}


def Copy(src, dst, length, src_offset=(), dst_offset=()):
    return {"Copy": {"src": src, "src_offset": [list(t) for t in src_offset], "dst": dst,
                     "dst_offset": [list(t) for t in dst_offset], "length": length}}


def Launch(image_, name, groups, threads, params=None, refs=(), shared=None):
    """groups, threads: three values each, or an int for (n, 1, 1); params:
    a data, bytes, or a list of typed parameters (param.*), whose refs are
    in the list, not in refs."""
    p = _params({"image": image_, "name": name}, params, refs)
    p["groups"], p["threads"] = _triple(groups), _triple(threads)
    if shared is not None:
        p["shared"] = Fixed(shared) if isinstance(shared, int) else shared
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


# ---- typed parameters (a params list's elements) ----------------------------


class param:
    """The elements of a fill's or launch's params list (docs/json.md,
    "Typed parameters"), the kernel's struct field by field:

        Launch(0, "add", 1, 1, params=[param.ref(0, "Read"), param.ref(1, "Write"),
                                       param.u32(16)])

    Each lies at the next multiple of its alignment; a ref's and a hole's
    offset is the reader's to compute."""

    @staticmethod
    def ref(slot, use):
        return {"ref": {"slot": slot, "use": use}}

    @staticmethod
    def int(i, width):  # noqa: A003 - the JSON's name
        """Int i at each submit, "W32" or "W64" wide."""
        return {"int": i, "width": width}

    @staticmethod
    def leaf(leaf):
        """A leaf (Address, Handle, Entry, Ready) as a W64 hole."""
        return {"leaf": leaf}

    @staticmethod
    def hole(width, terms=(), add=0, shift=0):
        return {"hole": {"width": width, "terms": [list(t) for t in terms], "add": add,
                         "shift": shift}}

    @staticmethod
    def pad(n):
        return {"pad": n}

    @staticmethod
    def hex(b):  # noqa: A003 - the JSON's name
        """Bytes (or their hex), aligned to nothing."""
        return {"hex": bytes(b).hex() if isinstance(b, (bytes, bytearray, memoryview)) else b}


for _t in ("u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64", "f32", "f64"):
    setattr(param, _t, staticmethod(lambda v, _t=_t: {_t: v}))
del _t


def _params(part, params, refs):
    """part with its params and refs: a list of typed parameters goes to
    the reader as it is, with no refs beside it unless some are given
    (which the reader then refuses, saying why)."""
    if isinstance(params, (list, tuple)):
        part["params"] = list(params)
        if refs:
            part["refs"] = list(refs)
    else:
        part["params"] = data() if params is None else params if isinstance(params, dict) \
            else data(params)
        part["refs"] = list(refs)
    return part


def _triple(v):
    if isinstance(v, int):
        return [Fixed(v), Fixed(1), Fixed(1)]
    return [Fixed(x) if isinstance(x, int) else x for x in v]
