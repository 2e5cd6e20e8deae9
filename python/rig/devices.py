"""This machine's devices, by name ("host", "cpu:1", "cuda:0") or standing
for a description's devices by arch, as progrun maps them."""
import ctypes

from . import _lib
from ._lib import RigError, lib


def open_device(name):
    """The device of that name (rig_device_open)."""
    dev, err = ctypes.c_void_p(), _lib.error()
    _lib.check(lib.rig_device_open(name.encode(), ctypes.byref(dev), err), err)
    return dev.value


def _arch(dev):
    return lib.rig_device_arch(dev).decode(errors="replace")


def _next_free(family, arch, taken, i):
    """The next device of family of arch `arch` not taken (cli_machine.c)."""
    first, name = ctypes.create_string_buffer(64), ctypes.create_string_buffer(64)
    lib.rig_family_device_name(family, 0, first, 64)
    n = of_arch = 0
    why = ""
    while n < 65536:
        lib.rig_family_device_name(family, n, name, 64)
        if n > 0 and name.value == first.value:
            break
        try:
            dev = open_device(name.value.decode())
        except RigError as e:
            why = e.message
            break
        n += 1
        if _arch(dev) != arch:
            continue
        of_arch += 1
        if dev not in taken:
            return dev
    if n == 0:
        raise RigError("RIG_EREFUSED",
                       f'device {i}: no device of arch "{arch}" on this machine ({why})')
    if of_arch == 0:
        raise RigError("RIG_EREFUSED", f'device {i}: no device of arch "{arch}" on this machine')
    family_name = lib.rig_family_name(family).decode()
    raise RigError("RIG_EREFUSED",
                   f'device {i}: no free device of arch "{arch}": this machine\'s {of_arch} '
                   f'{family_name} devices are taken by earlier ones (docs/environment.md says '
                   "how to have more)")


def map_devices(archs, names=None):
    """The devices (handles) standing for devices of archs `archs`: the
    ones named, in order, or by arch as progrun maps them."""
    if names is not None:
        names = list(names)
        if len(names) != len(archs):
            raise RigError("RIG_EINVAL", f"devices: {len(names)} devices for a program of "
                           f"{len(archs)}")
        return [open_device(n) for n in names]
    out = []
    for i, arch in enumerate(archs):
        family = lib.rig_family_of_arch(arch.encode()) if "\0" not in arch else -1
        if family < 0:
            raise RigError("RIG_EREFUSED", f'device {i}: no device of arch "{arch}" on this machine')
        out.append(_next_free(family, arch, out, i))
    return out


def device_name(dev):
    return lib.rig_device_name(dev).decode()
