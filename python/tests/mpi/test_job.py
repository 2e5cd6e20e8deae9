"""Jobs from an mpi4py communicator, on every rank of mpirun -n 2 or 3:
every rank runs these tests in order, so their collectives meet."""
import json
import os
import re

import numpy as np
import pytest
import rig
from mpi4py import MPI
from rig.job import Job
from conftest import EXAMPLES

COMM = MPI.COMM_WORLD
TRIPS = 4


def expected_y(x, trips):
    x, y = x.astype(np.float64), x.astype(np.float64)
    for t in range(trips):
        y = 2 * x + y
        x = 1.5 * x + t
    return y.astype(np.float32)


def x_of(m):
    return ((np.arange(1024) + m) % 17 - 3).astype(np.float32)


def test_one_description_runs_on_every_machine_each_with_its_inputs():
    d = rig.Description.read(os.path.join(EXAMPLES, "saxpy.json"))
    with Job(COMM) as job:
        res = job.run(d, inputs={0: x_of(job.rank)}, ints=[TRIPS], runs=3, outputs=[1])
    if COMM.rank == 0:
        assert len(res) == COMM.size
        for m, r in enumerate(res):
            assert r["outputs"][1] == expected_y(x_of(m), TRIPS).tobytes()
            assert len(r["times"]) == 3


def test_one_description_per_machine_with_a_rail_between_machines():
    """pipeline.json's two programs on machines 0 and 1, the rest idle
    (an empty description), and its rail: machine 1 sums what 0 sends."""
    jf = json.load(open(os.path.join(EXAMPLES, "pipeline.json")))
    progs = [rig.Description.read(os.path.join(EXAMPLES, m["program"])) for m in jf["machines"]]
    progs += [rig.Description.of_dict({})] * (COMM.size - 2)
    with Job(COMM) as job:
        res = job.run(progs, rails=jf["rails"], ints=["run"] if job.rank < 2 else [], runs=5,
                      outputs=[0] if job.rank == 1 else [])
    if COMM.rank == 0:
        sums = np.frombuffer(res[1]["outputs"][0], np.int64)
        # What `mpirun -n 2 progrun pipeline.json --runs 5` writes too:
        # word i is 5 * (i + 2), its sum over the 5 runs.
        assert sums.tolist() == [5 * (i + 2) for i in range(sums.size)]


def test_the_root_cause_is_raised_on_every_rank():
    """Machine 1's description breaks a rule at its load: every rank raises
    JobError whose message is machine 1's, naming it, and whose status is
    what it stands for."""
    good = rig.Description.read(os.path.join(EXAMPLES, "saxpy.json"))
    bad = rig.Description.of_dict({
        "devices": ["x86_64"], "memory": [{"Alloc": {"device": 0, "kind": "Device",
                                                      "bytes": 64, "copies": "One"}}],
        "steps": [{"Submit": {"device": 0, "parts": [
            {"Words": {"memory": 0, "offset": 60, "length": 8}}]}}]})
    progs = [good] * COMM.size
    progs[1] = bad
    with pytest.raises(rig.JobError) as e:
        with Job(COMM) as job:
            job.run(progs, ints=[TRIPS])
    said = COMM.allgather((e.value.status, str(e.value)))
    # A rule broken: RIG_EINVAL on every rank, as progrun exits 2.
    assert said == [("RIG_EINVAL",
                     "machine 1: step 0: memory 0: a view of 8 bytes at 60 outside its 64 bytes")
                    ] * COMM.size


def test_a_block_that_raises_fails_the_job_with_its_cause_on_every_rank():
    """The last rank's block raises before its run: the job fails with its
    exception as the cause, which every other rank raises as JobError,
    instead of waiting for it in the run for ever."""
    d = rig.Description.read(os.path.join(EXAMPLES, "saxpy.json"))
    last = COMM.size - 1
    cause = f"machine {last}: ValueError: a test raised on rank {last}"
    if COMM.rank == last:
        with pytest.raises(ValueError):
            with Job(COMM) as job:
                raise ValueError(f"a test raised on rank {last}")
    else:
        with pytest.raises(rig.JobError) as e:
            with Job(COMM) as job:
                job.run(d, ints=[TRIPS], runs=3)
        assert str(e.value) == cause
    COMM.barrier()


def test_machines_failing_alike_raise_one_root_cause_with_one_status_on_every_rank():
    """Every machine launches a function its image lacks: each refuses its
    load, and every rank raises the same JobError, the machines that
    failed alike named together (as progrun tells it), with the status of
    the refusal, RIG_EREFUSED, as on one machine."""
    b = rig.build
    d = b.description(devices=["x86_64"], images=[b.image(0, b.data(b.file("kernels/hello.so")))],
                      steps=[b.Submit(0, parts=[b.Launch(0, "nosuch", 1, 1)])], base_dir=EXAMPLES)
    with pytest.raises(rig.RigError) as alone:
        rig.Program(d)
    with pytest.raises(rig.JobError) as e:
        with Job(COMM) as job:
            job.run(d)
    said = COMM.allgather((type(e.value), e.value.status, str(e.value)))
    assert said == [said[0]] * COMM.size
    assert said[0][1] == alone.value.status == "RIG_EREFUSED"
    # Those whose word rank 0 had when it told the cause: all of them,
    # unless a machine learned of the failure before its own load.
    assert re.fullmatch(r"machines? [0-9][0-9,-]*: " + re.escape(str(alone.value)), said[0][2])


