"""python/job-run (docs/bench.md): a job's loaded program run from Python
(rig.job.JobProgram.run) beside the same loop written against the C API
(pyjob_floor.c, loaded with ctypes), in the same processes, on the same
job and the same loaded program, batches alternating which goes first.

    mpirun -n 2 python3 bench/python_job.py [BUILD [RESULTS]]

BUILD is the build tree (build/default), whose python/ holds the package
and bench/pyjob_floor.so the floor; RESULTS where the rows are appended
(bench.h's bench_results_path: $RIG_BENCH_RESULTS, else
bench/results.jsonl). Rows, a sample a batch's time at machine 0 over its
runs (each batch a series of RUNS runs, the results gathered to machine 0
at its end, in both):

- python/job-run: examples/saxpy.json on every machine (ints 4);
- python/job-run pipeline: examples/pipeline.json's two programs and its
  rail (ints "run"), a run of about a microsecond, where the calls' own
  cost shows most.

Target: the row's median <= 1.1x the floor's. RIG_BENCH_PYJOB_BATCHES and
RIG_BENCH_PYJOB_RUNS change the counts."""
import ctypes
import json
import os
import sys
import time

from mpi4py import MPI

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/default")
sys.path.insert(0, os.path.join(BUILD, "python"))
import rig  # noqa: E402
from rig import _lib  # noqa: E402
from rig.job import Job  # noqa: E402

BATCHES = int(os.environ.get("RIG_BENCH_PYJOB_BATCHES", "20"))
RUNS = int(os.environ.get("RIG_BENCH_PYJOB_RUNS", "500"))
TARGET = 1.1
EXAMPLES = os.path.join(BUILD, "examples")

floor = ctypes.CDLL(os.path.join(BUILD, "bench", "pyjob_floor.so"))
floor.pyjob_floor_runs.restype = ctypes.c_uint64
floor.pyjob_floor_runs.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(_lib.Frame),
                                   ctypes.POINTER(ctypes.c_int64), ctypes.c_int, ctypes.c_uint64,
                                   ctypes.c_uint64, _lib.ERR]
for f in ("bench_median", "bench_p99"):
    getattr(floor, f).restype = ctypes.c_double
    getattr(floor, f).argtypes = [ctypes.POINTER(ctypes.c_double), ctypes.c_size_t]


class Row(ctypes.Structure):  # bench.h's bench_row
    _fields_ = [("name", ctypes.c_char_p), ("unit", ctypes.c_char_p),
                ("median", ctypes.c_double), ("floor_median", ctypes.c_double),
                ("ratio", ctypes.c_double), ("samples", ctypes.c_size_t),
                ("target", ctypes.c_char_p), ("ok", ctypes.c_bool)]


def stat(fn, xs):
    a = (ctypes.c_double * len(xs))(*xs)
    return fn(a, len(xs))


def measure(job, name, programs, rails, ints):
    with job.load(programs, rails=rails) as lp:
        p = lp._p
        frame, iv = p.frame([0 if x == "run" else x for x in ints])
        slot = ints.index("run") if "run" in ints else -1
        err = _lib.error()

        def python_batch():
            t0 = time.perf_counter_ns()
            lp.run(RUNS, ints)
            return time.perf_counter_ns() - t0

        def c_batch():
            # Numbered on from the load's runs, the row's included.
            ns = floor.pyjob_floor_runs(job._h, p._h, ctypes.byref(frame), iv, slot, lp._runs,
                                        RUNS, err)
            lp._runs += RUNS
            if ns == 0:
                job._raise_cause() if _lib.lib.rig_job_failed(job._h, None) else \
                    sys.exit(f"python_job: {err.message.decode()}")
            return ns

        python_batch(), c_batch()  # warm-up, untimed
        row, flo = [], []
        for b in range(BATCHES):
            pair = (python_batch, c_batch) if b % 2 == 0 else (c_batch, python_batch)
            got = {f: f() / RUNS / 1e3 for f in pair}
            row.append(got[python_batch])
            flo.append(got[c_batch])
    if job.rank != 0:
        return
    m, fm = stat(floor.bench_median, row), stat(floor.bench_median, flo)
    r = Row(name.encode(), b"us", m, fm, m / fm, BATCHES, f"<= {TARGET}x".encode(),
            m / fm <= TARGET)
    argv = (ctypes.c_char_p * 2)(b"python_job", RESULTS.encode() if RESULTS else b"")
    floor.bench_report(2 if RESULTS else 1, argv, ctypes.byref(r))
    print(f"{name}: p99 {stat(floor.bench_p99, row):.2f} us, floor p99 "
          f"{stat(floor.bench_p99, flo):.2f} us; over the floor {(m - fm) * 1e3:.0f} ns a run",
          file=sys.stderr)


RESULTS = sys.argv[2] if len(sys.argv) > 2 else None
with Job(MPI.COMM_WORLD) as job:
    if job.machines != 2:
        job.fail("python_job: runs on 2 ranks (mpirun -n 2)")
    if job.rank == 0:
        floor.bench_print_header()
    saxpy = rig.Description.read(os.path.join(EXAMPLES, "saxpy.json"))
    measure(job, "python/job-run", saxpy, (), [4])
    jf = json.load(open(os.path.join(EXAMPLES, "pipeline.json")))
    progs = [rig.Description.read(os.path.join(EXAMPLES, m["program"])) for m in jf["machines"]]
    measure(job, "python/job-run pipeline", progs, jf["rails"], ["run"])
