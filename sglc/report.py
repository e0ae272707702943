"""The run report: one self-contained HTML page of a run (docs/cost-model.md).

The page is runtime_c/sgl_report.html, the one home of its look: a static
page whose script reads a JSON object from its ``sgl-data`` slot,
``{"stats": ..., "trace": ..., "predict": ...}``, and draws the machine
tree, the levels and the timeline.  ``--sgl-report=FILE.html`` (the
runtime) and ``sglc report`` (here) both fill that slot; the runtime embeds
the page as runtime_c/sgl_report_html.h, which ``python -m sglc.report
--header`` generates (tests/test_report.py checks that it is current).
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

from .paths import runtime_dir

SLOT = "@SGL_DATA@"
TEMPLATE = "sgl_report.html"
HEADER = "sgl_report_html.h"
OPS = ("scatter", "bcast", "gather")


class ReportError(Exception):
    """An input file that cannot be read or is not what it should be."""


def template_parts() -> tuple[str, str]:
    """The page before and after the data slot."""
    text = (runtime_dir() / TEMPLATE).read_text(encoding="utf-8")
    head, sep, tail = text.partition(SLOT)
    if not sep:
        raise AssertionError(f"{TEMPLATE} has no {SLOT} slot")
    return head, tail


def _c_string(line: str) -> str:
    out = []
    for ch in line:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) > 0x7E:
            out.extend(f"\\{b:03o}" for b in ch.encode("utf-8"))
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def header_text() -> str:
    """runtime_c/sgl_report_html.h: the page as two NULL-terminated arrays of
    lines (each line its own literal: no compiler limit on literal length)."""
    head, tail = template_parts()
    out = ["/* Generated from runtime_c/sgl_report.html by `python -m sglc.report --header`:",
           " * do not edit (tests/test_report.py checks it is current). */",
           "#ifndef SGL_REPORT_HTML_H", "#define SGL_REPORT_HTML_H", ""]
    for name, part in (("sgl_report_head", head), ("sgl_report_tail", tail)):
        out.append(f"static const char *const {name}[] = {{")
        out.extend(f"    {_c_string(line)}," for line in part.splitlines(keepends=True))
        out.append("    0,")
        out.append("};")
        out.append("")
    out.append("#endif")
    return "\n".join(out) + "\n"


def render(data: dict[str, Any]) -> str:
    """The page with data in its slot."""
    head, tail = template_parts()
    text = json.dumps(data, allow_nan=False).replace("</", "<\\/")
    return head + text + tail


def _load(path: str, what: str) -> Any:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise ReportError(f"cannot read {what} {path}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise ReportError(f"{what} {path} is not UTF-8 text") from None
    try:
        return json.loads(text)
    except ValueError as e:
        raise ReportError(f"{what} {path} is not valid JSON: {e}") from None


def predict(stats: dict[str, Any], machine: dict[str, Any]) -> list[dict[str, Any]]:
    """Predicted against measured time per level: the BSP cost of
    docs/cost-model.md summed over the level's supersteps,
    compute_max + supersteps*l + sum over scatter, bcast, gather of g*h_sum
    (the runtime's --sgl-predict, per level)."""
    params: dict[int, dict[str, Any]] = {}
    for lv in machine.get("levels") or []:
        level = lv.get("level") if isinstance(lv, dict) else None
        if isinstance(level, float) and level.is_integer():
            level = int(level)
        if isinstance(level, int) and not isinstance(level, bool):
            params[level] = lv
    rows = []
    for lv in stats.get("levels") or []:
        p = params.get(lv["level"], {})

        def num(d: dict[str, Any], k: str) -> float:
            v = d.get(k, 0)
            return float(v) if isinstance(v, (int, float)) else 0.0

        pred = num(lv["time"], "compute_max") + lv["supersteps"] * num(p, "l")
        pred += sum(num(p, "g_" + op) * num(lv["h_sum"], op) for op in OPS)
        rows.append({"level": lv["level"], "predicted": pred, "measured": lv["time"]["total"],
                     "known": bool(p)})
    return rows


def _check_machine(machine: dict[str, Any], path: str) -> None:
    """The rules the runtime's --sgl-predict reads a machine file by: a
    level is a whole number >= 0, each of l, g_scatter, g_bcast, g_gather
    absent (0) or a finite number >= 0 (an infinite one would make the
    page's JSON invalid, a negative time is no time)."""
    for lv in machine["levels"]:
        if not isinstance(lv, dict) or "level" not in lv:
            continue
        level = lv["level"]
        if isinstance(level, float) and level.is_integer():
            level = int(level)
        if isinstance(level, bool) or not isinstance(level, int) or level < 0:
            raise ReportError(f"machine file {path}: a \"level\" that is not a whole number >= 0")
        for key in ("l", *("g_" + op for op in OPS)):
            v = lv.get(key, 0)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) \
                    or v < 0:
                raise ReportError(f"machine file {path}: level {level}: \"{key}\" is not a "
                                  "finite number >= 0")


def build(stats_path: str, trace_path: str | None = None,
          machine_path: str | None = None) -> str:
    """The page of a run from the files it wrote (--sgl-stats=FILE.json,
    --sgl-trace=FILE.json) and, optionally, a machine file of `sglc probe`."""
    stats = _load(stats_path, "statistics")
    if not isinstance(stats, dict) or "sglc_stats" not in stats:
        raise ReportError(f"{stats_path} is not a statistics file of --sgl-stats=FILE.json")
    trace = None
    if trace_path is not None:
        trace = _load(trace_path, "trace")
        if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
            raise ReportError(f"{trace_path} is not a trace of --sgl-trace=FILE.json")
    rows = None
    if machine_path is not None:
        machine = _load(machine_path, "machine file")
        if not isinstance(machine, dict) or not isinstance(machine.get("levels"), list):
            raise ReportError(f"{machine_path} is not a machine file of sglc probe")
        _check_machine(machine, machine_path)
        try:
            rows = predict(stats, machine)
        except (KeyError, TypeError) as e:
            raise ReportError(f"{stats_path}: a level lacks {e}") from None
    return render({"stats": stats, "trace": trace, "predict": rows})


def main(argv: list[str]) -> int:
    """`python -m sglc.report --header` rewrites runtime_c/sgl_report_html.h;
    `--check` exits 1 if it is not current."""
    target = runtime_dir() / HEADER
    if argv == ["--header"]:
        target.write_text(header_text(), encoding="utf-8")
        return 0
    if argv == ["--check"]:
        current = target.exists() and target.read_text(encoding="utf-8") == header_text()
        if not current:
            print(f"{target} is not current: python -m sglc.report --header", file=sys.stderr)
        return 0 if current else 1
    print("usage: python -m sglc.report --header | --check", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
