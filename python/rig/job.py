"""A job over an mpi4py communicator (rig_job_start on it): every rank
loads its own program on its own devices (one description for all, or
one per machine), rails between machines made first, runs begun and ended
by the job's tree, and each machine's outputs gathered to rank 0. A
failure anywhere is the job's root cause, raised as JobError on every
rank, with the same status and message (docs/python.md "Jobs")."""
import atexit
import ctypes
import json
import sys
import time
import traceback
import weakref

import numpy as np

from . import _lib
from ._lib import JobError, RigError, lib
from .program import Program


def _comm_handle(comm):
    """The MPI_Comm of an mpi4py communicator, as C takes it."""
    from mpi4py import MPI
    return ctypes.c_void_p(MPI._handleof(comm))


class Job:
    """Starts the job on comm (collective; needs MPI_THREAD_MULTIPLE,
    mpi4py's default). Use as a context manager, or close() it."""

    def __init__(self, comm):
        h, err = ctypes.c_void_p(), _lib.error()
        _lib.check(lib.rig_job_start(_comm_handle(comm), ctypes.byref(h), err), err, JobError)
        self._h = h
        self._told = None  # the root cause as every rank raises it, once settled
        self.rank = lib.rig_job_rank(h)
        self.machines = lib.rig_job_machines(h)
        self._rails = []
        self._loaded = weakref.WeakSet()  # JobPrograms, released before the job closes
        # An interpreter that exits with the job open fails it, told,
        # rather than leave the other ranks waiting for this one.
        atexit.register(_left_open, weakref.ref(self))

    # ---- failing -----------------------------------------------------------
    def _cause(self):
        """The job's root cause as every rank raises it: (status, message).
        Settled once, as progrun tells it: rank 0 waits for each machine's
        word (up to the silence bound), names the machines that failed alike
        together, sends that to the others and lets them go; the others
        send their word and wait for it. A rank 0 out of reach leaves an
        agent its own cause. The status is what the cause stands for
        (RIG_EINVAL for a broken rule, RIG_EREFUSED for a device's refusal,
        ...), RIG_EJOB for a failure of the job itself."""
        if self._told is not None:
            return self._told
        failed = lib.rig_job_failed(self._h, None)
        if failed and self.rank == 0:
            lib.rig_job_told_cause(self._h, lib.rig_job_silence(), None)
            lib.rig_job_goodbye(self._h)
        elif failed:
            lib.rig_job_await_told(self._h)
        err = _lib.error()
        code = lib.rig_job_cause(self._h, err)
        if code == _lib.OK:  # not failed: never so when a call said RIG_EJOB
            lib.rig_job_failed(self._h, err)
            code = _lib.EJOB
        told = (_lib.status_name(code), err.message.decode(errors="replace"))
        if failed:
            self._told = told
        return told

    def _raise_cause(self):
        raise JobError(*self._cause())

    def _call(self, status, err):
        """A collective's status: its root cause as JobError."""
        if status != _lib.OK:
            if status == _lib.EJOB or lib.rig_job_failed(self._h, None):
                self._raise_cause()
            _lib.check(status, err)

    def fail(self, message, status=None):
        """Fails the job with message as its root cause (every rank learns
        it, and what it stands for: status a RigError's, such as
        "RIG_EINVAL"; none is "RIG_EJOB"), then raises it here."""
        # Even after another machine's failure: this one's word goes to
        # rank 0 all the same, which names machines that failed alike together.
        code = _lib.CODES.get(status, _lib.EJOB)
        lib.rig_job_fail_as(self._h, ctypes.c_int(code), b"%s", ctypes.c_char_p(message.encode()))
        self._raise_cause()

    def label(self, m):
        return lib.rig_job_label(self._h, m).decode()

    # ---- rails -------------------------------------------------------------
    def _make_rails(self, rails):
        """Rank 0 makes each rail {"id", "between": [a, b], "send":
        [(src, dst, length)...], "receive": [...]} (a job file's form)."""
        for i, r in enumerate(rails):
            a, b = r["between"]
            send = [_transfer(t) for t in r.get("send", [])]
            recv = [_transfer(t) for t in r.get("receive", [])]
            sa = (_lib.RailTransfer * max(1, len(send)))(*send)
            ra = (_lib.RailTransfer * max(1, len(recv)))(*recv)
            rail, err = ctypes.c_void_p(), _lib.error()
            st = lib.rig_job_rail_as(self._h, r["id"], a, b, sa, len(send), ra, len(recv),
                                     ctypes.byref(rail), err)
            if st != _lib.OK:
                self.fail(f"rails[{i}]: {err.message.decode()}", _lib.status_name(st))
            self._rails.append(rail)

    def _agree(self, mine):
        all_, err = ctypes.c_bool(), _lib.error()
        self._call(lib.rig_job_agree(self._h, mine, ctypes.byref(all_), err), err)
        return all_.value

    # ---- every machine's program -------------------------------------------
    def load(self, program, rails=(), devices=None):
        """Every rank loads its program on its own devices, once, for runs
        as many as wanted (JobProgram.run): `program` a Description (the
        same on every machine) or a list of one per machine; rails, in a
        job file's form, made by rank 0 before any machine loads; devices
        this machine's names, or a list of one list per machine. Returns
        the loaded JobProgram, every machine's loaded. Collective."""
        made, p = len(self._rails), None
        try:
            if self.rank == 0:
                self._make_rails(list(rails))
            # The rails are made before any machine loads its program.
            self._agree(True)
            desc = program[self.rank] if isinstance(program, (list, tuple)) else program
            if isinstance(devices, (list, tuple)) and devices and \
                    isinstance(devices[0], (list, tuple)):
                devices = devices[self.rank]
            p = Program(desc, devices, rails=lib.rig_job_rails(self._h))
        except JobError:
            raise
        except Exception as e:
            self._fail_from(e)
        try:
            # Every machine loaded before the first run begins.
            if not self._agree(True):
                self._raise_cause()
        except BaseException:
            p.close()
            raise
        jp = JobProgram(self, p, self._rails[made:])
        self._loaded.add(jp)
        return jp

    def run(self, program, rails=(), devices=None, inputs=None, ints=(), runs=1, outputs=()):
        """load, inputs set, run and close in one call: `inputs` {i: array}
        this machine's; the rest as load's and JobProgram.run's. Returns
        what JobProgram.run returns. Collective."""
        with self.load(program, rails, devices) as p:
            try:
                for i, values in (inputs or {}).items():
                    p.set_input(i, values)
            except JobError:
                raise
            except Exception as e:
                self._fail_from(e)
            return p.run(runs, ints, outputs)

    def _fail_from(self, e):
        """A fault of this machine's is the job's root cause, said once."""
        msg = e.message if isinstance(e, RigError) else str(e)
        self.fail(f"{self.label(self.rank)}: {msg}", getattr(e, "status", None))

    def _gather(self, mine):
        data = _encode(mine)
        n = self.machines
        parts, lens, err = (ctypes.c_void_p * n)(), (ctypes.c_size_t * n)(), _lib.error()
        if self.rank != 0:
            parts = lens = None
        self._call(lib.rig_job_gather(self._h, data, len(data), parts, lens, err), err)
        if self.rank != 0:
            return mine
        out = [mine]
        for m in range(1, n):
            try:
                out.append(_decode(ctypes.string_at(parts[m], lens[m])))
            finally:
                _lib.libc.free(parts[m])
        return out

    # ---- the end -----------------------------------------------------------
    def close(self):
        """Ends the job on every rank: rank 0 closes it, the others serve
        until it does. Raises JobError when the job had failed."""
        if not getattr(self, "_h", None):
            return
        # Programs still loaded go before the rails they use.
        for jp in list(self._loaded):
            jp._release_here()
        h, err = self._h, _lib.error()
        st = _lib.OK
        if lib.rig_job_rank(h) != 0:
            st = lib.rig_job_serve(h, err)
        # The cause as the runs raised it, settled before the job is freed.
        told = self._cause() if lib.rig_job_failed(h, None) else None
        self._h = None
        cst = lib.rig_job_close(h, err if st == _lib.OK else _lib.error())
        if told:
            raise JobError(*told)
        if st != _lib.OK or cst != _lib.OK:
            # Failed in the close itself (a machine lost then).
            raise JobError("RIG_EJOB", err.message.decode(errors="replace"))

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        if kind is not None and not issubclass(kind, JobError):
            # The block raised: the job's root cause, this machine's, so
            # that no rank waits for this one (a JobError is the cause).
            self._fail_raised(kind, value, tb)
        try:
            self.close()
        except JobError:
            if kind is None:
                raise

    def _fail_raised(self, kind, value, tb):
        """A block raised: its traceback is printed here first, since once
        the job fails the launcher may end this rank before the interpreter
        prints it; then the job fails with it as this machine's cause."""
        traceback.print_exception(kind, value, tb)
        sys.stderr.flush()
        try:
            value._rig_printed = True  # the excepthook prints it once only
        except AttributeError:
            pass
        self._fail_quietly(f"{kind.__name__}: {value}" if str(value) else kind.__name__)

    def _fail_quietly(self, why):
        """Fails the job with "<this machine>: why" unless it failed."""
        if getattr(self, "_h", None) and not lib.rig_job_failed(self._h, None):
            lib.rig_job_fail(self._h, b"%s", ctypes.c_char_p(f"{self.label(self.rank)}: {why}".encode()))


