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
    return sorted(cache.glob("templates-*/*.cache"))


def test_first_and_second_compile_fill_and_use_the_caches(tmp_path: Path,
                                                          reference: str) -> None:
    cache = tmp_path / "cache"
    assert emit_c(cache, tmp_path / "a.c") == (reference, "")
    parsers, templates = parser_files(cache), template_files(cache)
    assert len(parsers) == 1 and len(templates) == 1
    stamps = [p.stat().st_mtime_ns for p in parsers + templates]
    assert emit_c(cache, tmp_path / "b.c") == (reference, "")
    assert [p.stat().st_mtime_ns for p in parsers + templates] == stamps  # read, not rebuilt


def _damaged(data: bytes, damage: str) -> bytes:
    if damage == "after-header":
        # The file's own header (Lark's hash line, Jinja2's magic bytes),
        # then garbage where the pickled tables or checksum start.
        import jinja2.bccache
        head = (data.split(b"\n", 1)[0] + b"\n" if not data.startswith(jinja2.bccache.bc_magic)
                else jinja2.bccache.bc_magic)
        return head + b"\x80\x04\x95garbage" * 20
    return {"garbage": b"\x80\x04not a pickle\n" * 50,
            "truncated": data[: len(data) // 2], "empty": b""}[damage]


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty", "after-header"])
def test_a_damaged_cache_is_rebuilt(tmp_path: Path, reference: str, damage: str) -> None:
    cache = tmp_path / "cache"
    emit_c(cache, tmp_path / "a.c")
    for f in parser_files(cache) + template_files(cache):
        f.write_bytes(_damaged(f.read_bytes(), damage))
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


def test_concurrent_compiles_on_an_empty_cache(tmp_path: Path, reference: str) -> None:
    """Four sglc processes at once on an empty cache (what the two pytest
    processes of `make test` do): the same C from each, one tables file
    that a fifth compile reads without rebuilding it."""
    import subprocess

    cache = tmp_path / "cache"
    env = run_env({"SGLC_CACHE": str(cache)})
    procs = [subprocess.Popen([*sglc_command(), str(SRC), "--emit", "c", "-o",
                               str(tmp_path / f"{i}.c"), "--target", "seq"], env=env,
                              stderr=subprocess.PIPE, text=True) for i in range(4)]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0 and err == "", err
    assert all((tmp_path / f"{i}.c").read_text() == reference for i in range(4))
    (tables,) = parser_files(cache)
    stamp = tables.stat().st_mtime_ns
    assert emit_c(cache, tmp_path / "again.c") == (reference, "")
    assert tables.stat().st_mtime_ns == stamp


def test_no_home_directory(monkeypatch: pytest.MonkeyPatch) -> None:
    """No SGLC_CACHE, no XDG_CACHE_HOME and no home directory (a container
    started with --user N): the front end works without its caches, and
    the folder's users get a CacheError that says what to set."""
    import sglc.paths as paths
    from sglc import parse

    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    for var in ("SGLC_CACHE", "XDG_CACHE_HOME", "HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    with pytest.raises(paths.CacheError, match="SGLC_CACHE"):
        paths.cache_dir()
    monkeypatch.setattr(parse, "_parser", None)
    prog = parse.parse_program("func main() {\n    print(1);\n}\n", "x.sgl")
    assert prog.span.end_line == 4
    from sglc import templates
    assert templates._bytecode_cache() is None


def test_an_unusable_cache_folder_is_a_clear_error(tmp_path: Path, reference: str) -> None:
    """Building the runtime needs the cache folder: exit 2 and a message
    naming the folder and SGLC_CACHE, no traceback; the C alone needs no
    cache."""
    (tmp_path / "file").write_text("not a folder")
    bad = tmp_path / "file" / "cache"
    rc, _, err = run_checked([*sglc_command(), str(SRC), "-o", str(tmp_path / "exe"),
                              "--target", "seq"], env=run_env({"SGLC_CACHE": str(bad)}),
                             timeout=120)
    assert rc == 2, err
    assert err.startswith("sglc: error: cannot make sglc's cache folder") and "SGLC_CACHE" in err
    assert "Traceback" not in err and "internal error" not in err
