"""Multi-host runs on a cluster of network namespaces (tests/cluster.py).

Three hosts, each with its own network stack, hostname, /etc/hosts and
TMPDIR, on one bridge; Open MPI starts its daemons through the nsenter launch
agent and the ranks talk over TCP only. The programs run on 3 hosts with 1 or
2 ranks each (2 threads inside each rank) and must print exactly their golden
output, the one of a single host (the goldens of tests/test_programs.py). The
shared examples run with ``sglc run --hostfile`` / ``--host``, the test
programs with the mpirun line of ``sglc run`` (sglc.launch.launch_command) on
the session's compiled executables.

Marker ``cluster`` (``pytest -m cluster``). Skipped, with the reason, where
namespaces cannot be made (not root, no unshare/nsenter/ip) or MPI is missing.
``SGL_CLUSTER_RUNS`` sets the number of consecutive runs of
test_consecutive_runs (20).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cluster import SUBNET, Cluster, unavailable
from conftest import (
    HAVE_MPI,
    MPI_MISSING_REASON,
    REPO,
    SHARED,
    CompileCache,
    require_shared,
    run_checked,
    run_env,
    sglc_command,
)
from inputs import prepare
from test_programs import Case, _cases_for, _diff

from sglc.launch import launch_command

pytestmark = [pytest.mark.cluster, pytest.mark.mpi]

THREADS = 2
HOSTS = ["sglhost0", "sglhost1", "sglhost2"]
# For each shape, how the hosts are given to mpirun (a hostfile with 1 or 2
# slots a host, or --host UNEVEN_HOSTS) and the ranks it starts there (one a
# slot, no -np), so that the shape's process levels spread over the 3 hosts.
# Shape-independent programs take "3x2" (1 rank a host) or "3x2x2" (2 ranks a
# host), with 2 threads in each rank.
UNEVEN_HOSTS = "sglhost0:2,sglhost1,sglhost2"  # 4 ranks: 2, 1, 1
PLACES: dict[str, tuple[str, int]] = {"3": ("hostfile.1", 3), "3x2": ("hostfile.1", 3),
                                      "2x3": ("hostfile.2", 6), "3x2x2": ("hostfile.2", 6),
                                      "4": ("host", 4), "2x2": ("host", 4),
                                      "2x2x2": ("host", 4)}

# (program, shapes): shape-independent ones on one or two shapes, shape-dependent
# ones on the shapes they have a golden for.
PROGRAMS: list[tuple[str, tuple[str, ...]]] = [
    ("tree_reduce", ("3x2", "3x2x2")),
    ("tree_sort", ("3x2x2",)),
    ("scatter_vv", ("3x2",)),
    ("bcast_values", ("3x2x2",)),
    ("float_tree", ("3x2",)),
    ("files_ints", ("3x2x2",)),
    ("worker_ids", ("3", "2x3", "2x2x2")),
    ("node_counts", ("2x3",)),
    ("child_speeds", ("2x2x2",)),
]


def _skip_reason() -> str | None:
    if not HAVE_MPI:
        return MPI_MISSING_REASON
    return unavailable()


@pytest.fixture(scope="module")
def namespaces() -> None:
    """Skips, with the reason, where a cluster cannot be made."""
    why = _skip_reason()
    if why:
        pytest.skip(f"no namespace cluster: {why}")


@pytest.fixture(scope="module")
def cluster(namespaces: None) -> Iterator[Cluster]:
    c = Cluster(nhosts=len(HOSTS)).start()
    try:
        c.hostfile(1)
        c.hostfile(2)
        yield c
    finally:
        c.close()


@pytest.fixture(autouse=True)
def _no_strays(request: pytest.FixtureRequest) -> Iterator[None]:
    """After each test, no daemon or rank is left inside the hosts (a left
    one fails the test, and is killed by Cluster.close)."""
    yield
    if "cluster" not in request.fixturenames:
        return
    c: Cluster = request.getfixturevalue("cluster")
    deadline = time.monotonic() + 30  # beside another pytest process: a loaded machine
    while (left := c.stray_processes()) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in left:  # not to disturb the next test
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert not left, f"processes left inside the hosts: {left}"


def _env(c: Cluster) -> dict[str, str]:
    env = c.mpi_env(run_env({"OMP_NUM_THREADS": str(THREADS)}))
    env.pop("OMPI_MCA_rmaps_base_oversubscribe", None)  # the hosts' slots are the limit
    env.pop("SGL_SHAPE", None)
    return env


def _placement(c: Cluster, shape: str) -> dict[str, str]:
    """hostfile= or hosts= for launch_command, for a shape."""
    how, _ = PLACES[shape]
    if how == "host":
        return {"hosts": UNEVEN_HOSTS}
    return {"hostfile": str(c.root / how)}


def _run(c: Cluster, cmd: list[str], cwd: Path) -> tuple[int, str, str]:
    return run_checked(c.on(cmd, cwd=cwd), cwd=cwd, env=_env(c), timeout=90)


# Open MPI's ssh launcher calls setpgid on the agent's process after the fork,
# in mpirun; when the agent has exec'd first, that fails (EACCES) and mpirun
# says so, harmlessly ("Ignore this error since the child is off and
# running", plm_rsh_module.c). The only stderr line a run may have.
SETPGID_RACE = re.compile(r"^\[[^\]]*\] plm:rsh: Warning: setpgid\(\d+,\d+\) failed in parent "
                          r"with errno=Permission denied\(13\)\n\n?", re.M)


def _judge(case: Case, shape: str, rc: int, out: str, err: str) -> None:
    err = SETPGID_RACE.sub("", err)
    where = f"{case.src.name} args={list(case.args)} on {PLACES[shape]} --sgl-shape {shape}"
    assert rc == 0, f"{where}: exit {rc}\n--- stderr\n{err}\n--- stdout\n{out[-2000:]}"
    assert not err, f"{where}: unexpected stderr\n{err}"
    expected = case.golden.read_text()
    assert out == expected, (f"{where}: stdout differs from {case.golden.name}\n"
                             + _diff(expected, out, case.golden))


def _seq_cases(label: str, folder: Path, ours: bool) -> list[Case]:
    """One case per golden file (the seq target's, for the golden, the
    arguments and the shape of shape-dependent programs)."""
    seen: dict[Path, Case] = {}
    for case in _cases_for(label, folder, ours):
        if case.target == "seq" and not case.problem:
            seen.setdefault(case.golden, case)
    return list(seen.values())


def _by_golden(label: str, folder: Path, ours: bool) -> dict[str, Case]:
    return {c.golden.name: c for c in _seq_cases(label, folder, ours)}


def _program_params() -> list:
    cases = _by_golden("programs", REPO / "tests" / "programs", True)
    params = []
    for name, shapes in PROGRAMS:
        for shape in shapes:
            # a shape-dependent program's golden is for its shape
            case = cases.get(f"{name}.{shape}.out") or cases.get(f"{name}.out")
            if case is None:
                params.append(pytest.param(None, shape, id=f"{name}-{shape}", marks=pytest.mark.skip(
                    reason=f"tests/programs/{name}.sgl or its golden for {shape} is missing")))
                continue
            params.append(pytest.param(case, shape, id=f"{name}-{shape}-np{PLACES[shape][1]}"))
    return params


# ------------------------------------------------------------------ the harness


def test_hosts_are_apart(cluster: Cluster, tmp_path: Path) -> None:
    """Each rank runs on its own host: its own hostname and TMPDIR, only lo
    and its eth0 on the bridge's subnet, in mpirun's directory; this
    namespace has no address there."""
    cmd = ["mpirun", "--hostfile", str(cluster.root / "hostfile.2"), "--allow-run-as-root",
           "sh", "-c", "echo $(hostname) $(pwd) $TMPDIR $(ip -o -4 addr show | "
           "awk '{print $2 \"=\" $4}' | sort | tr '\\n' ' ')"]
    rc, out, err = _run(cluster, cmd, tmp_path)
    assert rc == 0, err
    lines = sorted(out.splitlines())
    expect = sorted(f"{h.name} {tmp_path} {h.tmpdir} eth0={h.addr}/24 lo=127.0.0.1/8"
                    for h in cluster.hosts for _ in range(2))
    assert lines == expect, out
    here = subprocess.run(["ip", "-o", "-4", "addr", "show"], capture_output=True, text=True)
    assert SUBNET.rsplit(".", 1)[0] + "." not in here.stdout
    # the agent refuses a host it does not know (no fallback to this host)
    res = subprocess.run([str(cluster.agent), "elsewhere", "true"], capture_output=True, text=True)
    assert res.returncode == 255 and "unknown host elsewhere" in res.stderr


def test_unavailable_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where namespaces cannot be made, the reason to skip names the cause."""
    import cluster as cl

    monkeypatch.setattr(cl.os, "geteuid", lambda: 1000)
    assert unavailable() == "making network namespaces needs root"
    monkeypatch.setattr(cl.os, "geteuid", lambda: 0)
    monkeypatch.setattr(cl.shutil, "which", lambda tool: None if tool == "ip" else "/bin/x")
    assert unavailable() == "ip not found (util-linux, iproute2)"


