"""Deeply nested vector literals `[[[...1...]]]` are checked in time linear
in their depth (`sglc check` of depth 10,000 took 76 s, growing with the
square of the depth): each level of a literal coerces its elements once,
and a literal whose type is already the one wanted is not descended again
(sglc/check/base.py, _can_coerce and _apply_coerce).  The test counts the
calls of those two helpers, a measure that does not depend on the
machine's speed, and checks the types a mixed literal gets."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from conftest import run_checked, sglc_command

import sglc.check.base as base
from sglc import ast as A
from sglc import deepstack, frontend, parse
from sglc.types import FLOAT, INT, Vec


def _source(depth: int) -> str:
    return ("func main() {\n    var v = " + "[" * depth + "1" + "]" * depth
            + ";\n    print(len(v));\n}\n")


def _checked(src: str) -> A.Program:
    return deepstack.call_deep(lambda: frontend.check(parse.parse_program(src, "t.sgl"), "t.sgl"))


def _calls(depth: int, monkeypatch: pytest.MonkeyPatch) -> int:
    count = [0]
    for name in ("_can_coerce", "_apply_coerce"):
        orig = getattr(base, name)

        def counted(*args: object, _orig=orig) -> object:  # type: ignore[no-untyped-def]
            count[0] += 1
            return _orig(*args)

        monkeypatch.setattr(base, name, counted)
    _checked(_source(depth))
    monkeypatch.undo()
    return count[0]


@pytest.mark.parametrize("depth", [50, 400])
def test_coercion_steps_are_linear(depth: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # each level: its element tried against its candidate type once, and
    # coerced once (before: depth * (depth + 1) / 2 steps of each)
    assert _calls(depth, monkeypatch) <= 4 * depth + 4


def _init_of_v(prog: A.Program) -> A.Expr:
    for f in prog.funcs:
        for s in f.body.stmts:
            if isinstance(s, A.VarDecl) and s.name == "v":
                assert s.init is not None
                return s.init
    raise AssertionError("no var v")


def test_mixed_literal_types() -> None:
    """[[[1], [2]], [[2.5]]]: every level float, the int literals too."""
    e = _init_of_v(_checked("func main() {\n    var v = [[[1], [2]], [[2.5]]];\n"
                            "    print(len(v));\n}\n"))
    assert e.ty == Vec(Vec(Vec(FLOAT)))
    assert isinstance(e, A.VecLit)
    leaves = [x for a in e.elems for b in a.elems for x in b.elems]  # type: ignore[attr-defined]
    assert [x.ty for x in leaves] == [FLOAT, FLOAT, FLOAT]
    assert INT not in [x.ty for x in leaves]


def test_depth_10000_checks(tmp_path: Path) -> None:
    src = tmp_path / "deep.sgl"
    src.write_text(_source(10_000))
    rc, out, err = run_checked([*sglc_command(), "check", str(src)], timeout=120)
    assert (rc, err) == (0, ""), err[-2000:]
    assert sys.getrecursionlimit() < 200_000  # call_deep restored the caller's
