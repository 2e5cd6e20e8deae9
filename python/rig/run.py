"""A description file run on this machine in one call, as `progrun run
FILE` runs it alone: librig's rig_run_file (rig/rig_run.h)."""
import ctypes
import os

from . import _lib
from ._lib import RigError, lib


class _Io(ctypes.Structure):
    _fields_ = [("index", ctypes.c_int64), ("path", ctypes.c_char_p)]


class _Int(ctypes.Structure):
    _fields_ = [("number", ctypes.c_int64), ("run_index", ctypes.c_bool)]


class _Options(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("runs", ctypes.c_uint64),
                ("ints", ctypes.POINTER(_Int)), ("nints", ctypes.c_size_t),
                ("inputs", ctypes.POINTER(_Io)), ("ninputs", ctypes.c_size_t),
                ("outputs", ctypes.POINTER(_Io)), ("noutputs", ctypes.c_size_t),
                ("devices", ctypes.POINTER(ctypes.c_char_p)), ("ndevices", ctypes.c_size_t),
                ("times", ctypes.POINTER(ctypes.c_uint64)), ("ntimes", ctypes.c_size_t)]


def _declared():
    """rig_run_file, declared once: a librig older than the package has
    none, which only this call needs."""
    f = getattr(lib, "rig_run_file", None)
    if f is None:
        raise RigError("RIG_EINVAL", "this librig has no rig_run_file: it is older than the "
                       "package rig")
    f.restype = ctypes.c_int
    f.argtypes = [ctypes.c_char_p, ctypes.POINTER(_Options), _lib.ERR]
    return f


def _ios(files):
    items = sorted(files.items()) if isinstance(files, dict) else list(files or ())
    return (_Io * max(1, len(items)))(*[_Io(int(i), os.fsencode(p)) for i, p in items]), len(items)


def _int(x):
    if x == "run":
        return _Int(0, True)
    if x == "rank":  # this machine's index: 0, alone
        return _Int(0, False)
    if isinstance(x, bool) or not isinstance(x, int):
        raise RigError("RIG_EINVAL", f"ints: {x!r} is not a number, run or rank")
    return _Int(x, False)


def run_file(path, runs=1, ints=(), inputs=None, outputs=None, devices=None):
    """Runs the description in the file at path on this machine as
    `progrun run` runs it: read (bytes or JSON, its files relative to its
    folder) and checked; its devices the ones named, else mapped by arch;
    each input of `inputs` ({index: path}) read from its file, zeros past
    its end; `runs` runs, each with `ints` (numbers, "run": the run's
    index, "rank": 0); then each input of `outputs` ({index: path}) written
    to its file, all or none. Returns each run's time in nanoseconds.
    Raises RigError with librig's message ("input 0=x.bin: cannot read
    x.bin: No such file or directory")."""
    runs = int(runs)
    if runs < 1:
        raise RigError("RIG_EINVAL", f"runs: {runs}: one run at least")
    iv = [_int(x) for x in ints]
    ints_arr = (_Int * max(1, len(iv)))(*iv)
    ins, nin = _ios(inputs)
    outs, nout = _ios(outputs)
    names = None if devices is None else [os.fsencode(n) for n in devices]
    devs = (ctypes.c_char_p * max(1, len(names or ())))(*(names or ()))
    times = (ctypes.c_uint64 * runs)()
    o = _Options(ctypes.sizeof(_Options), runs, ints_arr, len(iv), ins, nin, outs, nout,
                 devs if names is not None else None, len(names or ()), times, runs)
    err = _lib.error()
    _lib.check(_declared()(os.fsencode(path), ctypes.byref(o), err), err)
    return list(times)