class JobProgram:
    """Every machine's program of a job, loaded once (Job.load): this
    machine's inputs as numpy arrays, run as many times as wanted with
    the inputs changed between runs. Use as a context manager, or
    close() it."""

    def __init__(self, job, program, rails):
        self._job, self._p, self._rails = job, program, rails
        self._runs = 0  # runs since the load: a "run" int goes on counting
        self.rank, self.machines = job.rank, job.machines
        self.devices = program.devices

    # ---- this machine's inputs ---------------------------------------------
    def input(self, i, dtype=np.uint8):
        """This machine's input i as Program.input gives it: a view of its
        memory where the host addresses it, else a copy."""
        return self._open().input(i, dtype)

    def set_input(self, i, values):
        """This machine's input i from an array (or bytes), as
        Program.set_input."""
        self._open().set_input(i, values)

    @property
    def ninputs(self):
        return self._open().ninputs

    def _open(self):
        if self._p is None:
            raise RigError("RIG_EINVAL", "the job's program is closed")
        return self._p

    # ---- runs --------------------------------------------------------------
    def run(self, runs=1, ints=(), outputs=()):
        """Every machine runs its program `runs` times, the job's tree
        beginning and ending each run: ints as Program.run's, but "run" is
        the run's index since the load (a rail's counts go on from the
        call before: its kernels wait for that run's), "rank" this
        machine's; outputs the input
        indices whose bytes come back. Returns, on rank 0, a list of one
        dict per machine {"outputs": {i: bytes}, "times": [ns...],
        "devices": [names]}; on the others their own dict. Collective."""
        mine = {}
        try:
            mine = self._run_here(runs, ints, outputs)
        except JobError:
            raise
        except Exception as e:
            self._job._fail_from(e)
        return self._job._gather(mine)

    def _run_here(self, runs, ints, outputs):
        job, p = self._job, self._open()
        outputs = list(outputs)
        for i in outputs:
            if not 0 <= i < p.ninputs:
                raise RigError("RIG_EINVAL", f"output {i}: no such input (the program has "
                               f"{p.ninputs})")
        ints = list(ints)
        frame, iv = p.frame([0 if x == "run" else job.rank if x == "rank" else x for x in ints])
        slots = [k for k, x in enumerate(ints) if x == "run"]
        # The loop's calls and arguments made once: a run costs what the C
        # loop does plus the calls' own (docs/bench.md, python/job-run).
        h, ph, fref, ends = job._h, p._h, ctypes.byref(frame), p._ends
        nends, err, rv, nsv = ctypes.c_size_t(), _lib.error(), ctypes.c_uint64(), ctypes.c_uint64()
        nref, eref, none = ctypes.byref(nends), ctypes.byref(err), ctypes.c_size_t(0)
        now, times = time.perf_counter_ns, []
        # No start past the last run goes down the tree.
        lib.rig_job_runs_plan(h, runs)
        for r in range(self._runs, self._runs + runs):
            rv.value = r
            st = _begin(h, rv, eref)
            if st:
                job._call(st, err)
            for k in slots:
                iv[k] = r
            t0 = now()
            st = _prun(ph, fref, None, none, ends, nref, eref)
            if not st:
                st = _pwait(ends, nends, eref)
            ns = now() - t0
            if st:
                _lib.check(st, err)
            times.append(ns)
            nsv.value = ns
            st = _end(h, rv, nsv, None, eref)
            if st:
                job._call(st, err)
        # The run still in flight ends everywhere (rig_job_runs_done).
        job._call(lib.rig_job_runs_done(h, None, err), err)
        self._runs += runs
        outs = {i: p.input(i).tobytes() for i in outputs}
        return {"outputs": outs, "times": times, "devices": p.devices}

    # ---- the end -----------------------------------------------------------
    def close(self):
        """Releases the program on every machine, then its rails.
        Collective, unless the job failed (each machine then releases its
        own, and the job's close the rails). Arrays of input() stay
        readable."""
        if self._p is None:
            return
        self._release_here()
        job = self._job
        if not getattr(job, "_h", None) or lib.rig_job_failed(job._h, None):
            return
        # Every machine's program released before the rails it used, so
        # that the same rails can be made again by the next load.
        if job._agree(True) and job.rank == 0:
            for r in self._rails:
                lib.rig_rail_release(r)
                job._rails.remove(r)
        self._rails = []

    def _release_here(self):
        if self._p is not None:
            self._p.close()
            self._p = None
            self._job._loaded.discard(self)

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        if kind is not None and not issubclass(kind, JobError):
            # As a Job's block: this machine's failure, so that no rank
            # waits in a run for this one.
            self._job._fail_raised(kind, value, tb)
        try:
            self.close()
        except JobError:
            if kind is None:
                raise


