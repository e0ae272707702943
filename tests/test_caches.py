"""sglc's caches of its own tables (sglc.paths.cache_dir): the parse tables
(Lark's `cache=` file) and the compiled templates (Jinja2's bytecode
cache).  A cache saves time only: an empty, damaged, stale or unusable one
gives the same C, with no message.

The expected C is what the same compiler writes in-process with no cache
folder at all (SGLC_CACHE on a path that cannot be a folder)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import REPO, run_checked, run_env, sglc_command

SRC = REPO / "examples" / "hello.sgl"


def emit_c(cache: Path, out: Path) -> tuple[str, str]:
    """(the C that sglc writes for SRC with SGLC_CACHE=cache, stderr)."""
    rc, _, err = run_checked([*sglc_command(), str(SRC), "--emit", "c", "-o", str(out),
                              "--target", "seq"], env=run_env({"SGLC_CACHE": str(cache)}),
                             timeout=120)
    assert rc == 0, err
    return out.read_text(encoding="utf-8"), err


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The C written with no usable cache folder: SGLC_CACHE under a file."""
    tmp = tmp_path_factory.mktemp("nocache")
    (tmp / "file").write_text("not a folder")
    c, err = emit_c(tmp / "file" / "cache", tmp / "ref.c")
    assert err == ""
    return c


def parser_files(cache: Path) -> list[Path]:
    return sorted(cache.glob("parser-*.lark"))


def template_files(cache: Path) -> list[Path]:
    return sorted((cache / "templates").glob("*.cache"))


def test_first_and_second_compile_fill_and_use_the_caches(tmp_path: Path,
                                                          reference: str) -> None:
    cache = tmp_path / "cache"
    assert emit_c(cache, tmp_path / "a.c") == (reference, "")
    parsers, templates = parser_files(cache), template_files(cache)
    assert len(parsers) == 1 and len(templates) == 1
    stamps = [p.stat().st_mtime_ns for p in parsers + templates]
    assert emit_c(cache, tmp_path / "b.c") == (reference, "")
    assert [p.stat().st_mtime_ns for p in parsers + templates] == stamps  # read, not rebuilt


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty"])
def test_a_damaged_cache_is_rebuilt(tmp_path: Path, reference: str, damage: str) -> None:
    cache = tmp_path / "cache"
    emit_c(cache, tmp_path / "a.c")
    for f in parser_files(cache) + template_files(cache):
        data = f.read_bytes()
        f.write_bytes({"garbage": b"\x80\x04not a pickle\n" * 50,
                       "truncated": data[: len(data) // 2], "empty": b""}[damage])
    assert emit_c(cache, tmp_path / "b.c") == (reference, "")
    # Rewritten whole: a third compile reads them back.
    assert all(f.stat().st_size > 1000 for f in parser_files(cache) + template_files(cache))
    assert emit_c(cache, tmp_path / "c.c") == (reference, "")


def test_a_stale_parser_cache_of_another_grammar_is_not_used(tmp_path: Path,
                                                            reference: str) -> None:
    """The file name is derived from the grammar text and Lark's version, and
    Lark checks the hash inside: a file of another grammar under the name of
    this one is rebuilt, not trusted."""
    cache = tmp_path / "cache"
    emit_c(cache, tmp_path / "a.c")
    other = tmp_path / "other"
    (mine,) = parser_files(cache)
    # Tables of a different grammar (the same one with a rule renamed).
    import lark

    from sglc.paths import grammar_path
    text = grammar_path().read_text(encoding="utf-8") + "\n_unused_rule: NAME\n"
    lark.Lark(text, parser="lalr", lexer="basic", maybe_placeholders=True,
              keep_all_tokens=True, cache=str(other))
    mine.write_bytes(other.read_bytes())
    assert emit_c(cache, tmp_path / "b.c") == (reference, "")
    assert mine.read_bytes() != other.read_bytes()  # rebuilt for this grammar


def test_a_read_only_cache_costs_time_only(tmp_path: Path, reference: str) -> None:
    """A cache folder whose files cannot be written (here: the cache files'
    names are taken by folders, which also stops root): the same C, no
    message."""
    cache = tmp_path / "cache"
    emit_c(cache, tmp_path / "probe.c")
    names = parser_files(cache) + template_files(cache)
    for f in names:
        f.unlink()
        f.mkdir()
    assert emit_c(cache, tmp_path / "a.c") == (reference, "")
    assert all(f.is_dir() for f in names)
