"""Every SGL program with a golden output, on every machine shape and target.

Folders: tests/programs/, examples/ and ../shared/sgl/examples/. For each
``NAME.sgl``:

- ``NAME.out``: the output on every shape (shape-independent program);
- ``NAME.SHAPE.out`` (e.g. ``NAME.2x3.out``): the output on that shape only;
- in the shared folder, ``NAME.nK.out``: the output for the argument ``K``
  (that folder's README); in ours, a first line ``// args: 5 2.5`` gives the
  arguments of ``NAME.out``.

The mpi target runs on every shape of SHAPES, the omp target on OMP_SHAPES
(one process) and the seq target on SEQ_SHAPES; a shape-dependent program only
on the shapes that have a file. The generated C must compile without a
warning under -Wall -Wextra (sglc -v shows the C compiler's output). A run
must exit 0, print nothing on stderr and print exactly the golden text. Each run gets its own empty cwd (programs write
tmp_*.txt files there); a program with a ``NAME_input.py`` beside it gets its
input files made there first (tests/inputs.py).

The golden files are never written from sglc's output: ``--update-golden``
(make golden-update) has tests/test_refinterp.py write them from the
reference interpreter (tests/refinterp/), and here only compares.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import (
    HAVE_MPI,
    OMP_SHAPES,
    REPO,
    SEQ_SHAPES,
    SHAPES,
    SHARED,
    SHARED_MISSING_REASON,
    CompileCache,
    run_program,
)
from inputs import prepare

VERBOSE = ("-v",)
C_WARNING_RE = re.compile(r"\.(c|h|sgl):\d+(:\d+)?: warning:")
SHAPE_RE = re.compile(r"^(\d+|\[\d+(,\d+)*\])(x(\d+|\[\d+(,\d+)*\]))*$")  # 2x3, 2x[1,3]
ARGS_RE = re.compile(r"^//\s*args:(.*)$")
SHARED_ARG_RE = re.compile(r"^n(-?\d+(?:\.\d+)?)$")

FOLDERS: list[tuple[str, Path, bool]] = [  # (label, folder, ours)
    ("programs", REPO / "tests" / "programs", True),
    ("examples", REPO / "examples", True),
    ("shared", SHARED / "examples", False),
    # the brief's programs of its newest rules (structs, strings, node variables, bitwise)
    ("shared-new", SHARED / "new", False),
]


@dataclass(frozen=True)
class Case:
    """One program run: a program, its arguments, its golden file, a target and
    a shape."""

    label: str
    src: Path
    ours: bool
    variant: str  # "" or the middle part of NAME.VARIANT.out
    args: tuple[str, ...]
    golden: Path
    target: str
    nprocs: int
    shape: str
    problem: str = ""  # why this case cannot be run as it stands (the test fails)

    @property
    def id(self) -> str:
        name = self.src.stem + (f".{self.variant}" if self.variant else "")
        if self.target == "mpi":
            return f"{self.label}/{name}-{self.shape}-np{self.nprocs}"
        return f"{self.label}/{name}-{self.target}-{self.shape}"


def _first_line_args(src: Path) -> tuple[tuple[str, ...], str]:
    try:
        first = src.read_text(encoding="utf-8").split("\n", 1)[0]
    except (OSError, UnicodeDecodeError) as e:
        return (), f"cannot read {src}: {e}"
    m = ARGS_RE.match(first.strip())
    return (tuple(m.group(1).split()) if m else ()), ""


def _all_shapes(nprocs_shape: list[tuple[int, str]], only: set[str] | None
                ) -> list[tuple[str, int, str]]:
    runs = [("mpi", n, s) for n, s in nprocs_shape]
    runs += [("omp", 1, s) for s in OMP_SHAPES]
    # seq simulates any shape: a shape-dependent program runs there on every
    # shape it has a file for.
    runs += [("seq", 1, s) for s in (SEQ_SHAPES if only is None else sorted(only))]
    # seq first: the cheapest target fails first.
    runs.sort(key=lambda r: r[0] != "seq")
    if only is None:
        return runs
    return [r for r in runs if r[2] in only]


def _cases_for(label: str, folder: Path, ours: bool) -> list[Case]:
    cases: list[Case] = []
    for src in sorted(folder.glob("*.sgl")):
        name = src.stem
        base_args, problem = _first_line_args(src) if ours else ((), "")
        outs = sorted(folder.glob(f"{name}.out")) + sorted(folder.glob(f"{name}.*.out"))
        plain = [p for p in outs if p.name == f"{name}.out"]
        per_shape: dict[str, Path] = {}
        variants: list[tuple[str, tuple[str, ...], Path, str]] = []
        for p in outs:
            middle = p.name[len(name) + 1:-len(".out")]
            if p.name == f"{name}.out" or "." in middle:
                continue  # NAME.out, or another program's file (NAME.x.out of NAME.x.sgl)
            if SHAPE_RE.match(middle):
                per_shape[middle] = p
            elif not ours and (m := SHARED_ARG_RE.match(middle)):
                variants.append((middle, (m.group(1),), p, ""))
            else:
                variants.append((middle, (), p, f"{p.name}: cannot tell which arguments or "
                                                 "shape this golden file is for"))

        def add(variant: str, args: tuple[str, ...], golden: Path, prob: str,
                only: set[str] | None, writer_shape: str | None, *, src: Path = src,
                problem: str = problem) -> None:
            for target, n, shape in _all_shapes(SHAPES, only):
                cases.append(Case(label, src, ours, variant, args, golden, target, n, shape,
                                  prob or problem))

        if plain or (ours and not per_shape):
            # Shape-independent (also a new program of ours with no golden yet:
            # it fails until --update-golden writes NAME.out).
            add("", base_args, folder / f"{name}.out", "", None, SEQ_SHAPES[0])
        if per_shape:
            if plain:
                for shape, p in per_shape.items():
                    for target, n, s in _all_shapes(SHAPES, {shape}):
                        cases.append(Case(label, src, ours, shape, base_args, p, target, n, s,
                                          f"both {name}.out and {p.name} exist: a program is "
                                          "either shape-independent or not"))
            else:
                for shape, p in per_shape.items():
                    add("", base_args, p, "", {shape}, shape)
        for middle, args, p, prob in variants:
            add(middle, args, p, prob, None, None)
    return cases


def _collect() -> list:
    params = []
    for label, folder, ours in FOLDERS:
        if not folder.is_dir():
            if not ours:
                params.append(pytest.param(None, id=f"{label}/(absent)",
                                           marks=pytest.mark.skip(reason=SHARED_MISSING_REASON)))
            continue
        for case in _cases_for(label, folder, ours):
            marks = [pytest.mark.mpi] if case.target == "mpi" else []
            params.append(pytest.param(case, id=case.id, marks=marks))
    return params


def _diff(expected: str, actual: str, golden: Path) -> str:
    lines = list(difflib.unified_diff(expected.splitlines(keepends=True),
                                      actual.splitlines(keepends=True),
                                      fromfile=str(golden), tofile="stdout"))
    text = "".join(lines[:80])
    if len(lines) > 80:
        text += f"... ({len(lines) - 80} more diff lines)\n"
    return text


@pytest.fixture(scope="session")
def selected_targets(request: pytest.FixtureRequest) -> dict[Path, list[str]]:
    """For each program, the targets of the cases this session runs (after
    -k and the like): what is worth compiling ahead, concurrently."""
    wanted: dict[Path, list[str]] = {}
    for item in request.session.items:
        case = getattr(item, "callspec", None) and item.callspec.params.get("case")
        if isinstance(case, Case) and case.target not in wanted.setdefault(case.src, []):
            if case.target != "mpi" or HAVE_MPI:
                wanted[case.src].append(case.target)
    return wanted


@pytest.mark.parametrize("case", _collect())
def test_program(case: Case, sglc_compile: CompileCache, tmp_path: Path,
                 selected_targets: dict[Path, list[str]]) -> None:
    if case.problem:
        pytest.fail(case.problem, pytrace=False)
    # -v: the C compiler's output too, which must hold no warning
    sglc_compile.prefetch(case.src, selected_targets.get(case.src, [case.target]), VERBOSE)
    compiled = sglc_compile(case.src, case.target, VERBOSE)
    exe = compiled.require()
    # after the C compiler's command line: its warnings, at lines of the C
    # or, through #line, of the .sgl (sglc's own warnings come before)
    lines = compiled.stderr.splitlines()
    cc_at = next((i for i, ln in enumerate(lines) if " -Wextra " in ln), len(lines))
    c_warnings = [ln for ln in lines[cc_at + 1:] if C_WARNING_RE.search(ln)]
    if c_warnings:
        pytest.fail(f"{case.src.name} ({case.target}): the generated C has warnings under "
                    "-Wall -Wextra\n" + "\n".join(c_warnings), pytrace=False)
    prepare(case.src, tmp_path)
    rc, out, err = run_program(exe, case.nprocs, case.shape, case.args, cwd=tmp_path)
    where = (f"{case.src.name} args={list(case.args)} target={case.target} "
             f"np={case.nprocs} --sgl-shape {case.shape}")
    if rc != 0:
        pytest.fail(f"{where}: exit status {rc}\n--- stderr\n{err}--- stdout\n{out[-3000:]}",
                    pytrace=False)
    if err:
        pytest.fail(f"{where}: unexpected stderr\n{err}", pytrace=False)
    if not case.golden.exists():
        pytest.fail(f"{where}: no golden file {case.golden.relative_to(case.golden.parent.parent)}"
                    " (make golden-update writes it from the reference interpreter)", pytrace=False)
    expected = case.golden.read_text()
    if out != expected:
        pytest.fail(f"{where}: stdout differs from {case.golden.name}\n"
                    + _diff(expected, out, case.golden), pytrace=False)