_excepthook = sys.excepthook


def _once(kind, value, tb):
    """An exception a Job's block printed as it failed the job is not
    printed again at the interpreter's exit."""
    if not getattr(value, "_rig_printed", False):
        _excepthook(kind, value, tb)


sys.excepthook = _once


# JobProgram.run's calls a run (_lib.unchecked): every argument a ctypes value.
_begin = _lib.unchecked("rig_job_run_begin")
_end = _lib.unchecked("rig_job_run_end")
_prun = _lib.unchecked("rig_program_run")
_pwait = _lib.unchecked("rig_points_wait")


def _left_open(ref):
    job = ref()
    if job is not None and getattr(job, "_h", None):
        job._fail_quietly("the interpreter exited with the job open")
        try:
            job.close()
        except JobError:
            pass


def _transfer(t):
    if isinstance(t, dict):
        return _lib.RailTransfer(t["src"], t["dst"], t["length"])
    return _lib.RailTransfer(*t)


# A machine's results on the wire: a JSON line (times, devices, each
# output's index and length), then the outputs' bytes in that order. No
# pickle: bytes from another process are read as data, bounded and checked.
def _encode(mine):
    outs = mine.get("outputs", {})
    head = {"times": mine.get("times", []), "devices": mine.get("devices", []),
            "outputs": [[int(i), len(b)] for i, b in outs.items()]}
    return json.dumps(head).encode() + b"\n" + b"".join(outs.values())


def _decode(data):
    end = data.find(b"\n")
    if end < 0:
        raise JobError("RIG_EMALFORMED", "a machine's results: no header")
    head = json.loads(data[:end])
    body, at, outs = data[end + 1:], 0, {}
    for i, n in head.get("outputs", []):
        if not isinstance(n, int) or n < 0 or at + n > len(body):
            raise JobError("RIG_EMALFORMED", f"a machine's results: output {i} past their bytes")
        outs[int(i)] = body[at:at + n]
        at += n
    if at != len(body):
        raise JobError("RIG_EMALFORMED", "a machine's results: bytes past their outputs")
    return {"outputs": outs, "times": head.get("times", []), "devices": head.get("devices", [])}
