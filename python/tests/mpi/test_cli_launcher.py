"""python -m rig started by mpirun: every rank of mpirun -n 2 or 3 runs
it, as the issue's `mpirun -n 2 python3 -m rig run pipeline.json` does
(the command inherits this rank's launcher environment), and each rank's
exit and words are gathered."""
import os
import subprocess
import sys

from mpi4py import MPI
from conftest import EXAMPLES

COMM = MPI.COMM_WORLD
PIPELINE = os.path.join(EXAMPLES, "pipeline.json")
SAXPY = os.path.join(EXAMPLES, "saxpy.json")


def every_rank(*args):
    r = subprocess.run([sys.executable, "-m", "rig", *args], capture_output=True, text=True,
                       timeout=120)
    return COMM.allgather((r.returncode, r.stderr))


def test_a_job_file_run_under_mpirun_is_refused_by_rank_0_naming_progrun():
    """Exit 2 on every rank, rank 0 alone saying what runs it (not
    `description: unknown field "runs"` from each)."""
    said = every_rank("run", PIPELINE, "--runs", "5")
    want = f"rig: {PIPELINE}: a job file: run it with progrun (mpirun -n 2 progrun {PIPELINE})\n"
    assert said == [(2, want)] + [(2, "")] * (COMM.size - 1)


def test_a_description_run_under_mpirun_is_refused_by_rank_0_naming_progrun():
    """Each rank would run it alone, not as progrun's job of every machine."""
    said = every_rank("run", SAXPY, "--ints", "4")
    want = (f"rig: {SAXPY}: under a launcher each rank would run it alone: run it with "
            f"progrun (mpirun -n {COMM.size} progrun {SAXPY})\n")
    assert said == [(2, want)] + [(2, "")] * (COMM.size - 1)
