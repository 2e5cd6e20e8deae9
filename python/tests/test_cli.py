"""python -m rig says what progrun says, for check, dump and a local run."""
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import EXAMPLES, PROGRUN

SAXPY = os.path.join(EXAMPLES, "saxpy.json")


def both(*args, cwd=None):
    """(exit, stdout, stderr) of progrun and of python -m rig, each
    message's prefix (the tool's name) left out."""
    out = []
    for cmd, prefix in (([PROGRUN], "progrun: "), ([sys.executable, "-m", "rig"], "rig: ")):
        r = subprocess.run(cmd + list(args), capture_output=True, text=True, timeout=120, cwd=cwd)
        err = "\n".join(line[len(prefix):] if line.startswith(prefix) else line
                        for line in r.stderr.splitlines())
        out.append((r.returncode, r.stdout, err))
    return out


def test_check_of_a_good_description_says_ok():
    assert both("check", SAXPY) == [(0, "ok\n", "")] * 2


def test_check_of_a_broken_rule_says_the_rule(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"devices": ["x86_64"], "memory": [{"Alloc": {"device": 0, "kind": "Device",'
                   ' "bytes": 64, "copies": "One"}}], "steps": [{"Submit": {"device": 0, "parts":'
                   ' [{"Words": {"memory": 0, "offset": 60, "length": 8}}]}}]}')
    (p, r) = both("check", str(bad))
    assert p == r
    assert r == (2, "", f"{bad}: step 0: memory 0: a view of 8 bytes at 60 outside its 64 bytes")


@pytest.mark.parametrize("args", [["dump"], ["dump", "--json"]])
def test_dump_prints_progruns_listing(args):
    (p, r) = both(*args, SAXPY)
    assert p == r and r[0] == 0


def test_a_missing_file_is_the_same_message():
    (p, r) = both("check", "/nonexistent/p.json")
    assert p == r and r[0] == 2


def test_a_local_run_writes_progruns_output(tmp_path):
    x = tmp_path / "x.bin"
    x.write_bytes(np.arange(1024, dtype=np.float32).tobytes())
    runs = []
    for name in ("y1.bin", "y2.bin"):
        runs.append(str(tmp_path / name))
    for cmd, y in (([PROGRUN], runs[0]), ([sys.executable, "-m", "rig"], runs[1])):
        r = subprocess.run(cmd + ["run", SAXPY, "--runs", "3", "--ints", "4", "--input",
                                  f"0={x}", "--output", f"1={y}"],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0 and r.stdout.startswith("runs 3, min ")
    assert open(runs[0], "rb").read() == open(runs[1], "rb").read()


@pytest.mark.parametrize("args", [["--devices", "host,cpu:9"], ["--ints", "1,2,3"],
                                  ["--input", "5=x.bin"], ["--devices", "host"]])
def test_a_run_option_that_does_not_fit_is_the_same_message(args):
    (p, r) = both("run", SAXPY, *args)
    assert p == r and r[0] == 2


def test_a_local_runs_files_are_the_same_messages(tmp_path):
    """The run is librig's, as progrun's: an input's file too long for
    its input, an output's folder missing, each told alike, no file made."""
    big = tmp_path / "big.bin"
    big.write_bytes(bytes(4097))
    y = tmp_path / "no-dir" / "y.bin"
    for args in (["--input", f"0={big}"], ["--output", f"1={y}"]):
        (p, r) = both("run", SAXPY, *args)
        assert p == r and r[0] == 2 and r[2]
    assert not y.parent.exists()


def test_an_input_given_twice_is_the_same_refusal(tmp_path):
    x = tmp_path / "x.bin"
    x.write_bytes(bytes(16))
    for code, out, err in both("run", SAXPY, "--input", f"0={x}", "--input", f"0={x}"):
        # The line after names each tool's own help.
        assert (code, out, err.splitlines()[0]) == (2, "", "run: --input 0 given twice")


def test_an_output_given_twice_writes_both_files(tmp_path):
    x = tmp_path / "x.bin"
    x.write_bytes(np.arange(1024, dtype=np.float32).tobytes())
    ys = [tmp_path / "y1.bin", tmp_path / "y2.bin"]
    r = subprocess.run([sys.executable, "-m", "rig", "run", SAXPY, "--ints", "4", "--input",
                        f"0={x}", "--output", f"1={ys[0]}", "--output", f"1={ys[1]}"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert ys[0].read_bytes() == ys[1].read_bytes() and len(ys[0].read_bytes()) == 4096


PIPELINE = os.path.join(EXAMPLES, "pipeline.json")


def rig_cli(*args):
    """(exit, stderr) of python -m rig."""
    r = subprocess.run([sys.executable, "-m", "rig", *args], capture_output=True, text=True,
                       timeout=120)
    return r.returncode, r.stderr


@pytest.mark.parametrize("cmd, says", [
    ("run", f"run it with progrun (mpirun -n 2 progrun {PIPELINE})"),
    ("check", f"check it with progrun (progrun check {PIPELINE})"),
    ("dump", f"dump it with progrun (progrun dump {PIPELINE})")])
def test_a_job_file_is_refused_naming_the_progrun_command_that_takes_it(cmd, says):
    assert rig_cli(cmd, PIPELINE) == (2, f"rig: {PIPELINE}: a job file: {says}\n")
