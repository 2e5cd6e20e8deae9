"""librig through ctypes: finding the library and declaring the calls the
package makes. Nothing here is compiled, so the package needs no compiler.

The library is found as find_package(rig) would find it: RIG_LIBRARY (the
file), then a prefix (RIG_ROOT, RIG_PREFIX, each of CMAKE_PREFIX_PATH),
then the build tree this package sits in (build/default/python beside
build/default/librig.so), then pkg-config's rig.pc (PKG_CONFIG_PATH), then
the interpreter's own prefix (a venv's or /usr's), then the loader's own
search."""
import ctypes
import ctypes.util
import os
import subprocess
import sys

SONAME = "librig.so.0"


class RigError(Exception):
    """A call of librig failed: .status is its code's name (RIG_EINVAL),
    str() the library's own message."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
        self.message = message


class JobError(RigError):
    """The job failed: the message is its root cause, raised on every rank."""


class _Error(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("message", ctypes.c_char * 512)]


def _candidates():
    env = os.environ.get("RIG_LIBRARY")
    if env:
        yield env
        return
    prefixes = [os.environ.get("RIG_ROOT"), os.environ.get("RIG_PREFIX")]
    prefixes += os.environ.get("CMAKE_PREFIX_PATH", "").split(os.pathsep)
    for prefix in filter(None, prefixes):
        for lib in ("lib", "lib64", "lib/x86_64-linux-gnu"):
            yield os.path.join(prefix, lib, SONAME)
    here = os.path.dirname(os.path.abspath(__file__))
    # build/default/python/rig -> build/default/librig.so.0
    # Lexically: the package may be a link into the source tree.
    yield os.path.normpath(os.path.join(here, "..", "..", SONAME))
    try:
        libdir = subprocess.run(["pkg-config", "--variable=libdir", "rig"], capture_output=True,
                                text=True, timeout=30).stdout.strip()
        if libdir:
            yield os.path.join(libdir, SONAME)
    except (OSError, subprocess.SubprocessError):
        pass
    for lib in ("lib", "lib64", "lib/x86_64-linux-gnu"):
        yield os.path.join(sys.prefix, lib, SONAME)
    found = ctypes.util.find_library("rig")
    if found:
        yield found


def _load():
    tried = []
    for path in _candidates():
        if os.path.sep in path and not os.path.exists(path):
            tried.append(path)
            continue
        # RTLD_GLOBAL: Open MPI's plugins need libmpi's symbols global.
        return ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    raise OSError("librig not found: set RIG_LIBRARY to the file, RIG_ROOT to its prefix, or "
                  "PKG_CONFIG_PATH to its rig.pc's folder (tried " + ", ".join(tried) + ")")


lib = _load()

P = ctypes.c_void_p
I64 = ctypes.c_int64
U64 = ctypes.c_uint64
SZ = ctypes.c_size_t
ST = ctypes.c_int
ERR = ctypes.POINTER(_Error)
STR = ctypes.c_char_p


def _decl(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)


class Frame(ctypes.Structure):
    _fields_ = [("inputs", ctypes.POINTER(P)), ("ninputs", SZ),
                ("ints", ctypes.POINTER(I64)), ("nints", SZ),
                ("step_points", ctypes.POINTER(U64)), ("nstep_points", SZ)]


class RailTransfer(ctypes.Structure):
    _fields_ = [("src", I64), ("dst", I64), ("length", I64)]


class JobSlowest(ctypes.Structure):
    _fields_ = [("ns", U64), ("machine", ctypes.c_int), ("run", U64)]


for _n, _r, *_a in [
    ("rig_status_name", STR, ST),
    ("rig_desc_free", None, P),
    ("rig_desc_to_bytes", ST, P, ctypes.POINTER(P), ctypes.POINTER(SZ), ERR),
    ("rig_desc_of_bytes", ST, P, SZ, ctypes.POINTER(P), ERR),
    ("rig_desc_is_bytes", ctypes.c_bool, P, SZ),
    ("rig_desc_to_json", ST, P, ctypes.POINTER(P), ERR),
    ("rig_desc_listing", ST, P, ctypes.POINTER(P), ERR),
    ("rig_desc_dot", ST, P, ctypes.c_bool, ctypes.POINTER(P), ERR),
    ("rig_desc_of_json", ST, P, SZ, STR, ctypes.POINTER(P), ERR),
    ("rig_desc_check", ST, P, ERR),
    ("rig_run_desc_of_text", ST, P, SZ, STR, STR, ctypes.POINTER(P), ERR),
    ("rig_run_is_jobfile", ctypes.c_bool, STR, ctypes.POINTER(SZ)),
    ("rig_run_under_launcher", ctypes.c_bool),
    ("rig_run_rank_is_not_0", ctypes.c_bool),
    ("rig_run_map_devices", ST, P, ctypes.POINTER(STR), SZ, STR, P, P, ctypes.POINTER(P), ERR),
    ("rig_environment_check", ST, ERR),
    ("rig_host_isa", STR),
    ("rig_family_of_arch", ctypes.c_int, STR),
    ("rig_family_devices", ST, SZ, ctypes.POINTER(ctypes.c_uint), ERR),
    ("rig_family_device_name", None, SZ, ctypes.c_uint, ctypes.c_char_p, SZ),
    ("rig_family_name", STR, SZ),
    ("rig_device_open", ST, STR, ctypes.POINTER(P), ERR),
    ("rig_device_name", STR, P),
    ("rig_device_arch", STR, P),
    ("rig_buffer_create", ST, P, ctypes.c_int, U64, ctypes.POINTER(P), ERR),
    ("rig_buffer_release", None, P),
    ("rig_buffer_host", P, P),
    ("rig_buffer_wait", ST, P, ctypes.c_int, ERR),
    ("rig_buffer_write", ST, P, U64, P, SZ, ERR),
    ("rig_buffer_read", ST, P, U64, P, SZ, ERR),
    ("rig_program_load", ST, P, ctypes.POINTER(P), SZ, P, ctypes.POINTER(P), ERR),
    ("rig_program_run", ST, P, ctypes.POINTER(Frame), P, SZ, ctypes.POINTER(U64),
     ctypes.POINTER(SZ), ERR),
    ("rig_program_step_points", ctypes.POINTER(U64), P, ctypes.POINTER(SZ)),
    ("rig_program_devices", SZ, P),
    ("rig_program_release", None, P),
    ("rig_points_wait", ST, ctypes.POINTER(U64), SZ, ERR),
    ("rig_job_start", ST, P, ctypes.POINTER(P), ERR),
    ("rig_job_rank", ctypes.c_int, P),
    ("rig_job_machines", SZ, P),
    ("rig_job_label", STR, P, ctypes.c_int),
    ("rig_job_rails", P, P),
    ("rig_job_rail_as", ST, P, I64, ctypes.c_int, ctypes.c_int, ctypes.POINTER(RailTransfer), SZ,
     ctypes.POINTER(RailTransfer), SZ, ctypes.POINTER(P), ERR),
    ("rig_job_run_begin", ST, P, U64, ERR),
    ("rig_job_run_end", ST, P, U64, U64, ctypes.POINTER(JobSlowest), ERR),
    ("rig_job_runs_done", ST, P, ctypes.POINTER(JobSlowest), ERR),
    ("rig_job_runs_plan", None, P, U64),
    ("rig_job_gather", ST, P, P, SZ, ctypes.POINTER(P), ctypes.POINTER(SZ), ERR),
    ("rig_job_agree", ST, P, ctypes.c_bool, ctypes.POINTER(ctypes.c_bool), ERR),
    ("rig_job_failed", ctypes.c_bool, P, ERR),
    ("rig_job_cause", ST, P, ERR),
    ("rig_job_silence", ctypes.c_double),
    ("rig_job_told_cause", None, P, ctypes.c_double, ERR),
    ("rig_job_goodbye", None, P),
    ("rig_job_await_told", ctypes.c_bool, P),
    ("rig_job_serve", ST, P, ERR),
    ("rig_job_close", ST, P, ERR),
    ("rig_rail_release", None, P),
]:
    _decl(_n, _r, *_a)


def unchecked(name):
    """The call `name` without argtypes, returning a status: for a loop's
    hot calls, whose arguments are made ctypes values once (a c_uint64 set
    in place, a byref), skipping each argument's conversion per call."""
    f = lib[name]  # a function object of its own: the declared one keeps its argtypes
    f.restype = ST
    return f


# Variadic: only the fixed arguments are declared; the message goes as
# "%s" and its bytes, so no % in it is read as a format.
lib.rig_job_fail.restype = ST
lib.rig_job_fail_as.restype = ST
libc = ctypes.CDLL(None)
libc.free.argtypes = [P]
libc.free.restype = None

OK = 0
EINVAL = 1
EMALFORMED = 5
EJOB = 7
# Each status's name (rig_status_name) to its code, RIG_EINVAL to RIG_EJOB.
CODES = {lib.rig_status_name(c).decode(): c for c in range(EINVAL, EJOB + 1)}


def error():
    """A fresh error record for one call."""
    return _Error()


def status_name(code):
    return lib.rig_status_name(code).decode()


def check(code, err, cls=RigError):
    """Raises the library's message unless code is RIG_OK."""
    if code != OK:
        raise cls(status_name(code), err.message.decode(errors="replace"))
