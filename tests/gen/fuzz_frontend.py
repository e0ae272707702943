"""Fuzz the sglc front end with mutated example programs, in process.

    python tests/gen/fuzz_frontend.py [--count 10000] [--seed 0] [--backend]

Each input is an example program (the brief's examples, examples/ and
tests/programs/) with 1 to 4 mutations: delete, duplicate, swap or replace
tokens, insert random characters, delete or duplicate lines, truncate.  It
is fed to the front end exactly as `sglc check` does (sglc.frontend
load_source, then the diagnostics renderer on errors).  The only exception
allowed is the compiler's CompileError, whose rendering must work too; any
other exception (what `sglc check` turns into exit status 3), or a run
longer than 10 s, is a failure, saved to tests/gen/failures/fuzz-N.sgl with
its traceback.  --backend also lowers and emits C for accepted inputs.
Every 200th input also goes through `sglc check` (click's CliRunner), whose
exit status must be 0 or 1.  Prints `N passed, M failed`; exit 1 on failure.
"""

from __future__ import annotations

import argparse
import random
import re
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
FAILURES = HERE / "failures"

_TOKEN = re.compile(r"""\s+|//[^\n]*|/\*.*?\*/|"(?:[^"\\\n]|\\.)*"|[A-Za-z_][A-Za-z0-9_]*|"""
                    r"""\d[\d_]*(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|"""
                    r"""->|\.\.|&&|\|\||[<>=!+\-*/%]=|.""", re.S)
_EXTRA = ["{", "}", "(", ")", "[", "]", ";", ",", "->", "..", "=", "==", "+=", "var", "func",
          "pardo", "scatter", "gather", "bcast", "if", "else", "while", "for", "in", "return",
          "break", "continue", "master", "worker", "nchildren", "int", "float", "bool", "[int]",
          "true", "0", "1.5", "1e999", "9223372036854775808", '"s"', "x", "main", "const",
          ":", "!", "&&", "-", "/*", "*/", "//", "\"", "\\", "\n", "\t", "é", "\x00", "\u2028"]
_CHARS = "{}()[];,.:=<>!+-*/%&|\"'\\_ \n\t0123456789abcxyzé\x00\x7f\u00a0\u2028\U0001F600"


def corpus() -> list[tuple[str, str]]:
    dirs = [REPO.parent / "shared" / "sgl" / "examples", REPO / "examples", REPO / "tests" / "programs"]
    out: list[tuple[str, str]] = []
    for d in dirs:
        for p in sorted(d.glob("*.sgl")) if d.is_dir() else []:
            out.append((str(p), p.read_text(encoding="utf-8", errors="replace")))
    return out


def mutate(text: str, r: random.Random) -> str:
    if r.random() < 0.02:  # deep nesting: ((((x)))) or { { { } } } a few thousand deep
        toks = _TOKEN.findall(text) or [""]
        i = r.randrange(len(toks))
        d = r.choice([50, 500, 3000])
        opener, closer = r.choice([("(", ")"), ("{ ", " }"), ("[", "]"), ("if true { ", "}"),
                                   ("-", ""), ("!", "")])
        toks.insert(i, opener * d + toks[i] + closer * r.choice([d, d - 1]))
        del toks[i + 1]
        return "".join(toks)
    for _ in range(r.randint(1, 4)):
        toks = _TOKEN.findall(text)
        if not toks:
            toks = [""]
        i = r.randrange(len(toks))
        k = r.randrange(9)
        if k == 0:
            del toks[i]
        elif k == 1:
            toks.insert(i, toks[i])
        elif k == 2 and len(toks) > 1:
            j = r.randrange(len(toks))
            toks[i], toks[j] = toks[j], toks[i]
        elif k == 3:
            toks[i] = r.choice(_EXTRA + toks)
        elif k == 4:
            toks.insert(i, "".join(r.choice(_CHARS) for _ in range(r.randint(1, 3))))
        elif k == 5:
            text = "".join(toks)
            cut = r.randrange(len(text) + 1)
            return text[:cut]
        else:
            lines = "".join(toks).split("\n")
            j = r.randrange(len(lines))
            if k == 6:
                del lines[j]
            elif k == 7:
                lines.insert(j, lines[j])
            else:
                lines.insert(j, lines[r.randrange(len(lines))])
            toks = ["\n".join(lines)]
        text = "".join(toks)
    return text


class _Timeout(Exception):
    pass


def _alarm(_sig: int, _frame: FrameType | None) -> None:
    raise _Timeout


def check_one(text: str, backend: bool) -> str | None:
    """None if the front end behaved, else a description of the failure."""
    from sglc import frontend
    from sglc.diagnostics import CompileError

    def stages() -> str | None:
        try:
            prog = frontend.load_source(text, "fuzz.sgl")
        except CompileError as err:
            rendered = frontend.format_errors(err, text, "fuzz.sgl", False)
            if "error" not in rendered:
                return f"CompileError rendered without an error line:\n{rendered}"
            return None
        if backend:
            from sglc import pipeline

            pipeline.emit(pipeline.to_ir(prog, "fuzz.sgl", check_ir=True), checked=True)
        return None

    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(10)
    try:
        from sglc.deepstack import call_deep

        return call_deep(stages)
    except _Timeout:
        return "timeout: the front end ran for more than 10 s"
    except Exception:  # noqa: BLE001 - any other exception is the bug we look for
        return traceback.format_exc()
    finally:
        signal.alarm(0)


def check_cli(text: str) -> str | None:
    """Exit status of `sglc check` on text (CliRunner): 0 or 1 expected."""
    from click.testing import CliRunner

    from sglc.cli import cli

    with tempfile.TemporaryDirectory(prefix="sgl-fuzz-") as tmp:
        p = Path(tmp) / "fuzz.sgl"
        p.write_text(text, encoding="utf-8", errors="surrogatepass")
        res = CliRunner().invoke(cli, ["check", str(p)])
    if res.exit_code in (0, 1):
        return None
    return f"sglc check exited {res.exit_code}:\n{res.output}"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="fuzz the sglc front end")
    ap.add_argument("--count", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--backend", action="store_true", help="also lower and emit accepted inputs")
    ap.add_argument("--cli-every", type=int, default=200,
                    help="also run `sglc check` (CliRunner) on every K-th input")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(REPO))
    base = corpus()
    if not base:
        print("no example programs found", file=sys.stderr)
        return 2
    r = random.Random(args.seed)
    passed = failed = 0
    t0 = time.monotonic()
    for n in range(args.count):
        origin, src = r.choice(base)
        text = mutate(src, r)
        problem = check_one(text, args.backend)
        if problem is None and args.cli_every and n % args.cli_every == 0:
            problem = check_cli(text)
        if problem is None:
            passed += 1
            continue
        failed += 1
        FAILURES.mkdir(exist_ok=True)
        name = f"fuzz-{args.seed}-{n}"
        (FAILURES / f"{name}.sgl").write_text(text, encoding="utf-8", errors="surrogatepass")
        (FAILURES / f"{name}.txt").write_text(f"mutated from {origin}\n\n{problem}\n")
        last = problem.strip().splitlines()[-1] if problem.strip() else problem
        print(f"{name}: {last}", flush=True)
    print(f"{passed} passed, {failed} failed ({time.monotonic() - t0:.1f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
