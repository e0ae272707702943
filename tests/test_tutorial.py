"""docs/tutorial.md, followed as a reader would: every file it shows is
written (the block after a ``<!-- file: NAME -->`` line), every command of
its ``console`` blocks is run in order in one shell, in a fresh folder with
a fresh HOME, and what the tutorial shows after a command must be exactly
what the command printed.

- The install commands really make a virtual environment and install this
  checkout into it (``.`` is the checkout), so the rest runs from an
  installed wheel, not from the tree.
- ``sbatch job.sh`` runs the job script's body with the environment that
  Slurm gives a job of that script (a stub: SLURM_JOB_ID, SLURM_NTASKS,
  SLURM_CPUS_PER_TASK, the node list of this host, ...); its output goes to
  ``slurm-JOBID.out`` as Slurm's would, and must hold what the program
  prints.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import socket
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import HAVE_MPI, MPI_MISSING_REASON, REPO

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not HAVE_MPI, reason=MPI_MISSING_REASON)]

TUTORIAL = REPO / "docs" / "tutorial.md"
FILE_RE = re.compile(r"^<!-- file: (\S+) -->$")
JOB_ID = "4242"


@dataclass
class Step:
    command: str
    expected: list[str] = field(default_factory=list)


def parse(text: str) -> tuple[dict[str, str], list[Step]]:
    """The files (name -> text) and the console steps of the tutorial, in
    order."""
    files: dict[str, str] = {}
    steps: list[Step] = []
    lines = text.splitlines()
    i = 0
    pending: str | None = None
    while i < len(lines):
        m = FILE_RE.match(lines[i])
        if m:
            pending = m.group(1)
            i += 1
            continue
        if lines[i].startswith("```"):
            lang = lines[i][3:].strip()
            j = i + 1
            while not lines[j].startswith("```"):
                j += 1
            body = lines[i + 1:j]
            if pending is not None:
                files[pending] = "\n".join(body) + "\n"
                pending = None
            elif lang == "console":
                for ln in body:
                    if ln.startswith("$ "):
                        steps.append(Step(ln[2:]))
                    else:
                        steps[-1].expected.append(ln)
            i = j + 1
            continue
        i += 1
    return files, steps


def test_tutorial_parses() -> None:
    files, steps = parse(TUTORIAL.read_text())
    assert {"hello.sgl", "sum.sgl", "stay.sgl", "hosts", "job.sh", "use.py"} <= set(files)
    assert any(s.command == "sbatch job.sh" for s in steps)
    assert all(s.command.strip() for s in steps)


def _slurm_stub(work: Path) -> str:
    """`sbatch job.sh` as Slurm would run it on this host: the script's
    body with a job's environment, its output in slurm-JOBID.out."""
    host = socket.gethostname()
    script = (work / "job.sh").read_text()
    ntasks = re.search(r"^#SBATCH --ntasks=(\d+)", script, re.M)
    cpus = re.search(r"^#SBATCH --cpus-per-task=(\d+)", script, re.M)
    assert ntasks and cpus, "job.sh names --ntasks and --cpus-per-task"
    env = {"SLURM_JOB_ID": JOB_ID, "SLURM_JOBID": JOB_ID, "SLURM_NTASKS": ntasks.group(1),
           "SLURM_NPROCS": ntasks.group(1), "SLURM_CPUS_PER_TASK": cpus.group(1),
           "SLURM_JOB_NODELIST": host, "SLURM_NODELIST": host, "SLURM_NNODES": "1",
           "SLURM_JOB_NUM_NODES": "1", "SLURM_TASKS_PER_NODE": ntasks.group(1),
           "SLURM_JOB_CPUS_PER_NODE": str(int(ntasks.group(1)) * int(cpus.group(1))),
           "SLURM_SUBMIT_DIR": str(work)}
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    return (f"echo 'Submitted batch job {JOB_ID}'; "
            f"env {exports} bash job.sh > slurm-{JOB_ID}.out 2>&1")


def test_tutorial_as_a_reader(tmp_path: Path) -> None:
    files, steps = parse(TUTORIAL.read_text())
    work = tmp_path / "work"
    home = tmp_path / "home"
    work.mkdir()
    home.mkdir()
    for name, text in files.items():
        (work / name).write_text(text)
    script = ["set -u"]
    for k, step in enumerate(steps):
        cmd = step.command
        if cmd.startswith("sbatch "):
            cmd = _slurm_stub(work)
        # the install is of this checkout
        cmd = cmd.replace("pip install -q '.[numpy]'", f"pip install -q '{REPO}[numpy]'")
        script.append(f"echo '@@step {k}'")
        script.append(f"{{ {cmd}\n}} 2>>stderr-{k}.txt")
        script.append(f"echo \"@@rc {k} $?\"")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("VIRTUAL_ENV", "SGL_", "PYTHON"))}
    env.update(HOME=str(home), SGLC_CACHE=str(tmp_path / "cache"),
               OMPI_MCA_orte_tmpdir_base=str(tmp_path), OMP_NUM_THREADS="2")
    if os.geteuid() == 0:  # the tutorial says to set these as root
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    # the venv's python3 must not be this test's own
    env["PATH"] = ":".join(p for p in env["PATH"].split(":")
                           if not Path(p, "sglc").exists() or p.startswith(str(home)))
    proc = subprocess.run(["bash", "-c", "\n".join(script)], cwd=work, env=env,
                          capture_output=True, text=True, timeout=900)
    outputs: dict[int, list[str]] = {}
    rcs: dict[int, int] = {}
    current = -1
    for ln in proc.stdout.splitlines():
        if ln.startswith("@@step "):
            current = int(ln.split()[1])
            outputs[current] = []
        elif ln.startswith("@@rc "):
            _, k, rc = ln.split()
            rcs[int(k)] = int(rc)
        else:
            outputs.setdefault(current, []).append(ln)
    for k, step in enumerate(steps):
        err = (work / f"stderr-{k}.txt").read_text() if (work / f"stderr-{k}.txt").exists() else ""
        where = f"step {k + 1}: $ {step.command}"
        assert rcs.get(k) == 0, f"{where}: exit {rcs.get(k)}\n{err[-3000:]}\n{proc.stderr[-2000:]}"
        if step.command.startswith("sbatch "):
            assert outputs[k] == [f"Submitted batch job {JOB_ID}"]
            continue
        if step.expected:
            assert outputs[k] == step.expected, f"{where}\n--- printed\n" + "\n".join(outputs[k])
        if "--sgl-stats" in step.command:
            assert "sgl-stats: level" in err, err
    job_out = (work / f"slurm-{JOB_ID}.out").read_text()
    for line in ("below 250 : 250000", "below 750 : 750000"):
        assert line in job_out, job_out
    assert (work / "trace.json").is_file()
    page = (work / "run.html").read_text()  # the picture of the 2x2 run: 7 nodes
    assert page.startswith("<!DOCTYPE html>") and "sgl-data" in page, page[:200]
    assert shutil.which("sglc", path=str(home / "sgl-venv" / "bin"))
