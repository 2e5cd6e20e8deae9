"""A program loaded on this machine's devices: its inputs as numpy arrays
(in the inputs' own memory where the host addresses it), run with its
ints, each run timed."""
import ctypes
import time

import numpy as np

from . import _lib
from ._lib import RigError, lib
from .devices import device_name, map_devices, open_named

PINNED = 1  # RIG_KIND_PINNED: host memory the device addresses too


class Program:
    """desc loaded on devices (names, one per description device; None
    maps them by arch as progrun does); rails: a rig_rails pointer (a
    job's) or None. Each input is a zero-filled Pinned buffer of its bytes
    on its device."""

    def __init__(self, desc, devices=None, rails=None):
        self.desc = desc
        d = desc.to_dict()
        self._devs = map_devices(desc, len(d["devices"])) if devices is None else \
            open_named(d["devices"], devices)
        self.devices = [device_name(x) for x in self._devs]
        arr = (ctypes.c_void_p * max(1, len(self._devs)))(*self._devs)
        h, err = ctypes.c_void_p(), _lib.error()
        _lib.check(lib.rig_program_load(desc.handle, arr, len(self._devs), rails, ctypes.byref(h),
                                        err), err)
        self._h = h
        self._bufs = []
        self._ints = d["ints"]
        self._runs = 0
        try:
            for i, x in enumerate(d["inputs"]):
                self._bufs.append(self._make_input(i, x))
        except Exception:
            self.close()
            raise
        n = ctypes.c_size_t()
        self._points = lib.rig_program_step_points(self._h, ctypes.byref(n))
        self._npoints = n.value
        self._ends = (ctypes.c_uint64 * max(1, lib.rig_program_devices(self._h)))()

    def _make_input(self, i, x):
        b, err = ctypes.c_void_p(), _lib.error()
        st = lib.rig_buffer_create(self._devs[x["device"]], PINNED, x["bytes"], ctypes.byref(b),
                                   err)
        if st != _lib.OK:
            raise RigError(_lib.status_name(st), f"input {i}: {err.message.decode()}")
        zeros = bytes(x["bytes"])
        _lib.check(lib.rig_buffer_write(b, 0, zeros, len(zeros), err), err)
        return (b, x["bytes"])

    # ---- inputs ------------------------------------------------------------
    def input(self, i, dtype=np.uint8):
        """Input i's bytes as an array of dtype: a view of its memory when
        the host addresses it (writes go straight to it; valid while the
        program is), else a copy (write it back with set_input)."""
        b, n = self._bufs[i]
        err = _lib.error()
        _lib.check(lib.rig_buffer_wait(b, 0, err), err)  # the runs' writes done
        host = lib.rig_buffer_host(b)
        if host:
            raw = (ctypes.c_uint8 * n).from_address(host)
            raw._program = self  # the memory lives while an array of it does
            return np.ctypeslib.as_array(raw).view(dtype)
        out = np.empty(n, np.uint8)
        _lib.check(lib.rig_buffer_read(b, 0, out.ctypes.data, n, err), err)
        return out.view(dtype)

    def set_input(self, i, values):
        """Input i's bytes from an array (or bytes): zero past its end;
        longer than the input is refused."""
        b, n = self._bufs[i]
        data = np.ascontiguousarray(values).view(np.uint8).reshape(-1) \
            if not isinstance(values, (bytes, bytearray)) else np.frombuffer(values, np.uint8)
        if data.size > n:
            raise RigError("RIG_EINVAL", f"input {i}: {data.size} bytes for an input of {n}")
        whole = np.zeros(n, np.uint8)
        whole[:data.size] = data
        err = _lib.error()
        _lib.check(lib.rig_buffer_write(b, 0, whole.ctypes.data, n, err), err)

    @property
    def ninputs(self):
        return len(self._bufs)

    # ---- runs --------------------------------------------------------------
    def frame(self, ints=()):
        """The frame of runs over the inputs and ints (the rest 0), made
        once for a series: (frame, ints array), the array's elements
        changed in place between runs (a "run" int)."""
        ints = list(ints)
        if len(ints) > self._ints:
            raise RigError("RIG_EINVAL", f"{len(ints)} ints for a program of {self._ints}")
        iv = (ctypes.c_int64 * max(1, len(ints)))(*ints)
        bufs = (ctypes.c_void_p * max(1, len(self._bufs)))(*[b for b, _ in self._bufs])
        frame = _lib.Frame(bufs, len(self._bufs), iv, len(ints), self._points, self._npoints)
        frame._keep = (bufs, iv)  # the arrays live while the frame does
        return frame, iv

    def run_once(self, ints=(), frame=None):
        """One run over the inputs and ints (the rest 0), or over a frame
        of frame(); its ends waited for; its time in nanoseconds."""
        if frame is None:
            frame, _ = self.frame(ints)
        nends, err = ctypes.c_size_t(), _lib.error()
        t0 = time.perf_counter_ns()
        _lib.check(lib.rig_program_run(self._h, ctypes.byref(frame), None, 0, self._ends,
                                       ctypes.byref(nends), err), err)
        _lib.check(lib.rig_points_wait(self._ends, nends.value, err), err)
        ns = time.perf_counter_ns() - t0
        self._runs += 1
        return ns

    def run(self, runs=1, ints=()):
        """runs runs, one after the other; each one's time in ns. An int
        given as "run" is the run's index (0, 1, ...), as progrun's."""
        ints = list(ints)
        frame, iv = self.frame([0 if x == "run" else x for x in ints])
        slots = [k for k, x in enumerate(ints) if x == "run"]
        times = []
        for r in range(runs):
            for k in slots:
                iv[k] = r
            times.append(self.run_once(frame=frame))
        return times

    def close(self):
        """Releases the inputs and the program (once the work is done).
        Arrays of input() stay readable: their memory goes with the last."""
        if getattr(self, "_h", None):
            if getattr(self, "_points", None):
                _lib.libc.free(ctypes.cast(self._points, ctypes.c_void_p))
                self._points = None
            lib.rig_program_release(self._h)
            self._h = None

    def __del__(self):
        self.close()
        for b, _ in getattr(self, "_bufs", []):
            lib.rig_buffer_release(b)
        self._bufs = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def summary(times_ns):
    """progrun's summary line of these run times (docs/cli.md "The summary")."""
    t = sorted(times_ns)
    n = len(t)
    mean = sum(t) / n
    std = (sum((x - mean) ** 2 for x in t) / n) ** 0.5
    median, p99 = t[-(-n // 2) - 1], t[-(-99 * n // 100) - 1]
    u = 0 if median < 999.5 else 1 if median < 999950.0 else 2 if median < 999950000.0 else 3
    scale, name = [1.0, 1e3, 1e6, 1e9][u], ["ns", "us", "ms", "s"][u]
    form = ["{:.0f}", "{:.1f}", "{:.1f}", "{:.2f}"][u]

    def f(x):
        return form.format(max(x, 0) / scale) + " " + name
    return (f"runs {n}, min {f(t[0])}, median {f(median)}, mean {f(mean)}, p99 {f(p99)}, "
            f"max {f(t[-1])}, stddev {f(std)} per run")
