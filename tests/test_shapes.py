"""Machine shapes, regular and uneven (brief §10): --sgl-shape with bracket
levels ("2x[1,3]", "3x[2,1,2]x2"), on the seq, omp and mpi targets, and the
embedding library.

The expected text is computed here from a model of the tree (`Tree`, built
from the shape's text independently of the runtime), never from a run:

- tests/shapes/nodes.sgl prints, on every node in depth-first order, its path
  and node queries (depth, child_index, nchildren, nworkers, master) and
  child_speeds(); with an argument k, worker k fails and the error names its
  node;
- the shared example hello.sgl prints every node's nchildren and nworkers;
- ranks started with different OMP_NUM_THREADS (an MPMD launch) make the
  default tree uneven;
- a malformed shape, or one that does not fit the MPI processes, stops the
  program with exit status 1 and one message that names the shape and what
  is wrong.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import (
    HAVE_MPI,
    REPO,
    CompileCache,
    mpirun_prefix,
    require_shared,
    run_checked,
    run_env,
    run_program,
)

NODES = REPO / "tests" / "shapes" / "nodes.sgl"


# ------------------------------------------------------------------ the model


@dataclass
class Tree:
    """A node of the model: its children, in order."""

    kids: list[Tree] = field(default_factory=list)

    @staticmethod
    def parse(shape: str) -> Tree:
        """The tree of a shape: "0", or levels separated by x, each a count
        for every node of the level above or [one, count, per, node]."""
        root = Tree()
        if shape == "0":
            return root
        level = [root]
        for part in shape.split("x"):
            if part.startswith("["):
                counts = [int(c) for c in part.strip("[]").split(",")]
            else:
                counts = [int(part)] * len(level)
            assert len(counts) == len(level), f"model: {shape}: {part} for {len(level)} nodes"
            nxt = []
            for node, c in zip(level, counts, strict=True):
                node.kids = [Tree() for _ in range(c)]
                nxt += node.kids
            level = nxt
        return root

    @property
    def nworkers(self) -> int:
        return sum(k.nworkers for k in self.kids) if self.kids else 1

    def walk(self, path: tuple[int, ...] = (0,)):
        """(path, node) in depth-first order."""
        yield path, self
        for i, k in enumerate(self.kids):
            yield from k.walk(path + (i,))

    def workers(self) -> list[tuple[int, ...]]:
        return [p for p, n in self.walk() if not n.kids]

    def level_widths(self) -> list[int]:
        widths, level = [], [self]
        while level[0].kids:
            level = [k for n in level for k in n.kids]
            widths.append(len(level))
        return widths


def nodes_output(shape: str) -> str:
    """What nodes.sgl prints on the shape."""
    lines = []
    for path, n in Tree.parse(shape).walk():
        speeds = ", ".join(repr(float(k.nworkers)) for k in n.kids)
        master = "true" if n.kids else "false"
        lines.append(f"node [{', '.join(map(str, path))}] {len(path) - 1} {path[-1]} "
                     f"{len(n.kids)} {n.nworkers} {master} [{speeds}]")
    return "".join(line + "\n" for line in lines)


def hello_output(shape: str) -> str:
    """What the shared example hello.sgl prints on the shape."""
    lines: list[str] = []

    def greet(n: Tree, depth: int, index: int) -> None:
        if not n.kids:
            lines.append(f"worker {index} at depth {depth}")
            return
        lines.append(f"master at depth {depth} with {len(n.kids)} children and "
                     f"{n.nworkers} workers")
        for i, k in enumerate(n.kids):
            greet(k, depth + 1, i)
        lines.append(f"master at depth {depth} done")

    greet(Tree.parse(shape), 0, 0)
    return "".join(line + "\n" for line in lines)


def test_model() -> None:
    # the model itself, on the brief's examples (§10 and the issue)
    t = Tree.parse("2x[1,3]")
    assert [len(k.kids) for k in t.kids] == [1, 3] and t.nworkers == 4
    t = Tree.parse("3x[2,1,2]x2")
    assert [len(k.kids) for k in t.kids] == [2, 1, 2] and t.nworkers == 10
    assert t.level_widths() == [3, 5, 10]
    assert Tree.parse("2x3").level_widths() == [2, 6]
    assert Tree.parse("0").workers() == [(0,)]


# ------------------------------------------------------------------ running


def _exe(sglc_compile: CompileCache, src: Path, target: str) -> Path:
    sglc_compile.prefetch(src, ["seq", "omp"] + (["mpi"] if HAVE_MPI else []))
    return sglc_compile(src, target).require()


def _run_ok(exe: Path, nprocs: int, shape: str | None, args: list[str], where: str) -> str:
    rc, out, err = run_program(exe, nprocs, shape, args)
    assert rc == 0 and not err, f"{where}: exit {rc}\n--- stderr\n{err}--- stdout\n{out}"
    return out


# (target, MPI processes, shape): uneven shapes of every kind: a bracket
# level at the top, in the middle and at the bottom, process levels over
# uneven levels, threads below a process in uneven numbers
NODE_CASES = [
    ("seq", 1, "2x[1,3]"),
    ("seq", 1, "3x[2,1,2]x2"),
    ("seq", 1, "[3]x[1,2,3]"),
    ("seq", 1, "2x[1,3]x[2,1,1,3]"),
    ("seq", 1, "1x[2]x[1,4]"),
    ("omp", 1, "2x[1,3]"),
    ("omp", 1, "3x[2,1,2]x2"),
    ("mpi", 1, "3x[2,1,2]"),       # threads only, nested and uneven
    ("mpi", 2, "2x[1,3]"),         # rank 0: 1 thread child, rank 1: 3
    ("mpi", 4, "2x[1,3]x2"),       # two process levels, the second uneven
    ("mpi", 5, "3x[2,1,2]"),       # the process level is the uneven one
    ("mpi", 3, "3x[2,1,2]x2"),     # a process level, then two thread levels
]


def _ids(cases) -> list[str]:
    return [f"{t}-np{n}-{s}" for t, n, s in cases]


@pytest.mark.parametrize(("target", "nprocs", "shape"),
                         [pytest.param(*c, marks=[pytest.mark.mpi] if c[0] == "mpi" else [])
                          for c in NODE_CASES], ids=_ids(NODE_CASES))
def test_node_queries(target: str, nprocs: int, shape: str, sglc_compile: CompileCache) -> None:
    exe = _exe(sglc_compile, NODES, target)
    out = _run_ok(exe, nprocs, shape, [], f"{target} np={nprocs} --sgl-shape {shape}")
    assert out == nodes_output(shape)


# (target, MPI processes, shape, worker): the failing worker's node path
# must be its place in the tree, on whichever process hosts it
ERROR_CASES = [
    ("seq", 1, "3x[2,1,2]x2", 4),
    ("mpi", 4, "2x[1,3]x2", 3),
    ("mpi", 4, "2x[1,3]x2", -1),
    ("mpi", 5, "3x[2,1,2]", -1),
]


@pytest.mark.parametrize(("target", "nprocs", "shape", "k"),
                         [pytest.param(*c, marks=[pytest.mark.mpi] if c[0] == "mpi" else [])
                          for c in ERROR_CASES],
                         ids=[f"{t}-np{n}-{s}-w{k}" for t, n, s, k in ERROR_CASES])
def test_error_names_the_node(target: str, nprocs: int, shape: str, k: int,
                              sglc_compile: CompileCache) -> None:
    tree = Tree.parse(shape)
    workers = tree.workers()
    k = k % len(workers)
    exe = _exe(sglc_compile, NODES, target)
    rc, out, err = run_program(exe, nprocs, shape, [str(k)])
    path = ".".join(map(str, workers[k]))
    assert rc == 1, err
    msgs = [line for line in err.splitlines() if "runtime error" in line]  # not mpirun's
    assert msgs == [f"{NODES}:11:19: runtime error: index 1 out of range for vector of "
                    f"length 1 (node {path})"], err
    # the output before the error: every node up to the failing worker
    expected = nodes_output(shape).splitlines(keepends=True)
    upto = [p for p, _ in tree.walk()].index(workers[k]) + 1
    assert out == "".join(expected[:upto])


@pytest.mark.parametrize(("target", "nprocs", "shape"), [
    ("seq", 1, "2x[1,3]x2"),
    ("omp", 1, "3x[2,1,2]"),
    pytest.param("mpi", 2, "2x[1,3]", marks=pytest.mark.mpi),
])
def test_shared_hello_on_uneven_shapes(target: str, nprocs: int, shape: str,
                                       sglc_compile: CompileCache) -> None:
    hello = require_shared() / "examples" / "hello.sgl"
    exe = _exe(sglc_compile, hello, target)
    assert _run_ok(exe, nprocs, shape, [], f"hello {target} {shape}") == hello_output(shape)


# ------------------------------------------------------------------ the default tree under MPI


def _mpmd(exe: Path, threads: list[int], shape_env: str | None = None) -> tuple[int, str, str]:
    """One rank per entry of threads, each started with that OMP_NUM_THREADS."""
    cmd = ["mpirun", *mpirun_prefix(1)[3:]]  # without "-np 1"
    for i, t in enumerate(threads):
        if i:
            cmd.append(":")
        cmd += ["-np", "1", "-x", f"OMP_NUM_THREADS={t}", str(exe)]
    env = run_env()
    if shape_env is not None:
        env["SGL_SHAPE"] = shape_env
    return run_checked(cmd, env=env, timeout=60)



@pytest.mark.parametrize(("target", "nprocs"), [("seq", 1), ("omp", 1),
                                                 pytest.param("mpi", 2, marks=pytest.mark.mpi)])
def test_sgl_help(target: str, nprocs: int, sglc_compile: CompileCache) -> None:
    """--sgl-help lists every runtime option once (rank 0 alone) and runs
    nothing."""
    rc, out, err = run_program(_exe(sglc_compile, NODES, target), nprocs, None,
                               ["--sgl-help", "5"])
    assert rc == 0 and not err, err
    for opt in ("--sgl-shape S", "--sgl-stats", "--sgl-trace=", "--sgl-report=", "--sgl-predict=",
                "--sgl-speeds=", "--sgl-machine FILE", "--sgl-help"):
        assert out.count(opt) == 1, (opt, out)
    assert "compiled by sglc" in out
    assert not any(ln.startswith("node ") for ln in out.splitlines())  # ran nothing

@pytest.mark.mpi
@pytest.mark.parametrize(("threads", "shape"), [
    ([1, 3], "2x[1,3]"),   # the example
    ([2, 1, 1], "3x[2,1,1]"),
    ([1, 1], "2"),         # every rank one thread: the thread level is left out
])
def test_default_tree_from_per_rank_threads(threads: list[int], shape: str,
                                            sglc_compile: CompileCache) -> None:
    exe = _exe(sglc_compile, NODES, "mpi")
    rc, out, err = _mpmd(exe, threads)
    assert rc == 0 and not err, f"{threads}: exit {rc}\n{err}"
    assert out == nodes_output(shape)


def test_empty_sgl_shape_alone(sglc_compile: CompileCache) -> None:
    """One process, OMP_NUM_THREADS=2 (run_env), SGL_SHAPE empty: the root
    and its 2 thread children."""
    exe = _exe(sglc_compile, NODES, "omp")
    rc, out, err = run_checked([str(exe)], env=run_env({"SGL_SHAPE": ""}), timeout=60)
    assert (rc, err) == (0, ""), err
    assert out == nodes_output("2")


@pytest.mark.mpi
@pytest.mark.parametrize(("shape_env", "shape"), [
    ("2x2", "2x2"),     # an explicit shape wins over the per-rank threads
    ("", "2x[1,3]"),    # SGL_SHAPE= (empty) is as if unset: the per-rank default tree
])
def test_sgl_shape_with_per_rank_threads(shape_env: str, shape: str,
                                         sglc_compile: CompileCache) -> None:
    exe = _exe(sglc_compile, NODES, "mpi")
    rc, out, err = _mpmd(exe, [1, 3], shape_env=shape_env)
    assert rc == 0 and not err, err
    assert out == nodes_output(shape)


def _mpmd_options(exe: Path, per_rank: list[list[str]]) -> tuple[int, str, str]:
    """One rank per entry, one thread each, each started with its own
    arguments (`-x NAME=VALUE` entries set that rank's environment)."""
    cmd = ["mpirun", *mpirun_prefix(1)[3:]]
    for i, args in enumerate(per_rank):
        if i:
            cmd.append(":")
        envs = [a for a in args if "=" in a and not a.startswith("--")]
        cmd += ["-np", "1", "-x", "OMP_NUM_THREADS=1"]
        for e in envs:
            cmd += ["-x", e]
        cmd += [str(exe), *(a for a in args if a not in envs)]
    env = run_env()
    env.pop("SGL_SHAPE", None)
    return run_checked(cmd, env=env, timeout=60)


@pytest.mark.mpi
@pytest.mark.parametrize(("per_rank", "shape"), [
    ([["--sgl-shape", "2x2"], ["--sgl-shape", "2"]], "2x2"),
    ([["--sgl-shape", "2"], ["--sgl-shape=2x[1,3]"]], "2"),
    ([[], ["SGL_SHAPE=2x2"]], "2"),
    ([["SGL_SHAPE=2x[1,3]"], []], "2x[1,3]"),
    ([[], ["--sgl-bogus"]], "2"),
    ([[], ["--sgl-stats"]], "2"),
], ids=["shapes", "shapes-eq", "env-rank1", "env-rank0", "bad-rank1", "stats-rank1"])
def test_mpmd_ranks_take_rank0s_options(per_rank: list[list[str]], shape: str,
                                        sglc_compile: CompileCache) -> None:
    """Processes of one MPMD launch started with different runtime options
    (--sgl-*, SGL_SHAPE) all take rank 0's: one tree, no hang."""
    exe = _exe(sglc_compile, NODES, "mpi")
    rc, out, err = _mpmd_options(exe, per_rank)
    assert rc == 0 and not err, f"{per_rank}: exit {rc}\n{err}"
    assert out == nodes_output(shape)


@pytest.mark.mpi
@pytest.mark.parametrize("opt", ["--sgl-stats", "--sgl-bogus"])
def test_mpmd_rank0_options_reach_every_rank(opt: str, sglc_compile: CompileCache) -> None:
    """An option given to rank 0 alone acts on every process: the statistics
    are written, a bad option stops all of them with one message."""
    exe = _exe(sglc_compile, NODES, "mpi")
    rc, out, err = _mpmd_options(exe, [[opt], [], []])
    if opt == "--sgl-stats":
        assert rc == 0, err
        assert out == nodes_output("3")
        assert "sgl-stats: shape" in err and "3 processes" in err, err
    else:
        msgs = [ln for ln in err.splitlines() if "runtime error" in ln]
        assert rc == 1 and out == "", err
        assert msgs == [f"{NODES}: runtime error: unknown or malformed runtime option "
                        f"'--sgl-bogus' (known: --sgl-shape S, --sgl-stats[=FILE.json], "
                        f"--sgl-trace=FILE.json, --sgl-report=FILE.html, --sgl-predict=MACHINE.json, "
                        f"--sgl-speeds=auto|auto:MS|workers, --sgl-machine FILE, --sgl-help)"], err


# ------------------------------------------------------------------ malformed shapes

BAD_SHAPES = [
    ("2x[1,3", "level 2: missing ']'"),
    ("2x[1,2,3]", "level 2 lists 3 counts, but level 1 has 2 nodes"),
    ("[0]", "level 1: a count of 0"),
    ("2x[]", "level 2: an empty list []"),
    ("2x[a]", "level 2: expected a count, found 'a'"),
    ("[2,3]", "level 1 lists 2 counts, but there is one node (the root) above it"),
    ("2x[1,,3]", "level 2: expected a count, found ','"),
    ("2x[1;3]", "level 2: expected ',' or ']' after a count, found ';'"),
    ("3x", "level 2: expected a count, found the end"),
    ("2x[1,3]y", "expected 'x' after level 2, found 'y'"),
    ("2xx", "level 2: expected a count, found 'x'"),
    ("2x0", "level 2: a count of 0"),
    ("99999999999", "level 1: a count larger than 1048576"),
    ("", "level 1: expected a count, found the end"),  # --sgl-shape "": not the default tree
]


def _one_error(rc: int, out: str, err: str, shape: str, what: str) -> None:
    assert rc == 1, f"exit {rc}\n{err}"
    assert out == ""
    lines = err.splitlines()
    msg = f"{NODES}: runtime error: bad machine shape '{shape}': {what}"
    assert lines and lines[0].startswith(msg), err
    assert sum("runtime error" in line for line in lines) == 1, err


@pytest.mark.parametrize(("shape", "what"), BAD_SHAPES, ids=[s for s, _ in BAD_SHAPES])
def test_malformed_shape(shape: str, what: str, sglc_compile: CompileCache) -> None:
    exe = _exe(sglc_compile, NODES, "seq")
    rc, out, err = run_program(exe, 1, shape)
    _one_error(rc, out, err, shape, what)


@pytest.mark.mpi
@pytest.mark.parametrize(("nprocs", "shape", "what"), [
    (2, "2x[1,3", "level 2: missing ']' (expected levels like 2x2x3 or 2x[1,3], or 0)"),
    (3, "2x[1,3]", "no level has as many nodes as the 3 MPI processes (the levels have 2, 4 "
                   "nodes)"),
    (2, "0", "no level has as many nodes as the 2 MPI processes (the root is alone)"),
    (2, "1", "no level has as many nodes as the 2 MPI processes (its one level has 1 node)"),
    (2, "3", "no level has as many nodes as the 2 MPI processes (its one level has 3 nodes)"),
])
def test_bad_shape_under_mpi(nprocs: int, shape: str, what: str,
                             sglc_compile: CompileCache) -> None:
    exe = _exe(sglc_compile, NODES, "mpi")
    rc, out, err = run_program(exe, nprocs, shape)
    assert rc != 0
    assert out == ""
    msgs = [line for line in err.splitlines() if "runtime error" in line]
    assert msgs == [f"{NODES}: runtime error: bad machine shape '{shape}': {what}"], err


# ------------------------------------------------------------------ the embedding library


def test_library_uneven_shape(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("cffi")
    import sglc

    src = NODES.read_text().replace("func main()", "func tree()")
    src += "\nfunc main() { }\n"
    for shape in ("3x[2,1,2]x2", "2x[1,3]"):
        m = sglc.load(src, target="omp", shape=shape, numpy=False)
        capsys.readouterr()
        m.visit([0], 0, -1)
        assert capsys.readouterr().out == nodes_output(shape)
    with pytest.raises(ValueError, match=re.escape(
            "bad machine shape '2x[1,2,3]': level 2 lists 3 counts, but level 1 has 2 nodes")):
        sglc.load(src, target="omp", shape="2x[1,2,3]")
