"""Syntax highlighting: the Pygments lexer sglc.highlight and the TextMate
grammar of the VS Code extension (editors/vscode).

- Every program of the repository (and of ../shared/sgl/examples) tokenizes
  with no error token, with both; the two agree on every character.
- The lexer's error tokens are exactly the lexical errors of tests/errors,
  at the place the compiler reports them.
- The keywords of both are the compiler's; the builtins include the
  checker's.
- The Pygments plugin is found by name (the entry point) and `pygmentize`
  runs; the docs' ```sgl blocks tokenize without error.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import pytest
from conftest import REPO, SHARED, require_shared
from pygments import lex
from pygments.token import (
    Comment,
    Error,
    Keyword,
    Name,
    Number,
    Operator,
    Punctuation,
    String,
    Whitespace,
    _TokenType,
)

from sglc.check import BUILTINS as _BUILTINS
from sglc.check import QUERIES as _QUERIES
from sglc.highlight import SGLLexer
from sglc.parse import KEYWORDS as _KEYWORDS

KEYWORDS = frozenset(_KEYWORDS)
BUILTINS = frozenset(_BUILTINS)
QUERIES = frozenset(_QUERIES)

VSCODE = REPO / "editors" / "vscode"
TM_GRAMMAR = VSCODE / "syntaxes" / "sgl.tmLanguage.json"

PROGRAMS = sorted(
    p
    for sub in ("tests/programs", "tests/runtime_errors", "tests/snapshots", "examples")
    for p in (REPO / sub).rglob("*.sgl")
)
SHARED_EXAMPLES = sorted((SHARED / "examples").glob("*.sgl")) if SHARED.is_dir() else []
ERRORS = sorted((REPO / "tests" / "errors").glob("*.sgl"))
# The first line of a tests/errors golden that the compiler's lexer reports.
LEXICAL = re.compile(r"^[^:\n]+:(\d+):(\d+): error: (invalid character|invalid escape|"
                     r"invalid number|unterminated string|unterminated comment)")


def _lexer() -> SGLLexer:
    return SGLLexer(stripnl=False)  # keep offsets: no newline stripped


def tokens(src: str) -> list[tuple[_TokenType, str]]:
    return [(t, v) for t, v in lex(src, _lexer()) if t is not Whitespace]


def errors(src: str) -> list[tuple[int, str]]:
    """(offset, text) of every Error token."""
    out, pos = [], 0
    for t, v in lex(src, _lexer()):
        if t in Error:
            out.append((pos, v))
        pos += len(v)
    return out


def rel(p: Path) -> str:
    return str(p.relative_to(REPO)) if p.is_relative_to(REPO) else f"shared/{p.name}"


# ------------------------------------------------------------ the Pygments lexer


def test_programs_found() -> None:
    assert len(PROGRAMS) > 50
    assert REPO / "examples" / "reduce.sgl" in PROGRAMS


@pytest.mark.parametrize("path", PROGRAMS, ids=rel)
def test_program_has_no_error_token(path: Path) -> None:
    src = path.read_text(encoding="utf-8")
    assert errors(src) == []
    # the tokens cover the text exactly (Pygments may add a final newline)
    assert "".join(v for _, v in lex(src, _lexer())).removesuffix("\n") == src.removesuffix("\n")


@pytest.mark.parametrize("name", [p.name for p in SHARED_EXAMPLES] or ["(none)"])
def test_shared_example_has_no_error_token(name: str) -> None:
    shared = require_shared()
    assert errors((shared / "examples" / name).read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("path", ERRORS, ids=lambda p: p.name)
def test_error_tokens_are_the_compilers_lexical_errors(path: Path) -> None:
    """An error token exactly where the compiler reports a lexical error, and
    none in a program whose error is not lexical."""
    src = path.read_text(encoding="utf-8")
    golden = path.with_suffix(".err").read_text(encoding="utf-8")
    found = errors(src)
    m = LEXICAL.match(golden)
    if m is None:
        assert found == [], golden
        return
    line, col = int(m.group(1)), int(m.group(2))
    offset = sum(len(s) + 1 for s in src.split("\n")[: line - 1]) + col - 1
    assert found, f"no error token for: {golden}"
    assert found[0][0] == offset, (found, golden)


def test_keyword_or_name() -> None:
    assert tokens("var x: int = 1;") == [
        (Keyword.Declaration, "var"), (Name, "x"), (Punctuation, ":"), (Keyword.Type, "int"),
        (Operator, "="), (Number.Integer, "1"), (Punctuation, ";")]
    # a keyword inside a longer name is a name
    assert tokens("iffy forall var_x pardo2 in_") == [
        (Name, "iffy"), (Name, "forall"), (Name, "var_x"), (Name, "pardo2"), (Name, "in_")]
    assert tokens("scatter v -> p; pardo { }")[0] == (Keyword, "scatter")
    assert tokens("true false") == [(Keyword.Constant, "true"), (Keyword.Constant, "false")]


def test_every_keyword_is_a_keyword() -> None:
    for kw in sorted(KEYWORDS):
        [(t, v)] = tokens(kw)
        assert t in Keyword and v == kw, (kw, t)


def test_fixed_names() -> None:
    assert tokens("func main() { print(len(v), nchildren); }") == [
        (Keyword.Declaration, "func"), (Name.Function, "main"), (Punctuation, "("),
        (Punctuation, ")"), (Punctuation, "{"), (Name.Builtin, "print"), (Punctuation, "("),
        (Name.Builtin, "len"), (Punctuation, "("), (Name, "v"), (Punctuation, ")"),
        (Punctuation, ","), (Name.Builtin.Pseudo, "nchildren"), (Punctuation, ")"),
        (Punctuation, ";"), (Punctuation, "}")]
    for q in QUERIES:
        assert tokens(q) == [(Name.Builtin.Pseudo, q)]
    for b in BUILTINS - KEYWORDS:
        assert tokens(b) == [(Name.Builtin, b)]
    # int and float: types, and builtins where called
    assert tokens("int(x) float (i) int") == [
        (Name.Builtin, "int"), (Punctuation, "("), (Name, "x"), (Punctuation, ")"),
        (Name.Builtin, "float"), (Punctuation, "("), (Name, "i"), (Punctuation, ")"),
        (Keyword.Type, "int")]
    # a user function called
    assert tokens("hsum(v)")[0] == (Name.Function, "hsum")


@pytest.mark.parametrize("text", ["1.0", ".5", "2.5e-3", "1e9", "1_000.000_1", "3E+2"])
def test_float(text: str) -> None:
    assert tokens(text) == [(Number.Float, text)]


@pytest.mark.parametrize("text", ["0", "42", "1_000_000"])
def test_int(text: str) -> None:
    assert tokens(text) == [(Number.Integer, text)]


def test_range_is_not_a_float() -> None:
    assert tokens("0..n") == [(Number.Integer, "0"), (Operator, ".."), (Name, "n")]
    assert tokens("a .. 10") == [(Name, "a"), (Operator, ".."), (Number.Integer, "10")]


@pytest.mark.parametrize("text", ["1.2.3", "10abc", "1__0", "1_", "1e"])
def test_malformed_number(text: str) -> None:
    assert tokens(text) == [(Error, text)]


def test_comments() -> None:
    assert tokens("x // a /* b\n/* c\n // d */ y") == [
        (Name, "x"), (Comment.Single, "// a /* b"), (Comment.Multiline, "/* c\n // d */"),
        (Name, "y")]
    # not nested: the first */ ends the comment
    assert tokens("/* a /* b */ c */")[:2] == [(Comment.Multiline, "/* a /* b */"), (Name, "c")]
    assert tokens("x /= 2; // done")[1] == (Operator, "/=")
    assert errors("/* unterminated\nx") == [(0, "/*")]


def test_strings() -> None:
    assert tokens(r'print("a\tb\n", "q\"\\")') == [
        (Name.Builtin, "print"), (Punctuation, "("), (String.Double, '"'), (String.Double, "a"),
        (String.Escape, r"\t"), (String.Double, "b"), (String.Escape, r"\n"),
        (String.Double, '"'), (Punctuation, ","), (String.Double, '"'), (String.Double, "q"),
        (String.Escape, r"\""), (String.Escape, r"\\"), (String.Double, '"'),
        (Punctuation, ")")]
    assert errors(r'"a\qb"') == [(2, r"\q")]
    assert errors('"open\n"') == [(0, '"'), (6, '"')]


def test_operators() -> None:
    ops = (".. -> += -= *= /= %= &= |= ^= <<= >>= == != <= >= && || ! + - * / % < > = "
           "& | ^ ~ << >>")
    assert tokens(ops) == [(Operator, o) for o in ops.split()]
    assert errors("a & b | c @ d 'e'") == [(10, "@"), (14, "'"), (16, "'")]


def test_bitwise_operators_lex_as_the_compiler_does() -> None:
    # the longest operator first, as grammar/sgl.lark's lexer reads them
    assert tokens("a<<=b<<c<=d>>e>>=f") == [
        (Name, "a"), (Operator, "<<="), (Name, "b"), (Operator, "<<"), (Name, "c"),
        (Operator, "<="), (Name, "d"), (Operator, ">>"), (Name, "e"), (Operator, ">>="),
        (Name, "f")]
    assert tokens("x&&y&z|~w||v^=1") == [
        (Name, "x"), (Operator, "&&"), (Name, "y"), (Operator, "&"), (Name, "z"),
        (Operator, "|"), (Operator, "~"), (Name, "w"), (Operator, "||"), (Name, "v"),
        (Operator, "^="), (Number.Integer, "1")]


def test_elision_of_the_docs() -> None:
    assert tokens("{ ... }")[1] == (Punctuation, "...")
    assert tokens("0...5") == [(Number.Integer, "0"), (Operator, ".."), (Number.Float, ".5")]


# ------------------------------------------------------------ the plugin


def test_entry_point_finds_the_lexer() -> None:
    from pygments.lexers import get_lexer_by_name, get_lexer_for_filename

    assert isinstance(get_lexer_by_name("sgl"), SGLLexer)
    assert isinstance(get_lexer_for_filename("prog.sgl"), SGLLexer)


def test_pygmentize() -> None:
    exe = Path(sys.executable).parent / "pygmentize"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "pygments"]
    out = subprocess.run(cmd + ["-l", "sgl", "-f", "html", str(REPO / "examples" / "reduce.sgl")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert '<span class="kd">func</span>' in out.stdout
    assert '<span class="nb">sum</span>' in out.stdout
    assert 'class="err"' not in out.stdout


def test_importing_sglc_does_not_import_pygments() -> None:
    code = "import sys, sglc, sglc.cli; print('pygments' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, cwd=REPO)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def sgl_blocks(path: Path) -> Iterator[str]:
    for m in re.finditer(r"^```sgl\n(.*?)^```$", path.read_text(encoding="utf-8"), re.M | re.S):
        yield m.group(1)


def test_docs_use_the_lexer() -> None:
    blocks = [(d, b) for d in DOCS for b in sgl_blocks(d)]
    assert len(blocks) >= 3
    for d, b in blocks:
        assert errors(b) == [], (d.name, b)


# ------------------------------------------------------------ the TextMate grammar


def tm_grammar() -> dict[str, Any]:
    return json.loads(TM_GRAMMAR.read_text(encoding="utf-8"))


def tm_words(patterns: list[dict[str, Any]]) -> list[str]:
    """The words of patterns of the form \\b(?:a|b|c)(?![A-Za-z0-9_])."""
    out = []
    for p in patterns:
        m = re.fullmatch(r"\\b\(\?:([A-Za-z_|]+)\)\(\?!\[A-Za-z0-9_\]\)", p["match"])
        assert m, p
        out += m.group(1).split("|")
    return out


def test_extension_manifest() -> None:
    pkg = json.loads((VSCODE / "package.json").read_text(encoding="utf-8"))
    [lang] = pkg["contributes"]["languages"]
    assert lang["id"] == "sgl" and lang["extensions"] == [".sgl"]
    [gram] = pkg["contributes"]["grammars"]
    assert gram["language"] == "sgl" and gram["scopeName"] == tm_grammar()["scopeName"]
    assert (VSCODE / gram["path"]).resolve() == TM_GRAMMAR.resolve()
    conf = json.loads((VSCODE / lang["configuration"]).read_text(encoding="utf-8"))
    assert conf["comments"] == {"lineComment": "//", "blockComment": ["/*", "*/"]}
    assert ["{", "}"] in conf["brackets"] and ["(", ")"] in conf["brackets"]
    assert {"open": "{", "close": "}"} in conf["autoClosingPairs"]
    assert (VSCODE / "README.md").is_file()


def test_tm_keywords_are_the_compilers() -> None:
    words = tm_words(tm_grammar()["repository"]["keywords"]["patterns"])
    assert len(words) == len(set(words))
    assert set(words) == KEYWORDS


def test_tm_fixed_names_include_the_checkers() -> None:
    repo = tm_grammar()["repository"]
    assert set(tm_words(repo["queries"]["patterns"])) == set(QUERIES)
    builtins = set(tm_words(repo["builtins"]["patterns"]))
    assert BUILTINS <= builtins
    # a builtin the grammar knows before the checker does is one of brief §8
    brief = require_shared().joinpath("LANGUAGE.md").read_text(encoding="utf-8")
    section8 = brief[brief.index("## 8. Builtins"):brief.index("## 9.")]
    assert {b for b in builtins - BUILTINS if f"`{b}(" not in section8} == set()


# A small TextMate tokenizer (the rules vscode-textmate follows, for the
# subset this grammar uses: match with name and captures, begin/end with
# patterns, include of the repository): at each point the pattern whose match
# starts first wins, the first listed on a tie, the end pattern before the
# inner ones.  Python's re and Oniguruma agree on these regexes.


@dataclass
class _Rule:
    name: Optional[str]
    match: Optional[re.Pattern[str]] = None
    captures: dict[int, str] = field(default_factory=dict)
    begin: Optional[re.Pattern[str]] = None
    end: Optional[re.Pattern[str]] = None
    patterns: list[_Rule] = field(default_factory=list)


def _rules(grammar: dict[str, Any], pats: list[dict[str, Any]]) -> list[_Rule]:
    out: list[_Rule] = []
    for p in pats:
        if "include" in p:
            out += _rules(grammar, grammar["repository"][p["include"].removeprefix("#")]["patterns"])
        elif "match" in p:
            caps = {int(k): v["name"] for k, v in p.get("captures", {}).items()}
            out.append(_Rule(p.get("name"), match=re.compile(p["match"]), captures=caps))
        else:
            out.append(_Rule(p.get("name"), begin=re.compile(p["begin"]), end=re.compile(p["end"]),
                             patterns=_rules(grammar, p.get("patterns", []))))
    return out


def tm_scopes(grammar: dict[str, Any], text: str) -> list[Optional[str]]:
    """The innermost scope of every character of text (None: no scope)."""
    root = _rules(grammar, grammar["patterns"])
    scopes: list[Optional[str]] = [None] * len(text)
    stack: list[_Rule] = []
    base = 0
    for line in text.splitlines(keepends=True):
        pos = 0
        while pos < len(line):
            top = stack[-1] if stack else None
            cands: list[tuple[int, int, re.Match[str], Optional[_Rule]]] = []
            if top is not None:
                m = top.end.search(line, pos)  # type: ignore[union-attr]
                if m:
                    cands.append((m.start(), 0, m, None))
            for i, r in enumerate(top.patterns if top else root, start=1):
                m = (r.match or r.begin).search(line, pos)  # type: ignore[union-attr]
                if m:
                    cands.append((m.start(), i, m, r))
            inherited = top.name if top else None
            if not cands:
                for k in range(pos, len(line)):
                    scopes[base + k] = inherited
                break
            _, _, m, r = min(cands, key=lambda c: (c[0], c[1]))
            for k in range(pos, m.start()):
                scopes[base + k] = inherited
            if r is None:  # the end of the begin/end rule on top
                for k in range(m.start(), m.end()):
                    scopes[base + k] = inherited
                stack.pop()
            elif r.begin is not None:
                for k in range(m.start(), m.end()):
                    scopes[base + k] = r.name
                stack.append(r)
            else:
                for k in range(m.start(), m.end()):
                    scopes[base + k] = r.name or inherited
                for g, name in r.captures.items():
                    for k in range(m.start(g), m.end(g)):
                        scopes[base + k] = name
            pos = m.end() if m.end() > pos else pos + 1
        base += len(line)
    return scopes


def _tm_class(scope: Optional[str]) -> Optional[str]:
    if scope is None:
        return None
    for prefix, cls in [("comment.", "comment"), ("string.", "string"),
                        ("constant.character.escape.", "string"),
                        ("constant.numeric.float.", "float"), ("constant.numeric.integer.", "int"),
                        ("invalid.", "error"), ("keyword.operator.", "operator"),
                        ("keyword.", "keyword"), ("storage.", "keyword"),
                        ("constant.language.", "keyword"), ("support.function.", "builtin"),
                        ("variable.language.", "query"), ("entity.name.function.", "function"),
                        ("variable.other.", "name"), ("punctuation.", "punctuation")]:
        if scope.startswith(prefix):
            return cls
    raise AssertionError(f"unexpected scope {scope}")


def _pygments_class(t: _TokenType) -> str:
    for tt, cls in [(Comment, "comment"), (String, "string"), (Number.Float, "float"),
                    (Number.Integer, "int"), (Error, "error"), (Keyword, "keyword"),
                    (Name.Builtin.Pseudo, "query"), (Name.Builtin, "builtin"),
                    (Name.Function, "function"), (Name, "name"), (Operator, "operator"),
                    (Punctuation, "punctuation")]:
        if t in tt:
            return cls
    raise AssertionError(f"unexpected token {t}")


def pygments_classes(text: str) -> list[Optional[str]]:
    out: list[Optional[str]] = []
    for t, v in lex(text, _lexer()):
        out += [None if t in Whitespace else _pygments_class(t)] * len(v)
    return out[: len(text)]


def _compare(text: str) -> None:
    tm = [_tm_class(s) for s in tm_scopes(tm_grammar(), text)]
    py = pygments_classes(text)
    for i, ch in enumerate(text):
        if ch in " \t\r\n\f":
            continue
        if tm[i] != py[i] or tm[i] in (None, "error"):
            ln = text.count("\n", 0, i) + 1
            line = text.splitlines()[ln - 1]
            raise AssertionError(f"line {ln}: {line!r}: at {ch!r}: TextMate {tm[i]}, "
                                 f"Pygments {py[i]}")


def test_tm_tokenizer_on_units() -> None:
    g = tm_grammar()
    text = 'func f() { var x = int(2.5e-3) + 1_0; } // c\n/* a\n b */ "s\\n" @'
    cls = [_tm_class(s) for s in tm_scopes(g, text)]
    assert cls[text.index("func")] == "keyword" and cls[text.index("f(")] == "function"
    assert cls[text.index("int")] == "builtin" and cls[text.index("2.5")] == "float"
    assert cls[text.index("1_0")] == "int" and cls[text.index("// c")] == "comment"
    assert cls[text.index(" b */")] == "comment" and cls[text.index("\\n")] == "string"
    assert cls[text.index("@")] == "error"


@pytest.mark.parametrize("path", PROGRAMS + SHARED_EXAMPLES, ids=rel)
def test_tm_agrees_with_pygments(path: Path) -> None:
    _compare(path.read_text(encoding="utf-8"))


def test_tm_agrees_with_pygments_on_the_docs() -> None:
    for d in DOCS:
        for b in sgl_blocks(d):
            _compare(b)


def test_tm_agrees_with_pygments_on_bitwise_operators() -> None:
    _compare("func f(x: int) -> int { var m = ~x & 255 | x << 2 ^ x >> 1; m <<= 1; m >>= 2;\n"
             "    m &= 7; m |= 8; m ^= 1; return m && x || !x < m; }\n")