def test_close_removes_everything(namespaces: None) -> None:
    """A run killed half-way leaves daemons inside the hosts; close() still
    removes every process, namespace and file of the cluster (the fixture's
    finalizer does the same when a test fails)."""
    c = Cluster(nhosts=2).start()
    try:
        root, pids = c.root, [h.pid for h in c.hosts] + [c.switch.pid if c.switch else 0]
        spaces = c._netns_ids()
        mpirun = subprocess.Popen(
            c.on(["mpirun", "--hostfile", str(c.hostfile(1)), "--allow-run-as-root",
                  "sleep", "60"], cwd=root),
            env=_env(c), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
        deadline = time.monotonic() + 30
        while len(c.stray_processes()) < 4 and time.monotonic() < deadline:
            time.sleep(0.1)  # mpirun, the agent, orted and the sleeps
        os.killpg(mpirun.pid, signal.SIGKILL)  # mpirun dies; the other host's daemon stays
        mpirun.wait()
        time.sleep(0.2)
        assert c.stray_processes(), "nothing was left behind to clean"
    finally:
        c.close()
    assert not root.exists()
    assert not [pid for pid in pids if Path(f"/proc/{pid}").exists()]
    left = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and os.readlink(entry / "ns" / "net") in spaces:
                left.append(entry.name)
        except OSError:
            pass
    assert not left, f"processes still in the cluster's namespaces: {left}"


def test_script_removes_the_cluster_on_sigterm(namespaces: None) -> None:
    """`python tests/cluster.py` waits with the cluster up; SIGTERM (as
    Ctrl-C) removes it: its folder and every process in its namespaces."""
    proc = subprocess.Popen([sys.executable, str(REPO / "tests" / "cluster.py")], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()  # hostfile: /tmp/sgl-cluster-.../hostfile.2
        assert first.startswith("hostfile: "), first + proc.stderr.read()
        root = Path(first.split()[1]).parent
        pids = []
        for line in proc.stdout:
            if line.startswith("Ctrl-C"):
                break
            if "nsenter -t " in line:
                pids.append(int(line.split("nsenter -t ")[1].split()[0]))
        assert root.is_dir() and len(pids) == 3
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert not root.exists()
    assert not [pid for pid in pids if Path(f"/proc/{pid}").exists()]


def test_consecutive_runs(cluster: Cluster, sglc_compile: CompileCache, tmp_path: Path) -> None:
    """The harness is steady: SGL_CLUSTER_RUNS (20) runs in a row, on 1 and 2
    ranks a host, all exact (no clash of the hosts' session directories)."""
    case = next(c for c in _seq_cases("programs", REPO / "tests" / "programs", True)
                if c.src.stem == "tree_reduce")
    exe = sglc_compile(case.src, "mpi").require()
    runs = int(os.environ.get("SGL_CLUSTER_RUNS", "20"))
    for i in range(runs):
        shape = ("3x2", "3x2x2")[i % 2]
        cmd = launch_command(str(exe), None, THREADS, shape, list(case.args),
                             env=_env(cluster), **_placement(cluster, shape))
        rc, out, err = _run(cluster, cmd, tmp_path)
        try:
            _judge(case, shape, rc, out, err)
        except AssertionError as e:
            raise AssertionError(f"run {i + 1} of {runs}: {e}") from None


# ------------------------------------------------------------------ programs


@pytest.mark.parametrize(("case", "shape"), _program_params())
def test_program_on_hosts(cluster: Cluster, sglc_compile: CompileCache, tmp_path: Path,
                          case: Case, shape: str) -> None:
    exe = sglc_compile(case.src, "mpi").require()
    cmd = launch_command(str(exe), None, THREADS, shape, list(case.args),
                         env=_env(cluster), **_placement(cluster, shape))
    _judge(case, shape, *_run(cluster, cmd, tmp_path))
    if case.src.stem == "files_ints":  # the files are where mpirun was started
        assert (tmp_path / "tmp_files_ints.txt").is_file()


def _shared_params() -> list:
    """Each golden of the shared examples: a shape-dependent one (hello.2x3.out)
    on its shape, the others on 3x2x2 (6 ranks, 2 a host)."""
    if not (SHARED / "examples").is_dir():
        return [pytest.param(None, "3x2x2", id="(absent)")]
    params = []
    for name, case in _by_golden("shared", SHARED / "examples", False).items():
        own_shape = name == f"{case.src.stem}.{case.shape}.out"
        if own_shape and case.shape not in PLACES:
            continue
        shape = case.shape if own_shape else "3x2x2"
        params.append(pytest.param(case, shape, id=f"{name[:-len('.out')]}-{shape}"))
    return params


@pytest.mark.parametrize(("case", "shape"), _shared_params())
def test_shared_example_sglc_run(cluster: Cluster, tmp_path: Path, case: Case | None,
                                 shape: str) -> None:
    """`sglc run --hostfile` (or --host) on 3 hosts prints the golden output."""
    require_shared()
    assert case is not None
    how, nranks = PLACES[shape]
    where = (["--host", UNEVEN_HOSTS] if how == "host"
             else ["--hostfile", str(cluster.root / how)])
    cmd = [*sglc_command(), "run", str(case.src), *where, "--threads", str(THREADS),
           "--shape", shape, "--", *case.args]
    _judge(case, shape, *_run(cluster, cmd, tmp_path))


@pytest.mark.parametrize("shape", ["3x2", "3x2x2"])
@pytest.mark.parametrize("name", ["kmeans", "pagerank"])
def test_iterative_example_on_hosts(cluster: Cluster, sglc_compile: CompileCache,
                                    tmp_path: Path, name: str, shape: str) -> None:
    """The iterative examples in the node-variable style print their golden
    output on 3 hosts: kmeans leaves its points on the workers once,
    pagerank's workers each read their own slice of the .npy edge files
    (made in the run's folder by pagerank_input.py)."""
    case = _by_golden("examples", REPO / "examples", True)[f"{name}.out"]
    exe = sglc_compile(case.src, "mpi").require()
    prepare(case.src, tmp_path)
    cmd = launch_command(str(exe), None, THREADS, shape, list(case.args),
                         env=_env(cluster), **_placement(cluster, shape))
    _judge(case, shape, *_run(cluster, cmd, tmp_path))
