"""Measured speeds: --sgl-speeds=auto, --sgl-machine FILE / SGL_MACHINE, the
machine file that `sglc probe` writes, each child's share in --sgl-stats, and
`sglc cost` of split_by (docs/execution.md, docs/machine-file.md,
docs/cost-model.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import (
    REPO,
    CompileCache,
    mpirun_prefix,
    run_checked,
    run_env,
    sglc_command,
)

# Every master prints its path (depth and child index down from the root are
# enough here: child_index at each level) and its child_speeds().
SHOW = """\
func show(path: [int]) {
    if master {
        print(path, child_speeds());
        var p: [int];
        bcast path -> p;
        pardo {
            show(concat([p, [child_index]]));
        }
    }
}

func main() {
    var root: [int] = [];
    show(root);
    print("workers", nworkers);
}
"""

SPLIT_BY = """\
func main() {
    if master {
        var v = range(0, 1000);
        var part: [int];
        var n: int;
        var ns: [int];
        scatter split_by(v, child_speeds()) -> part;
        pardo {
            n = len(part);
        }
        gather n -> ns;
        print(ns, sum(ns));
    }
}
"""


@pytest.fixture(scope="module")
def progs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("speeds-src")
    out = {}
    for name, text in (("show", SHOW), ("split_by", SPLIT_BY)):
        p = d / f"{name}.sgl"
        p.write_text(text)
        out[name] = p
    return out


def build(sglc_compile: CompileCache, src: Path, target: str) -> Path:
    return sglc_compile(src, target).require()


def run(exe: Path, args: list[str], nprocs: int = 1, env: dict[str, str] | None = None,
        cwd: Path | None = None, timeout: float = 60) -> tuple[int, str, str]:
    cmd = [str(exe), *args]
    if nprocs > 1:
        cmd = mpirun_prefix(nprocs) + cmd
    return run_checked(cmd, env=run_env(env), cwd=cwd, timeout=timeout)


def speeds_lines(out: str) -> dict[str, list[float]]:
    """'[0, 1] [0.5, 1.0]' lines -> {'0.0.1': [0.5, 1.0]}."""
    got = {}
    for line in out.splitlines():
        if line.startswith("["):
            path, _, speeds = line.partition("] ")
            idx = [x.strip() for x in path.strip("[").split(",") if x.strip()]
            got[".".join(["0", *idx])] = json.loads(speeds)
    return got


def machine_file(tmp_path: Path, speeds: list[float], paths: list[str] | None = None,
                 **extra: object) -> Path:
    doc: dict[str, object] = {"sglc_machine": 1, "worker_speeds": speeds, **extra}
    if paths is not None:
        doc["worker_paths"] = paths
    p = tmp_path / "machine.json"
    p.write_text(json.dumps(doc))
    return p


# shape 2x3: workers 0.0.0 0.0.1 0.0.2 0.1.0 0.1.1 0.1.2
PATHS_2X3 = [f"0.{i}.{j}" for i in range(2) for j in range(3)]
# speeds 1 1 2 4 4 4 -> divided by the largest: 1/4 1/4 1/2 1 1 1
EXPECTED_2X3 = {"0": [1.0, 3.0], "0.0": [0.25, 0.25, 0.5], "0.1": [1.0, 1.0, 1.0]}
TARGETS = [pytest.param("seq", 1, id="seq"), pytest.param("omp", 1, id="omp"),
           pytest.param("mpi", 2, id="mpi-np2", marks=pytest.mark.mpi)]


# ------------------------------------------------------------------ machine file


@pytest.mark.parametrize("target,nprocs", TARGETS)
def test_machine_file_speeds(sglc_compile: CompileCache, progs, tmp_path: Path, target: str,
                             nprocs: int) -> None:
    exe = build(sglc_compile, progs["show"], target)
    m = machine_file(tmp_path, [1, 1, 2, 4, 4, 4], PATHS_2X3, shape="2x3")
    rc, out, err = run(exe, ["--sgl-shape", "2x3", "--sgl-machine", str(m)], nprocs)
    assert rc == 0, err
    assert speeds_lines(out) == EXPECTED_2X3
    # the same through the environment, and --sgl-machine=FILE
    rc, out2, err = run(exe, ["--sgl-shape=2x3"], nprocs, env={"SGL_MACHINE": str(m)})
    assert rc == 0 and out2 == out, err
    rc, out3, err = run(exe, ["--sgl-shape=2x3", f"--sgl-machine={m}"], nprocs)
    assert rc == 0 and out3 == out, err


def test_machine_speeds_are_rounded_to_sixteenths(sglc_compile: CompileCache, progs,
                                                  tmp_path: Path) -> None:
    exe = build(sglc_compile, progs["show"], "seq")
    # 0.3/3 = 0.1 -> 2/16; 1.6/3 -> 9/16 (0.533 * 16 = 8.53); 0.001 -> the least, 1/16
    m = machine_file(tmp_path, [3.0, 0.3, 1.6, 0.001])
    rc, out, err = run(exe, ["--sgl-shape", "4", "--sgl-machine", str(m)])
    assert rc == 0, err
    assert speeds_lines(out) == {"0": [1.0, 0.125, 0.5625, 0.0625]}


def test_option_beats_environment(sglc_compile: CompileCache, progs, tmp_path: Path) -> None:
    exe = build(sglc_compile, progs["show"], "seq")
    m = machine_file(tmp_path, [1, 1, 2, 4, 4, 4])
    rc, out, err = run(exe, ["--sgl-shape", "2x3", "--sgl-speeds=workers"],
                       env={"SGL_MACHINE": str(m)})
    assert rc == 0, err
    assert speeds_lines(out)["0"] == [3.0, 3.0]  # the default: worker counts
    # without any option or variable: worker counts too
    rc, out, err = run(exe, ["--sgl-shape", "2x3"])
    assert speeds_lines(out) == {"0": [3.0, 3.0], "0.0": [1.0] * 3, "0.1": [1.0] * 3}


BAD_FILES = [
    ("missing", None, "cannot read machine file"),
    ("malformed", '{"worker_speeds": [1, 2,]}', "is not valid JSON: line 1"),
    ("no speeds", '{"sglc_machine": 1, "levels": []}', 'has no "worker_speeds"'),
    ("not a list", '{"worker_speeds": 3}', "must be a list of numbers"),
    ("count", '{"worker_speeds": [1, 2, 3], "shape": "3"}',
     "has speeds for 3 workers, but this tree has 4 (the file was written for shape 3)"),
    ("negative", '{"worker_speeds": [1, 2, -3, 1]}', "worker_speeds[2] must be a positive number"),
    ("paths", '{"worker_speeds": [1, 1, 1, 1], "worker_paths": ["0.0", "0.1", "0.2", "0.3"]}',
     "was written for another tree: its worker 0 is '0.0', this tree's is '0.0.0'"),
]


@pytest.mark.parametrize("target,nprocs", TARGETS)
@pytest.mark.parametrize("case,text,message", BAD_FILES, ids=[c[0] for c in BAD_FILES])
def test_bad_machine_file(sglc_compile: CompileCache, progs, tmp_path: Path, target: str,
                          nprocs: int, case: str, text: str | None, message: str) -> None:
    exe = build(sglc_compile, progs["show"], target)
    m = tmp_path / "m.json"
    if text is not None:
        m.write_text(text)
    rc, out, err = run(exe, ["--sgl-shape", "2x2", "--sgl-machine", str(m)], nprocs, timeout=60)
    assert rc == 1
    assert out == ""
    assert f"runtime error: machine file '{m}'" in err or "cannot read machine file" in err
    assert message in err
    assert err.count("runtime error") == 1, err


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_endless_machine_file(sglc_compile: CompileCache, progs) -> None:
    """A file that never ends is not read for ever (nor until memory runs out)."""
    exe = build(sglc_compile, progs["show"], "seq")
    rc, out, err = run(exe, ["--sgl-machine", "/dev/zero"], timeout=60)
    assert (rc, out) == (1, ""), err
    assert err.endswith("runtime error: cannot read machine file '/dev/zero': larger than "
                        "256 MiB (not a machine file?)\n"), err
    # --sgl-predict reads machine files too: it says why and runs on
    rc, out, err = run(exe, ["--sgl-predict=/dev/zero"], timeout=60)
    assert rc == 0, err
    assert "sgl-predict: cannot read machine parameters from '/dev/zero': larger than 256 MiB\n" \
        in err


def test_bad_speed_options(sglc_compile: CompileCache, progs) -> None:
    exe = build(sglc_compile, progs["show"], "seq")
    for args in (["--sgl-speeds=fast"], ["--sgl-speeds=auto:0"], ["--sgl-speeds"],
                 ["--sgl-machine="], ["--sgl-machine"]):
        rc, out, err = run(exe, args)
        assert rc == 1 and "unknown or malformed runtime option" in err, (args, err)
        assert "--sgl-speeds=auto" in err
    rc, out, err = run(exe, [], env={"SGL_SPEEDS": "often"})
    assert rc == 1 and "bad SGL_SPEEDS 'often'" in err


# ------------------------------------------------------------------ auto


def multiple_of_16th(x: float) -> bool:
    return x > 0 and (x * 16).is_integer()


def test_auto_seq_equals_worker_counts(sglc_compile: CompileCache, progs) -> None:
    # seq workers run one after the other: one calibration serves them all, so
    # every worker's speed is 1 and child_speeds() is the default
    exe = build(sglc_compile, progs["show"], "seq")
    rc, out, err = run(exe, ["--sgl-shape", "2x3", "--sgl-speeds=auto"])
    assert rc == 0, err
    assert speeds_lines(out) == {"0": [3.0, 3.0], "0.0": [1.0] * 3, "0.1": [1.0] * 3}


@pytest.mark.parametrize("target,nprocs,shape", [
    pytest.param("omp", 1, "2x2", id="omp-2x2"),
    pytest.param("mpi", 2, "2x2", id="mpi-np2-2x2", marks=pytest.mark.mpi),
    pytest.param("mpi", 3, "3", id="mpi-np3-3", marks=pytest.mark.mpi),
])
def test_auto_speeds(sglc_compile: CompileCache, progs, target: str, nprocs: int,
                     shape: str) -> None:
    exe = build(sglc_compile, progs["show"], target)
    rc, out, err = run(exe, ["--sgl-shape", shape, "--sgl-speeds=auto"], nprocs)
    assert rc == 0, err
    got = speeds_lines(out)
    dims = [int(x) for x in shape.split("x")]
    assert len(got) == sum(1 for k in range(len(dims)) for _ in range(_prod(dims[:k])))
    workers: list[float] = []
    for path, speeds in got.items():
        depth = path.count(".")
        assert len(speeds) == dims[depth]
        assert all(multiple_of_16th(s) for s in speeds), speeds
        if depth == len(dims) - 1:
            workers += speeds
    # the fastest worker is 1, and each master's child speed is its workers' sum
    assert max(workers) == 1.0
    if len(dims) == 2:
        for i, s in enumerate(got["0"]):
            assert s == sum(got[f"0.{i}"])


def _prod(xs: list[int]) -> int:
    p = 1
    for x in xs:
        p *= x
    return p


@pytest.mark.mpi
def test_auto_mixed_options_do_not_hang(sglc_compile: CompileCache, progs) -> None:
    # rank 0 has --sgl-speeds=auto, rank 1 not: every rank follows rank 0
    exe = build(sglc_compile, progs["show"], "mpi")
    cmd = [*mpirun_prefix(1), str(exe), "--sgl-shape", "2", "--sgl-speeds=auto", ":",
           "-np", "1", str(exe), "--sgl-shape", "2"]
    rc, out, err = run_checked(cmd, env=run_env({"OMP_NUM_THREADS": "1"}), timeout=60)
    assert rc == 0, err
    speeds = speeds_lines(out)["0"]
    assert len(speeds) == 2 and max(speeds) == 1.0 and all(map(multiple_of_16th, speeds))


@pytest.mark.parametrize("target,nprocs", TARGETS)
def test_split_by_child_speeds(sglc_compile: CompileCache, progs, tmp_path: Path,
                               target: str, nprocs: int) -> None:
    exe = build(sglc_compile, progs["split_by"], target)
    m = machine_file(tmp_path, [1, 4])
    rc, out, err = run(exe, ["--sgl-shape", "2", "--sgl-machine", str(m)], nprocs)
    assert rc == 0, err
    assert out == "[200, 800] 1000\n"  # speeds 1/4 and 1: 1000*(1/4)/(5/4)


# ------------------------------------------------------------------ stats


@pytest.mark.parametrize("target,nprocs", TARGETS)
def test_stats_children_shares(sglc_compile: CompileCache, progs, tmp_path: Path,
                               target: str, nprocs: int) -> None:
    exe = build(sglc_compile, progs["split_by"], target)
    m = machine_file(tmp_path, [1, 3])
    stats = tmp_path / "s.json"
    rc, out, err = run(exe, ["--sgl-shape", "2", "--sgl-machine", str(m),
                             f"--sgl-stats={stats}"], nprocs)
    assert rc == 0, err
    doc = json.loads(stats.read_text())
    assert doc["speeds"] == "machine"
    (root,) = doc["masters"]
    assert root["node"] == "0" and root["level"] == 0 and root["supersteps"] == 1
    kids = root["children"]
    assert [c["child"] for c in kids] == [0, 1]
    assert [c["speed"] for c in kids] == [0.3125, 1.0]  # 1/3 rounds to 5/16
    # 1000 * 5/16 / (21/16) = 238.1 -> 238 and 762 ints, 8 bytes each, plus the length
    assert [c["recv_bytes"] for c in kids] == [8 * 238 + 8, 8 * 762 + 8]
    assert sum(c["recv_bytes"] for c in kids) == doc["levels"][0]["bytes"]["scatter"]
    assert all(0 <= c["compute"] <= root["time"] for c in kids)
    # the summary on stderr
    rc, out, err = run(exe, ["--sgl-shape", "2", "--sgl-machine", str(m), "--sgl-stats"], nprocs)
    assert rc == 0, err
    lines = [ln.split() for ln in err.splitlines() if ln.startswith("sgl-stats:")]
    head = next(ln for ln in lines if ln[1:3] == ["children", "of"])
    assert "busy%" in head and str(m) in " ".join(head)
    rows = lines[lines.index(head) + 1:]
    assert rows[0][1:5] == ["0", "0", "0.3125", f"{100 * 5 / 21:.1f}"]
    assert rows[1][1:4] == ["1", "1", f"{100 * 16 / 21:.1f}"]
    assert rows[1][4] == str(8 * 762 + 8)


def test_stats_default_speeds_are_worker_counts(sglc_compile: CompileCache, progs,
                                                tmp_path: Path) -> None:
    exe = build(sglc_compile, progs["split_by"], "omp")
    stats = tmp_path / "s.json"
    rc, out, err = run(exe, ["--sgl-shape", "3x2", f"--sgl-stats={stats}"])
    assert rc == 0, err
    doc = json.loads(stats.read_text())
    assert doc["speeds"] == "workers"
    assert [c["speed"] for c in doc["masters"][0]["children"]] == [2.0, 2.0, 2.0]


# ------------------------------------------------------------------ probe


def test_probe_writes_worker_speeds(sglc_compile: CompileCache, progs, tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    rc, stdout, err = run_checked([*sglc_command(), "probe", "--threads", "2", "--quick",
                                   "--target", "omp", "-o", str(out)], env=run_env(),
                                  timeout=120)
    assert rc == 0, err
    m = json.loads(out.read_text())
    assert m["worker_paths"] == ["0.0", "0.1"]
    assert len(m["worker_speeds"]) == 2 and max(m["worker_speeds"]) == 1.0
    assert all(map(multiple_of_16th, m["worker_speeds"]))
    assert m["speed_window_s"] == 0.03
    assert "worker speeds (the fastest is 1): 0.0 " in stdout
    # the file feeds child_speeds() (and --sgl-predict reads the same file)
    exe = build(sglc_compile, progs["show"], "omp")
    rc, o, err = run(exe, ["--sgl-shape", "2", "--sgl-machine", str(out),
                           f"--sgl-predict={out}"])
    assert rc == 0, err
    assert speeds_lines(o)["0"] == m["worker_speeds"]
    assert "cannot read" not in err and "sgl-predict: total" in err
    # ... and is refused on another tree
    rc, o, err = run(exe, ["--sgl-shape", "3", "--sgl-machine", str(out)])
    assert rc == 1 and "has speeds for 2 workers, but this tree has 3" in err


def test_probe_parses_speed_lines() -> None:
    from sglc import probe

    text = "sgl-probe speed [0, 1] 0.5\nsgl-probe speed [] 1.0\nsgl-probe r 5\n"
    assert probe.parse_speeds(text) == (["0.0.1", "0"], [0.5, 1.0])


# ------------------------------------------------------------------ cost


def test_cost_split_by(tmp_path: Path) -> None:
    src = tmp_path / "c.sgl"
    src.write_text("""\
