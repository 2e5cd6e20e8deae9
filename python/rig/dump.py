"""The listing of `progrun dump` (launcher/progrun/dump.c, docs/cli.md
"dump"), line for line, made from the writer's JSON form of a
description: tests compare the two whole."""
import base64

WHOLE, HEAD, LINE = 256, 32, 32


def _plural(n, one, many):
    return one if n == 1 else many


def _bytes(b):
    """The bytes of the writer's form: a hex string or {"base64": ...}."""
    if isinstance(b, str):
        return bytes.fromhex(b)
    if "hex" in b:
        return bytes.fromhex(b["hex"])
    return base64.b64decode(b["base64"])


def _name(n):
    return n.encode() if isinstance(n, str) else bytes.fromhex(n["hex"])


def _str(s, bare=False):
    printable = all(0x20 <= c <= 0x7E and c not in b'"\\' for c in s)
    if not s:
        return '""'
    if not printable:
        return "0x" + s.hex()
    if bare and b" " not in s:
        return s.decode()
    return '"' + s.decode() + '"'


def _leaf(l):
    (k, a), = l.items()
    if k == "Address":
        return f"Address(memory {a['memory']}, on {a['on']})"
    if k == "Handle":
        return f"Handle(memory {a})"
    if k == "Entry":
        return f"Entry(image {a['image']}, {_str(_name(a['name']))})"
    return f"Ready(rail {a})"


def _value(v):
    (k, a), = v.items()
    if k == "Fixed":
        return f"Fixed({a})"
    if k == "Int":
        return f"Int({a})"
    return _leaf(a)


def _term_value(v):
    """A term's value: a bare leaf in a leaf data, a value elsewhere."""
    (k, _), = v.items()
    return _value(v) if k in ("Fixed", "Int", "Leaf") else _leaf(v)


def _terms(ts, sep):
    return sep.join(f"{_term_value(v)}*{f}" for v, f in ts)


def _offset(ts):
    return "+[" + _terms(ts, ", ") + "]"


def _view(v):
    return f"memory {v['memory']}, offset {v['offset']}, length {v['length']}"


def _slot(s):
    if s == "Ints":
        return "Ints"
    (k, a), = s.items()
    return f"Memory({_view(a)})" if k == "Memory" else f"Input({a})"


