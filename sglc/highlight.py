"""A Pygments lexer for SGL (brief §2), registered as the Pygments plugin
``sgl`` (pyproject.toml, entry point group ``pygments.lexers``):

    pygmentize -l sgl prog.sgl
    pygmentize -f html -O full -o prog.html prog.sgl

Pygments is optional (the extra ``highlight``); only this module needs it,
and nothing else in sglc imports it.

The names come from the compiler, so the lexer cannot drift from it: the
keywords are ``sglc.parse.KEYWORDS``, the builtins ``sglc.check.BUILTINS``
and the node queries ``sglc.check.QUERIES``.  Anything the compiler's lexer
rejects (a stray character, a malformed number such as ``1.2.3`` or
``10abc``, an invalid escape, an unterminated string or comment) is an
``Error`` token.  One extension for the docs: ``...`` (not followed by a
digit), the elision of their snippets (``func f() { ... }``), is
punctuation.
"""

from __future__ import annotations

from typing import ClassVar

from pygments.lexer import RegexLexer, bygroups, words
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
)

from .check import BUILTINS, QUERIES
from .parse import KEYWORDS

__all__ = ["SGLLexer", "KEYWORD_NAMES", "BUILTIN_NAMES", "QUERY_NAMES"]

#: The keywords of brief §2, as the parser knows them.
KEYWORD_NAMES: frozenset[str] = frozenset(KEYWORDS)
#: The builtin functions of brief §8, as the checker knows them.
BUILTIN_NAMES: frozenset[str] = frozenset(BUILTINS)
#: The node queries of brief §7 (master, worker, nchildren, ...).
QUERY_NAMES: frozenset[str] = frozenset(QUERIES)

# How the keywords are shown.  The set of keywords is KEYWORD_NAMES; these only
# pick a token type for some of them, and any other keyword is a Keyword.
_TYPES = KEYWORD_NAMES & {"int", "float", "bool", "string"}
_CONSTANTS = KEYWORD_NAMES & {"true", "false"}
_DECLARATIONS = KEYWORD_NAMES & {"func", "const", "var", "struct"}
_OTHER_KEYWORDS = KEYWORD_NAMES - _TYPES - _CONSTANTS - _DECLARATIONS
# Keywords that are also builtins: `int(x)`, `float(i)`.
_KEYWORD_CALLS = KEYWORD_NAMES & BUILTIN_NAMES

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_END = r"(?![A-Za-z0-9_])"  # a whole word (the brief's identifiers are ASCII)
_DIGITS = r"[0-9]+(?:_[0-9]+)*"
_EXP = rf"[eE][+-]?{_DIGITS}"
# A number is whole when neither a word character nor `.digit` follows it.
_NUM_END = r"(?![A-Za-z0-9_]|\.[0-9])"
_FLOAT = rf"(?:{_DIGITS}\.{_DIGITS}(?:{_EXP})?|\.{_DIGITS}(?:{_EXP})?|{_DIGITS}{_EXP})"
_BLOCK_COMMENT = r"/\*[^*]*\*+(?:[^/*][^*]*\*+)*/"


def _words(names: frozenset[str]) -> words:
    return words(sorted(names, key=lambda w: (-len(w), w)), suffix=_END)


class SGLLexer(RegexLexer):
    """SGL, the Scatter-Gather Language."""

    name = "SGL"
    aliases: ClassVar[list[str]] = ["sgl"]
    filenames: ClassVar[list[str]] = ["*.sgl"]
    mimetypes: ClassVar[list[str]] = ["text/x-sgl"]

    tokens: ClassVar[dict] = {
        "root": [
            (r"[ \t\r\n\f]+", Whitespace),
            (r"//[^\n]*", Comment.Single),
            (_BLOCK_COMMENT, Comment.Multiline),
            (r"/\*", Error),  # unterminated
            (r'"(?=(?:\\.|[^"\\\n])*")', String.Double, "string"),
            (r'"', Error),  # unterminated
            (rf"{_FLOAT}{_NUM_END}", Number.Float),
            (rf"{_DIGITS}{_NUM_END}", Number.Integer),
            (r"\.?[0-9](?:[A-Za-z0-9_]|\.(?!\.)|(?<=[eE])[+-])*", Error),  # 1.2.3, 10abc
            (rf"(func)([ \t]+)({_IDENT})",
             bygroups(Keyword.Declaration, Whitespace, Name.Function)),
            (words(sorted(_KEYWORD_CALLS), suffix=r"(?=[ \t]*\()"), Name.Builtin),
            (_words(_TYPES), Keyword.Type),
            (_words(_CONSTANTS), Keyword.Constant),
            (_words(_DECLARATIONS), Keyword.Declaration),
            (_words(_OTHER_KEYWORDS), Keyword),
            (_words(BUILTIN_NAMES), Name.Builtin),
            (_words(QUERY_NAMES), Name.Builtin.Pseudo),
            (rf"{_IDENT}(?=[ \t]*\()", Name.Function),
            (_IDENT, Name),
            (r"\.\.\.(?![0-9])", Punctuation),  # the docs' elision
            (r"<<=|>>=|\.\.|->|[+\-*/%&|^]=|<<|>>|==|!=|<=|>=|&&|\|\|", Operator),
            (r"[+\-*/%<>=!&|^~]", Operator),
            (r"[()\[\]{},;:]", Punctuation),
            (rf"\.(?={_IDENT})", Punctuation),  # field access p.x
        ],
        "string": [
            (r'\\[nt"\\]', String.Escape),
            (r"\\.", Error),  # not one of the brief's escapes
            (r'[^"\\\n]+', String.Double),
            (r'"', String.Double, "#pop"),
        ],
    }