func f(v: [int], w: [float]) -> int {
    if worker {
        return len(v);
    }
    var s = child_speeds();
    var part: [int];
    var r: int;
    var rs: [int];
    scatter split_by(v, s) -> part;
    pardo {
        r = len(part);
    }
    gather r -> rs;
    scatter split_by(v, w) -> part;
    return sum(rs);
}

func main() {
    print(f(range(0, 10), [1.0]));
}
""")
    rc, out, err = run_checked([*sglc_command(), "cost", str(src)], timeout=60)
    assert rc == 0, err
    assert "g_scatter*(8*len(v)*max(s)/sum(s) + 8)" in out
    assert "s = child_speeds(): child i gets len(v)*s[i]/sum(s) elements" in out
    assert "g_scatter*(8*len(v)*max(w)/sum(w) + 8)" in out
    assert "split_by: child i gets len(v)*w[i]/sum(w) elements, w = w" in out


@pytest.mark.parametrize("change", ["s[0] = 0.0;", "s[0] += 1.0;", "push(s, 1.0);",
                                    "s = [1.0, 2.0];"])
def test_cost_split_by_of_changed_speeds(tmp_path: Path, change: str) -> None:
    """A variable of child_speeds() that is then changed is not the speeds:
    no "balanced" note (and p changed after `var p = nchildren` is not p)."""
    src = tmp_path / "c.sgl"
    src.write_text(f"""\
