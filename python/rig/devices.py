"""This machine's devices, by name ("host", "cpu:1", "cuda:0") or standing
for a description's devices by arch, as progrun maps them: librig's
rig_run_map_devices, progrun's own."""
import ctypes
import os

from . import _lib
from ._lib import RigError, lib


def open_device(name):
    """The device of that name (rig_device_open)."""
    dev, err = ctypes.c_void_p(), _lib.error()
    _lib.check(lib.rig_device_open(name.encode(), ctypes.byref(dev), err), err)
    return dev.value


def map_devices(desc, n, names=None, given_by=None):
    """The devices (handles) standing for desc's n devices by
    rig_run_map_devices: the ones named, in order, each of its device's
    arch (its messages start with given_by, None: "devices"), or by arch
    as progrun maps them."""
    out, err = (ctypes.c_void_p * max(1, n))(), _lib.error()
    arr = None
    if names is not None:
        names = [os.fsencode(x) for x in names]
        arr = (ctypes.c_char_p * max(1, len(names)))(*names)
    by = given_by.encode() if given_by is not None else None
    _lib.check(lib.rig_run_map_devices(desc.handle, arr, len(names or ()), by, None, None, out,
                                       err), err)
    return [out[i] for i in range(n)]


def open_named(archs, names):
    """The devices named, one per description device of archs `archs`,
    each opened, whatever its arch (the load checks it, in its words)."""
    names = list(names)
    if len(names) != len(archs):
        raise RigError("RIG_EINVAL", f"devices: {len(names)} devices for a program of "
                       f"{len(archs)}")
    return [open_device(x) for x in names]


def device_name(dev):
    return lib.rig_device_name(dev).decode()
