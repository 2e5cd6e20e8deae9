"""A Python rank that leaves a job, as a user's script does it, under a
real mpirun of 3 ranks: the job fails with that rank's cause, its
traceback is printed there, and every rank is out, none waiting for it."""
import os
import subprocess
import sys
import textwrap

import pytest
from conftest import EXAMPLES

pytestmark = pytest.mark.skipif(
    os.environ.get("RIG_TEST_MPI") != "openmpi" or not os.environ.get("RIG_TEST_MPIEXEC"),
    reason="needs Open MPI's mpiexec (Debian's mpi4py is Open MPI's)")

# The end of a hang, not a bound on how long a job takes.
HANG_S = 120


def run_ranks(tmp_path, body):
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent(f"""\
        import os, sys
        import rig
        from mpi4py import MPI
        from rig.job import Job
        d = rig.Description.read({os.path.join(EXAMPLES, "saxpy.json")!r})
        """) + textwrap.dedent(body))
    cmd = [os.environ["RIG_TEST_MPIEXEC"], "-n", "3",
           *os.environ.get("RIG_TEST_MPIEXEC_FLAGS", "").split(), sys.executable, str(script)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=HANG_S)


def test_a_rank_whose_block_raises_fails_the_job_and_prints_its_traceback(tmp_path):
    p = run_ranks(tmp_path, """\
        with Job(MPI.COMM_WORLD) as job:
            if job.rank == 2:
                raise ValueError("boom on two")
            job.run(d, ints=[2], runs=3)
        """)
    assert p.returncode != 0
    # Rank 2 prints its traceback before it fails the job (mpirun may end it
    # once another rank exits); the ranks' lines may interleave.
    lines = p.stderr.splitlines()
    assert 'raise ValueError("boom on two")' in p.stderr and "ValueError: boom on two" in lines, p.stderr
    # The other ranks raise the job's cause, machine 2's: the first to exit
    # may have mpirun end the other before its interpreter prints.
    assert "JobError: machine 2: ValueError: boom on two" in p.stderr, p.stderr


def test_a_rank_whose_interpreter_exits_with_the_job_open_fails_the_job(tmp_path):
    p = run_ranks(tmp_path, """\
        job = Job(MPI.COMM_WORLD)
        if job.rank == 2:
            sys.exit(0)
        job.run(d, ints=[2], runs=3)
        job.close()
        """)
    assert p.returncode != 0
    # At least one rank raises it: the first to exit may have mpirun end
    # the other before its interpreter prints.
    want = "JobError: machine 2: the interpreter exited with the job open\n"
    assert p.stderr.count(want) >= 1, p.stderr