def _fnv1a(b):
    h = 0xCBF29CE484222325
    for c in b:
        h = ((h ^ c) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


class _Out:
    def __init__(self):
        self.lines = []

    def put(self, depth, text):
        self.lines.append("  " * depth + text)


def _data_body(o, depth, d):
    b = _bytes(d.get("bytes", ""))
    if b:
        if len(b) > WHOLE:
            o.put(depth, f"bytes: {b[:HEAD].hex()}... ({len(b)} bytes, fnv1a-64 {_fnv1a(b):016x})")
        else:
            for at in range(0, len(b), LINE):
                lead = "bytes: " if at == 0 else " " * 7
                o.put(depth, lead + b[at:at + LINE].hex())
    for h in d.get("holes", []):
        ts = h.get("terms", [])
        o.put(depth, f"hole at {h['at']} {h['width']} = {_terms(ts, ' + ')}"
              f"{' + ' if ts else ''}{h.get('add', 0)} >> {h.get('shift', 0)}")


def _data_summary(d):
    n, k = len(_bytes(d.get("bytes", ""))), len(d.get("holes", []))
    return f"{n} {_plural(n, 'byte', 'bytes')}, {k} {_plural(k, 'hole', 'holes')}"


def _refs(o, depth, refs):
    for r in refs:
        o.put(depth, f"ref slot {r['slot']} at {r['at']} {r['use']}")


def _part(o, depth, i, p):
    (k, a), = p.items()
    if k == "Words":
        o.put(depth, f"{i} Words {_view(a)}")
    elif k == "Fill":
        params, refs = a.get("params", {}), a.get("refs", [])
        o.put(depth, f"{i} Fill {_leaf(a['fill'])}, params {_data_summary(params)}, "
              f"{len(refs)} {_plural(len(refs), 'ref', 'refs')}")
        _data_body(o, depth + 1, params)
        _refs(o, depth + 1, refs)
    elif k == "Copy":
        o.put(depth, f"{i} Copy slot {a['src']} {_offset(a.get('src_offset', []))} -> slot "
              f"{a['dst']} {_offset(a.get('dst_offset', []))} length {a['length']}")
    else:
        params, refs = a.get("params", {}), a.get("refs", [])
        o.put(depth, f"{i} Launch image {a['image']} {_str(_name(a['name']))}, params "
              f"{_data_summary(params)}, {len(refs)} {_plural(len(refs), 'ref', 'refs')}")
        triple = lambda vs: "(" + ", ".join(_value(v) for v in vs) + ")"  # noqa: E731
        o.put(depth + 1, f"groups {triple(a['groups'])}, threads {triple(a['threads'])}, "
              f"shared {_value(a.get('shared', {'Fixed': 0}))}")
        _data_body(o, depth + 1, params)
        _refs(o, depth + 1, refs)


def _section(o, depth, title, items):
    o.put(depth, f"{title}:")
    if not items:
        o.put(depth + 1, "(none)")
    return bool(items)


def _submit(o, depth, s):
    parts, slots, fixed = s.get("parts", []), s.get("slots", []), s.get("fixed", [])
    if _section(o, depth, "parts", parts):
        for i, p in enumerate(parts):
            _part(o, depth + 1, i, p)
    if _section(o, depth, "slots", slots):
        for i, sl in enumerate(slots):
            o.put(depth + 1, f"{i} {_slot(sl)}")
    if _section(o, depth, "fixed", fixed):
        for v, access in fixed:
            o.put(depth + 1, f"{_view(v)}, {access}")


def _steps(o, depth, steps, number):
    for s in steps:
        (k, a), = s.items()
        head = f"step {number[0]}: "
        number[0] += 1
        if k == "Submit":
            o.put(depth, head + f"Submit on device {a['device']}")
            _submit(o, depth + 1, a)
        elif k == "Move":
            o.put(depth, head + f"Move {_slot(a['src'])} {_offset(a.get('src_offset', []))} -> "
                  f"{_slot(a['dst'])} {_offset(a.get('dst_offset', []))} length {a['length']}")
        else:
            trip = a.get("trip")
            flag = a.get("flag")
            body = a.get("body", [])
            o.put(depth, head + f"Loop trips {_value(a['trips'])}, "
                  + (f"trip int {trip}" if trip is not None else "trip none") + ", "
                  + (f"flag {_slot(flag[0])} at {flag[1]}" if flag else "flag none")
                  + f", body {len(body)} {_plural(len(body), 'step', 'steps')}")
            _steps(o, depth + 1, body, number)


def _count(steps):
    return sum(1 + (_count(s["Loop"].get("body", [])) if "Loop" in s else 0) for s in steps)


def _memory(o, i, m):
    (k, a), = m.items()
    if k == "Alloc":
        n, copies = a["bytes"], a["copies"]
        o.put(1, f"{i} Alloc device {a['device']}, {a['kind']}, {n} {_plural(n, 'byte', 'bytes')}, "
              f"{copies} {'copy' if copies == 'One' else 'copies'}")
        init = a.get("init", {})
        o.put(2, "init: " + _data_summary(init))
        _data_body(o, 3, init)
    else:
        o.put(1, f"{i} Rail rail {a['rail']}, {a['area']}")


def listing(d):
    """The listing of the description d (the writer's JSON form)."""
    o = _Out()
    devices, memory, images = d["devices"], d["memory"], d["images"]
    inputs, ints, steps = d["inputs"], d["ints"], d["steps"]
    n = _count(steps)
    o.put(0, f"program: {len(devices)} {_plural(len(devices), 'device', 'devices')}, "
          f"{len(memory)} memory, {len(images)} {_plural(len(images), 'image', 'images')}, "
          f"{len(inputs)} {_plural(len(inputs), 'input', 'inputs')}, "
          f"{ints} {_plural(ints, 'int', 'ints')}, {n} {_plural(n, 'step', 'steps')}")
    if _section(o, 0, "devices", devices):
        for i, a in enumerate(devices):
            o.put(1, f"{i} {_str(_name(a), bare=True)}")
    if _section(o, 0, "memory", memory):
        for i, m in enumerate(memory):
            _memory(o, i, m)
    if _section(o, 0, "images", images):
        for i, im in enumerate(images):
            o.put(1, f"{i} device {im['device']}, {_data_summary(im['binary'])}")
            _data_body(o, 2, im["binary"])
    if _section(o, 0, "inputs", inputs):
        for i, x in enumerate(inputs):
            o.put(1, f"{i} device {x['device']}, {x['bytes']} {_plural(x['bytes'], 'byte', 'bytes')}")
    if _section(o, 0, "steps", steps):
        _steps(o, 1, steps, [0])
    return "\n".join(o.lines) + "\n"
