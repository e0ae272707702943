"""Golden text dumps: the checked AST (`--emit=ast`) and the IR after lower
and after fuse (`--dump-after=lower`, `--emit=ir`) of small programs.

A change in a dump shows up here as a diff to review; when it is intended,
`make golden-update` (pytest --update-golden) rewrites the files
tests/snapshots/NAME.ast, NAME.ir (after the whole pipeline) and
NAME.lower.ir (the unfused IR).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import check_golden

from sglc import astext, ir, irtext, pipeline
from sglc.passes import IR_STAGES

SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
# (program, dump): AST for both, the IR after every stage for superstep.sgl
# (it fuses), after the pipeline for values.sgl (no supersteps: statements)
# and nodevars.sgl (node variables: `node var` and `::name`)
CASES = [("superstep", "ast"), ("superstep", "lower.ir"), ("superstep", "ir"),
         ("values", "ast"), ("values", "ir"), ("nodevars", "ast"), ("nodevars", "ir")]


def dump(name: str, kind: str) -> str:
    src = SNAPSHOTS / f"{name}.sgl"
    path = src.name  # as a user in that folder would give it
    if kind == "ast":
        res = pipeline.run(src.read_text(), path, "check")
        assert res.ast is not None
        return astext.format_program(res.ast, path)
    stage = IR_STAGES[-1] if kind == "ir" else kind.removesuffix(".ir")
    res = pipeline.run(src.read_text(), path, stage, check_ir=True)
    assert res.ir is not None
    return irtext.format_program(res.ir, stage)


@pytest.mark.parametrize("name, kind", CASES, ids=[f"{n}.{k}" for n, k in CASES])
def test_dump(name: str, kind: str, update_golden: bool) -> None:
    check_golden(SNAPSHOTS / f"{name}.{kind}", dump(name, kind), update_golden,
                 f"the {kind} dump of {name}.sgl")


def test_ir_text_marks_other_levels_and_shadowed_names() -> None:
    src = ("func main() {\n    var x = 1;\n    if x > 0 {\n        var x = 2.5;\n"
           "        print(x);\n    }\n    print(-x, (x + 1) * 2);\n}\n")
    res = pipeline.run(src, "t.sgl", "fuse")
    assert res.ir is not None
    text = irtext.format_program(res.ir)
    # two variables named x: their C names tell them apart
    assert "x#v_x = 1" in text and "print(x#v_x_" in text, text
    assert "print(-x#v_x, (x#v_x + 1) * 2)" in text, text
    # an expression at another level than its statement (none in checked programs)
    stmt = res.ir.functions[0].body[0]
    assert isinstance(stmt, ir.Assign)
    stmt.value.level = 1
    assert "x#v_x = 1@L1" in irtext.format_program(res.ir)
