"""Instrumentation: --sgl-trace, --sgl-stats=FILE.json, --sgl-predict, and the
`sglc probe` and `sglc cost` commands (docs/cost-model.md)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HAVE_MPI = shutil.which("mpicc") is not None and shutil.which("mpirun") is not None
needs_mpi = pytest.mark.skipif(not HAVE_MPI, reason="mpicc or mpirun is missing")

REDUCE = """\
func hsum(v: [int]) -> int {
    if worker {
        return sum(v);
    }
    var part: [int];
    var s: int;
    var sums: [int];
    scatter split(v, nchildren) -> part;
    pardo {
        s = hsum(part);
    }
    gather s -> sums;
    return sum(sums);
}

func main() {
    var n = arg_int(0, 1000);
    var v = rand_ints(n, 0, 1000, 42);
    print("sum =", hsum(v));
}
"""
N = 1200


def sglc() -> list[str]:
    script = Path(sys.executable).parent / "sglc"
    return [str(script)] if script.exists() else [sys.executable, "-m", "sglc.cli"]


def env(threads: int | None = None) -> dict[str, str]:
    e = dict(os.environ)
    e.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
    if threads is not None:
        e["OMP_NUM_THREADS"] = str(threads)
    return e


def launch(exe: Path, nprocs: int, args: list[str]) -> list[str]:
    if nprocs == 1:
        return [str(exe), *args]
    cmd = ["mpirun", "-np", str(nprocs), "--bind-to", "none", "--oversubscribe"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    return [*cmd, str(exe), *args]


@pytest.fixture(scope="module")
def reduce_src(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("instr")
    src = d / "reduce.sgl"
    src.write_text(REDUCE)
    return src


@pytest.fixture(scope="module")
def reduce_exe(reduce_src: Path):
    built: dict[str, Path] = {}

    def get(target: str) -> Path:
        if target not in built:
            exe = reduce_src.parent / f"reduce_{target}"
            subprocess.run([*sglc(), str(reduce_src), "-o", str(exe), "--target", target],
                           check=True, timeout=120)
            built[target] = exe
        return built[target]

    return get


def run(exe: Path, nprocs: int, args: list[str]) -> subprocess.CompletedProcess[str]:
    p = subprocess.run(launch(exe, nprocs, args), capture_output=True, text=True, timeout=60,
                       env=env())
    assert p.returncode == 0, p.stderr
    return p


CASES = [pytest.param("omp", 1, "2x3", id="omp-1x(2x3)"),
         pytest.param("mpi", 2, "2x2", id="mpi-2x(2x2)", marks=needs_mpi)]

# ----------------------------------------------------------------- (a) trace


@pytest.mark.parametrize("target,nprocs,shape", CASES)
def test_trace_is_valid_and_nested(reduce_exe, tmp_path: Path, target: str, nprocs: int,
                                   shape: str) -> None:
    trace = tmp_path / "t.json"
    p = run(reduce_exe(target), nprocs, [f"--sgl-shape={shape}", f"--sgl-trace={trace}", str(N)])
    assert "sum =" in p.stdout
    doc = json.loads(trace.read_text())
    events = doc["traceEvents"]
    assert isinstance(events, list) and events
    tracks: dict[tuple[int, int], list[tuple[float, float, str]]] = {}
    for ev in events:
        for key in ("name", "ph", "pid"):
            assert key in ev, ev
        # the one process_name metadata event names a process, not a track
        if not (ev["ph"] == "M" and ev["name"] == "process_name"):
            assert "tid" in ev, ev
        if ev["ph"] == "X":
            assert ev["ts"] >= 0 and ev["dur"] >= 0, ev
            tracks.setdefault((ev["pid"], ev["tid"]), []).append(
                (ev["ts"], ev["ts"] + ev["dur"], ev["name"]))
    names = {n for spans in tracks.values() for _, _, n in spans}
    assert any(n.startswith("superstep hsum:") for n in names)
    assert any(n.startswith("compute hsum:") for n in names)
    assert {pid for pid, _ in tracks} == set(range(1, nprocs + 1))  # rank + 1
    slack = 1.0  # µs
    for key, spans in tracks.items():
        spans.sort(key=lambda s: (s[0], -s[1]))
        stack: list[tuple[float, float, str]] = []
        for s in spans:
            while stack and stack[-1][1] <= s[0] + slack:
                stack.pop()
            if stack:
                assert s[1] <= stack[-1][1] + slack, f"track {key}: {s} overlaps {stack[-1]}"
            stack.append(s)

# ----------------------------------------------------------------- (b) stats


@pytest.mark.parametrize("target,nprocs,shape", CASES)
def test_stats_json(reduce_exe, tmp_path: Path, target: str, nprocs: int, shape: str) -> None:
    stats = tmp_path / "s.json"
    run(reduce_exe(target), nprocs, [f"--sgl-shape={shape}", f"--sgl-stats={stats}", str(N)])
    doc = json.loads(stats.read_text())
    assert doc["sglc_stats"] == 1
    assert doc["shape"] == shape and doc["nprocs"] == nprocs
    assert doc["total_time"] > 0
    dims = [int(x) for x in shape.split("x")]
    levels = doc["levels"]
    assert [lv["level"] for lv in levels] == list(range(len(dims)))
    masters = 1
    for k, lv in enumerate(levels):
        assert set(lv) == {"level", "transport", "supersteps", "bytes", "h_max", "h_sum",
                           "time", "imbalance"}
        expected_transport = "mpi" if (target == "mpi" and k == 0 and nprocs > 1) else "omp"
        assert lv["transport"] == expected_transport
        for key in ("bytes", "h_max", "h_sum"):
            assert set(lv[key]) == {"scatter", "bcast", "gather"}
        assert set(lv["time"]) == {"total", "comm_wait", "compute_max", "compute_mean"}
        assert lv["supersteps"] == masters
        p = dims[k]
        # every master of the level scatters its block of n/masters ints: 8 bytes each,
        # plus 8 for the length of each child's part; each child sends one int back
        assert lv["bytes"]["scatter"] == 8 * N + 8 * p * masters
        assert lv["bytes"]["gather"] == 8 * p * masters
        assert lv["bytes"]["bcast"] == 0
        assert lv["h_max"]["scatter"] == 8 * (N // (masters * p)) + 8
        assert lv["time"]["total"] >= lv["time"]["compute_max"] >= 0
        assert lv["time"]["compute_max"] >= lv["time"]["compute_mean"] * 0.999
        assert lv["imbalance"] >= 0.999
        masters *= p

def test_stats_summary_names_the_default_shape(reduce_exe) -> None:
    """Without --sgl-shape the summary says "(default)" (the JSON file: "")."""
    p = subprocess.run([str(reduce_exe("omp")), "--sgl-stats", str(N)], capture_output=True,
                       text=True, timeout=60, env=env(threads=2))
    assert p.returncode == 0, p.stderr
    first = p.stderr.splitlines()[0]
    assert first.startswith("sgl-stats: shape (default), 1 process, total "), p.stderr


def test_stats_json_keeps_the_shape_as_given(reduce_exe, tmp_path: Path) -> None:
    """The JSON file is valid with any shape the runtime accepts (blanks in
    brackets, a long uneven level) and names it whole."""
    long = "64x[" + ",".join(["1"] * 64) + "]"  # 131 characters
    for shape in ("2x[1,\t3]", "2x[1, 3]", long):
        stats = tmp_path / "s.json"
        run(reduce_exe("seq"), 1, ["--sgl-shape", shape, f"--sgl-stats={stats}", "100"])
        assert json.loads(stats.read_text())["shape"] == shape


# ----------------------------------------------------------------- (c) predict


@pytest.mark.parametrize("target,nprocs,shape", CASES)
def test_predict(reduce_exe, tmp_path: Path, target: str, nprocs: int, shape: str) -> None:
    machine = tmp_path / "machine.json"
    machine.write_text(json.dumps({"sglc_machine": 1, "levels": [
        {"level": 0, "transport": "x", "children": 2, "l": 1e-5, "g_scatter": 1e-9,
         "g_bcast": 1e-9, "g_gather": 1e-9, "fit": {"scatter": {"r2": 1.0, "points": []}}},
        {"level": 1, "l": 2e-6, "g_scatter": 0.0, "g_bcast": 0.0, "g_gather": 0.0},
    ], "r": 1e9}))
    p = run(reduce_exe(target), nprocs, [f"--sgl-shape={shape}", f"--sgl-predict={machine}",
                                         str(N)])
    lines = [ln for ln in p.stderr.splitlines() if ln.startswith("sgl-predict:")]
    assert "cannot read" not in p.stderr
    total = [ln for ln in lines if ln.split()[1] == "total"]
    assert len(total) == 1
    f = total[0].split()
    assert float(f[2]) > 0 and float(f[3]) > 0 and f[4].endswith("%")
    sites = [ln for ln in lines if ln.split()[1].startswith("hsum:")]
    assert sorted(int(ln.split()[2]) for ln in sites) == [0, 1]  # one line per site and level
    assert all("no parameters" not in ln for ln in sites)
    # level 0: 1 superstep; predicted = compute + g*(h_s + h_g) + l
    lvl0 = next(ln.split() for ln in sites if ln.split()[2] == "0")
    assert lvl0[3] == "1" and float(lvl0[4]) >= 1e-5 + 1e-9 * (8 * N // 2 + 8 + 8)

# ----------------------------------------------------------------- (d) probe


def check_machine(m: dict, shape: str, nprocs: int, threads: int) -> None:
    assert m["sglc_machine"] == 1
    assert m["shape"] == shape and m["nprocs"] == nprocs and m["threads"] == threads
    dims = [int(x) for x in shape.split("x")]
    assert [lv["level"] for lv in m["levels"]] == list(range(len(dims)))
    for lv, p in zip(m["levels"], dims):
        assert lv["children"] == p
        assert lv["transport"] in ("mpi", "omp", "seq")
        assert lv["l"] > 0
        for op in ("scatter", "bcast", "gather"):
            assert lv[f"g_{op}"] >= 0
            fit = lv["fit"][op]
            assert 0 <= fit["r2"] <= 1.000001
            assert len(fit["points"]) >= 3 and fit["points"][0][0] == 8
    assert m["r"] > 0


def test_probe_quick_threads(tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    p = subprocess.run([*sglc(), "probe", "--threads", "2", "--quick", "--target", "omp", "-o",
                        str(out)], capture_output=True, text=True, timeout=60, env=env())
    assert p.returncode == 0, p.stderr
    m = json.loads(out.read_text())
    check_machine(m, "2", 1, 2)
    assert m["levels"][0]["transport"] == "omp"
    assert "level" in p.stdout and "Mflop/s" in p.stdout


@needs_mpi
def test_probe_quick_mpi(tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    p = subprocess.run([*sglc(), "probe", "-np", "2", "--quick", "-o", str(out)],
                       capture_output=True, text=True, timeout=60, env=env())
    assert p.returncode == 0, p.stderr
    m = json.loads(out.read_text())
    check_machine(m, "2", 2, 1)
    assert m["levels"][0]["transport"] == "mpi"


def test_probe_bad_shape() -> None:
    p = subprocess.run([*sglc(), "probe", "-np", "2", "--shape", "3", "--quick"],
                       capture_output=True, text=True, timeout=60, env=env())
    assert p.returncode == 2 and "Traceback" not in p.stderr

@pytest.mark.parametrize("shape", [" 2", "2 ", "+2", "1_0", "2x\uff12", "2x", "x2", "2x0"])
def test_probe_malformed_shape_is_a_usage_error(shape: str) -> None:
    """What the runtime would refuse is refused before the probe runs (exit
    2, not the probe program's failure, exit 3)."""
    p = subprocess.run([*sglc(), "probe", "--target", "seq", "--shape", shape, "--quick"],
                       capture_output=True, text=True, timeout=60, env=env())
    assert p.returncode == 2, p.stderr
    assert f"bad machine shape '{shape}'" in p.stderr and "Traceback" not in p.stderr


# ----------------------------------------------------------------- (e) cost


def test_cost_reduce(reduce_src: Path) -> None:
    p = subprocess.run([*sglc(), "cost", str(reduce_src)], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    line = next(ln for ln in p.stdout.splitlines() if ln.startswith("hsum:8 "))
    assert "scatter+pardo+gather" in line
    assert "W(pardo)" in line and "g_scatter*(8*len(v)/p + 8)" in line
    assert "g_gather*8" in line and line.endswith("+ l")


def test_cost_unknown_and_p_variable(tmp_path: Path) -> None:
    src = tmp_path / "c.sgl"
    src.write_text("""\
func f(v: [int]) -> int {
    if worker {
        return len(v);
    }
    var p = nchildren;
    var part: [int];
    var b: [[int]] = [];
    var r: int;
    var rs: [int];
    scatter split(v, p) -> part;
    bcast b -> b;
    pardo {
        r = f(part);
    }
    gather part -> b;
    return len(b);
}

func main() {
    print(f(range(0, 10)));
}
""")
    p = subprocess.run([*sglc(), "cost", str(src)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert "g_scatter*(8*len(v)/p + 8)" in p.stdout
    assert "unknown(" in p.stdout
    assert "p = nchildren" in p.stdout


def test_cost_writes_a_composition_as_the_program_does(tmp_path: Path) -> None:
    """`sort(concat(vv))` is one call in the IR (the pass `compose`); the
    cost's text is the program's."""
    src = tmp_path / "c.sgl"
    src.write_text("""\
func main() {
    var vv: [[int]] = [[2], [1]];
    var x: [int];
    var xs: [[int]];
    bcast sort(concat(vv)) -> x;
    gather x -> xs;
    print(xs);
}
""")
    p = subprocess.run([*sglc(), "cost", str(src)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert "sort(concat(vv))" in p.stdout and "sort.concat" not in p.stdout


def test_cost_user_errors(tmp_path: Path) -> None:
    p = subprocess.run([*sglc(), "cost", str(tmp_path / "missing.sgl")], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    bad = tmp_path / "bad.sgl"
    bad.write_text("func main() { x = 1; }\n")
    p = subprocess.run([*sglc(), "cost", str(bad)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 1 and "error" in p.stderr and "Traceback" not in p.stderr
