"""Descriptions: a program's description held by librig (rig_desc), read
and written as JSON text, as a dict of the JSON form, or as bytes, and
checked by the library's own checker."""
import ctypes
import json
import os

from . import _lib
from ._lib import lib

MAGIC = b"rig.program\n"


class Description:
    """A description; made by of_json, of_bytes, of_dict, read or build."""

    def __init__(self, handle):
        self._h = ctypes.c_void_p(handle)

    def __del__(self):
        if getattr(self, "_h", None) and self._h.value:
            lib.rig_desc_free(self._h)
            self._h = None

    @property
    def handle(self):
        return self._h

    # ---- reading -----------------------------------------------------------
    @classmethod
    def of_json(cls, text, base_dir=None):
        """The description in JSON text; {"file": PATH} bytes are read
        relative to base_dir (None refuses them)."""
        if isinstance(text, str):
            text = text.encode()
        out, err = ctypes.c_void_p(), _lib.error()
        base = os.fsencode(base_dir) if base_dir is not None else None
        _lib.check(lib.rig_desc_of_json(text, len(text), base, ctypes.byref(out), err), err)
        return cls(out.value)

    @classmethod
    def of_bytes(cls, data):
        """The description in bytes of format version 4."""
        data = bytes(data)
        out, err = ctypes.c_void_p(), _lib.error()
        _lib.check(lib.rig_desc_of_bytes(data, len(data), ctypes.byref(out), err), err)
        return cls(out.value)

    @classmethod
    def of_dict(cls, d, base_dir=None):
        """The description of the JSON form as Python values (build's)."""
        return cls.of_json(json.dumps(d), base_dir)

    @classmethod
    def read(cls, path):
        """The description in the file at path, bytes or JSON (its files
        relative to its directory), as progrun reads it: a failure's
        message starts with the path."""
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise _lib.RigError("RIG_ESYS", f"cannot read {path}: {e.strerror}") from None
        # Decoded and worded by librig, the path named as given
        # (rig_run_desc_of_text), as progrun says it.
        out, err = ctypes.c_void_p(), _lib.error()
        folder = os.path.dirname(path) or "."
        _lib.check(lib.rig_run_desc_of_text(data, len(data), os.fsencode(path),
                                            os.fsencode(folder), ctypes.byref(out), err), err)
        return cls(out.value)

    # ---- writing -----------------------------------------------------------
    def to_json(self):
        """The writer's JSON text (format first, fields in order)."""
        text, err = ctypes.c_void_p(), _lib.error()
        _lib.check(lib.rig_desc_to_json(self._h, ctypes.byref(text), err), err)
        try:
            return ctypes.string_at(text.value).decode()
        finally:
            _lib.libc.free(text)

    def to_dict(self):
        return json.loads(self.to_json())

    def to_bytes(self):
        out, n, err = ctypes.c_void_p(), ctypes.c_size_t(), _lib.error()
        _lib.check(lib.rig_desc_to_bytes(self._h, ctypes.byref(out), ctypes.byref(n), err), err)
        try:
            return ctypes.string_at(out.value, n.value)
        finally:
            _lib.libc.free(out)

    def write(self, path):
        """Writes the bytes to path."""
        with open(path, "wb") as f:
            f.write(self.to_bytes())

    # ---- judging and showing -----------------------------------------------
    def check(self):
        """Applies every rule that needs no device (rig_desc_check); raises
        RigError with the first broken rule's message."""
        err = _lib.error()
        _lib.check(lib.rig_desc_check(self._h, err), err)

    def dump(self):
        """The listing `progrun dump` prints (rig_desc_listing)."""
        text, err = ctypes.c_void_p(), _lib.error()
        _lib.check(lib.rig_desc_listing(self._h, ctypes.byref(text), err), err)
        try:
            return ctypes.string_at(text.value).decode()
        finally:
            _lib.libc.free(text)

    def dot(self, all=False):
        """The Graphviz digraph `progrun dot` prints (rig_desc_dot): which
        steps follow which, and why; every edge with `all`, else those no
        other path implies."""
        text, err = ctypes.c_void_p(), _lib.error()
        _lib.check(lib.rig_desc_dot(self._h, bool(all), ctypes.byref(text), err), err)
        try:
            return ctypes.string_at(text.value).decode()
        finally:
            _lib.libc.free(text)

    def __eq__(self, other):
        return isinstance(other, Description) and self.to_bytes() == other.to_bytes()

    __hash__ = None