func f(v: [int]) -> int {{
    if worker {{
        return len(v);
    }}
    var s = child_speeds();
    var p = nchildren;
    p += 1;
    {change}
    var part: [int];
    var r: int;
    var rs: [int];
    scatter split_by(v, s) -> part;
    pardo {{
        r = len(part);
    }}
    gather r -> rs;
    scatter split(v, p) -> part;
    return sum(rs);
}}

func main() {{
    print(f(range(0, 10)));
}}
""")
    rc, out, err = run_checked([*sglc_command(), "cost", str(src)], timeout=60)
    assert rc == 0, err
    assert "g_scatter*(8*len(v)*max(s)/sum(s) + 8)" in out
    assert "split_by: child i gets len(v)*w[i]/sum(w) elements, w = s" in out
    sites = "".join(ln for ln in out.splitlines(keepends=True) if not ln.startswith("#"))
    assert "balanced" not in sites and "child_speeds()" not in sites, out
    assert "unknown(split(v, p): [int])" in sites and "p = nchildren" not in sites, out


def test_example_balance_is_shape_independent_with_auto(sglc_compile: CompileCache) -> None:
    exe = sglc_compile(REPO / "examples" / "balance.sgl", "omp").require()
    want = (REPO / "examples" / "balance.out").read_text()
    for args in (["--sgl-shape", "3x2", "--sgl-speeds=auto"], ["--sgl-shape", "0"]):
        rc, out, err = run(exe, args)
        assert rc == 0, err
        assert out == want