def test_a_loaded_program_runs_again_over_inputs_changed_between_runs():
    """job.load loads once: the input arrays taken after the load are the
    inputs of every later run, each run seeing what was written between."""
    d = rig.Description.read(os.path.join(EXAMPLES, "saxpy.json"))
    with Job(COMM) as job:
        with job.load(d) as p:
            x = p.input(0, np.float32)  # a view, taken once
            for k in range(3):
                x[:] = x_of(job.rank) + k
                res = p.run(2, ints=[TRIPS], outputs=[1])
                if COMM.rank == 0:
                    for m, r in enumerate(res):
                        assert r["outputs"][1] == expected_y(x_of(m) + k, TRIPS).tobytes()
                        assert len(r["times"]) == 2
                else:
                    assert res["outputs"][1] == expected_y(x + 0, TRIPS).tobytes()


def test_a_loaded_program_keeps_its_memory_and_rails_from_one_run_call_to_the_next():
    """pipeline.json loaded once, run twice: its consumer's sum goes on
    from the first call's (no reload zeroes it), over the same rail, and
    the second call's runs are runs 5 to 9 of the load."""
    jf = json.load(open(os.path.join(EXAMPLES, "pipeline.json")))
    progs = [rig.Description.read(os.path.join(EXAMPLES, m["program"])) for m in jf["machines"]]
    progs += [rig.Description.of_dict({})] * (COMM.size - 2)
    ints = ["run"] if COMM.rank < 2 else []
    with Job(COMM) as job:
        with job.load(progs, rails=jf["rails"]) as p:
            p.run(5, ints=ints)
            res = p.run(5, ints=ints, outputs=[0] if job.rank == 1 else [])
    if COMM.rank == 0:
        sums = np.frombuffer(res[1]["outputs"][0], np.int64)
        # Word i of run r is i + r: summed over runs 0 to 9, 10 i + 45.
        assert sums.tolist() == [10 * i + 45 for i in range(sums.size)]


def test_the_same_rails_are_made_again_once_a_loaded_program_is_closed():
    """Job.run with a job file's rails, twice in one job: the second makes
    rail 1 again, the first's released when its program closed."""
    jf = json.load(open(os.path.join(EXAMPLES, "pipeline.json")))
    progs = [rig.Description.read(os.path.join(EXAMPLES, m["program"])) for m in jf["machines"]]
    progs += [rig.Description.of_dict({})] * (COMM.size - 2)
    ints = ["run"] if COMM.rank < 2 else []
    with Job(COMM) as job:
        for _ in range(2):
            res = job.run(progs, rails=jf["rails"], ints=ints, runs=5,
                          outputs=[0] if job.rank == 1 else [])
            if COMM.rank == 0:
                sums = np.frombuffer(res[1]["outputs"][0], np.int64)
                assert sums.tolist() == [5 * (i + 2) for i in range(sums.size)]


def test_a_machine_failing_a_run_of_a_loaded_program_raises_its_cause_on_every_rank():
    """The last machine's run fails (more ints than its program has) on
    the second call: every rank raises JobError naming it, with the
    status of the fault, none waiting for it."""
    d = rig.Description.read(os.path.join(EXAMPLES, "saxpy.json"))
    last = COMM.size - 1
    with pytest.raises(rig.JobError) as e:
        with Job(COMM) as job:
            with job.load(d) as p:
                p.run(1, ints=[TRIPS])
                p.run(1, ints=[TRIPS, 0, 0] if job.rank == last else [TRIPS])
    said = COMM.allgather((e.value.status, str(e.value)))
    assert said == [("RIG_EINVAL", f"machine {last}: 3 ints for a program of 2")] * COMM.size


def test_a_block_that_raises_with_a_loaded_program_fails_the_job_on_every_rank():
    """The last rank's block raises between runs of a loaded program: the
    other ranks' next run raises its cause as JobError, not waiting."""
    d = rig.Description.read(os.path.join(EXAMPLES, "saxpy.json"))
    last = COMM.size - 1
    cause = f"machine {last}: ValueError: a test raised on rank {last}"
    if COMM.rank == last:
        with pytest.raises(ValueError):
            with Job(COMM) as job:
                with job.load(d) as p:
                    p.run(1, ints=[TRIPS])
                    raise ValueError(f"a test raised on rank {last}")
    else:
        with pytest.raises(rig.JobError) as e:
            with Job(COMM) as job:
                with job.load(d) as p:
                    p.run(1, ints=[TRIPS])
                    p.run(3, ints=[TRIPS])
        assert str(e.value) == cause
    COMM.barrier()
