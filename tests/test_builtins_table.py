"""The builtin table (sglc.builtins) is well formed: every template names
only arguments its form has, statement builtins have no value, the
language reference lists every builtin, and fusion's notion of a safe
builtin (pure and unable to fail) is what the table says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sglc import builtins as B
from sglc.types import FLOAT, INT, VOID, Vec

DOCS = Path(__file__).resolve().parent.parent / "docs" / "language.md"
HOLE = re.compile(r"\{([a-zA-Z]*)(\d*)\}")


def _templates(form: B.Form) -> list[str]:
    if isinstance(form.c, str):
        return [form.c]
    if callable(form.c):
        return []
    return list(form.c.values())


@pytest.mark.parametrize("name", sorted(B.NAMES))
def test_entry_is_well_formed(name: str) -> None:
    entry = B.TABLE[name]
    assert entry.forms and len(set(entry.arities)) == len(entry.arities)
    for form in entry.forms:
        for tmpl in _templates(form):
            for kind, i in HOLE.findall(tmpl):
                if i:
                    assert kind in ("", "v", "a", "m", "p", "T"), tmpl
                    assert int(i) < len(form.args), tmpl
                else:
                    assert kind in ("loc", "S", "TR"), tmpl
        # the places and moved arguments the passes read from the table
        # (Arg.place, Arg.moved) are the {p}/{m} holes of the C templates
        # (take, the variant for an owned argument 0, aside)
        holes = {(kind, int(i)) for t in _templates(form) for kind, i in HOLE.findall(t) if i}
        assert {i for kind, i in holes if kind == "p"} == \
            {i for i, a in enumerate(form.args) if a.place}, name
        assert {i for kind, i in holes if kind == "m"} == \
            {i for i, a in enumerate(form.args) if a.moved}, name
        if entry.statement:
            assert form.result == B.Fixed(VOID)
        if form.coerce_arg is not None:
            assert form.coerce_arg < len(form.args)


def test_docs_list_every_builtin() -> None:
    text = DOCS.read_text(encoding="utf-8")
    for name in B.NAMES:
        assert re.search(rf"`{name}\(|\b{name}\b", text), name


def test_result_rules() -> None:
    ts = [Vec(Vec(INT)), FLOAT]
    assert B.Fixed(INT)(ts) == INT
    assert B.ArgType(1)(ts) == FLOAT
    assert B.ElemOf(0)(ts) == Vec(INT)
    assert B.VecOf(1)(ts) == Vec(FLOAT)
    assert B.form_of("min", 1).result([Vec(FLOAT)]) == FLOAT
    assert B.form_of("min", 2).result([INT, INT]) == INT


def test_safe_for_fusion() -> None:
    safe = {(n, k) for n, b in B.TABLE.items() for k in b.arities
            if b.pure and not b.can_fail_on_master(k)}
    assert ("min", 2) in safe and ("min", 1) not in safe
    assert ("split_by", 2) not in safe and ("child_speeds", 0) in safe
    for n in ("print", "push", "wtime", "read_ints", "write_floats"):
        assert not B.TABLE[n].pure
    assert B.TABLE["len"].can_fail_on_master(3)  # no such form: never assumed safe


SGL_H = Path(__file__).resolve().parent.parent / "runtime_c" / "sgl.h"


@pytest.mark.parametrize("key", sorted(B.COMPOSED))
def test_compositions_are_well_formed(key: tuple[str, str]) -> None:
    """A composition (the pass `compose`) takes the inner builtin's
    arguments and gives the outer's result, names C functions the runtime
    declares, and no program can call it by name."""
    outer, inner = key
    entry = B.COMPOSED[key]
    assert entry.name == f"{outer}.{inner}" and entry.name not in B.NAMES and B.lookup(entry.name) is None
    assert B.entry(entry.name) is entry and B.form_of(entry.name, 1) is entry.forms[0]
    header = SGL_H.read_text(encoding="utf-8")
    for form in entry.forms:
        inner_form = B.form_of(inner, len(form.args))
        assert [a.accepts for a in form.args] == [a.accepts for a in inner_form.args]
        t = Vec(Vec(INT))
        assert form.result([t]) == B.form_of(outer, 1).result([inner_form.result([t])])
        assert (form.take is None) == (inner_form.take is None)
        for tmpl in [*_templates(form), *([form.take] if form.take else [])]:
            fn = tmpl.split("(")[0]
            assert re.search(rf"\b{fn}\(", header), fn
