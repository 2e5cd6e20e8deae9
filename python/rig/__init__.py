"""rig: librig from Python, through ctypes (docs/python.md).

    Description   a program's description: JSON, bytes, check, dump
    build         a builder of descriptions with the JSON form's names
    Program       a description loaded on this machine's devices, run
    run_file      a description file run as `progrun run` runs it, in one call
    Job           a job over an mpi4py communicator (rig.job; needs mpi4py)
"""
from ._lib import JobError, RigError
from . import build
from .desc import Description
from .program import Program, summary
from .run import run_file

__version__ = "0.1.0"
__all__ = ["Description", "Program", "RigError", "JobError", "build", "summary", "run_file",
           "Job"]


def __getattr__(name):
    # Job needs mpi4py, which a local user may not have: imported when asked.
    if name == "Job":
        from .job import Job
        return Job
    raise AttributeError(name)
