"""--diagnostics-format=json|sarif (sglc.diagnostics' renderers, the CLI):
golden JSON lines for a few error programs, SARIF 2.1.0 logs checked
structurally (and against a hand-written schema of the subset sglc
writes, when the jsonschema package is installed)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import REPO, run_checked, sglc_command

from sglc import __version__ as SGLC_VERSION
from sglc.ast import Span
from sglc.diagnostics import Diagnostic, FixIt, diagnostic_json, render_json, sarif_log

GOLDEN = REPO / "tests" / "diagnostics_format"
CASES = ["syn_missing_semicolon", "type_multiple", "break_out_of_pardo"]
JSON_KEYS = {"severity", "path", "line", "col", "end_line", "end_col", "message", "notes",
             "flag", "fixit"}


def sglc(*args: str, cwd: Path = REPO, stdin: str | None = None) -> tuple[int, str, str]:
    return run_checked([*sglc_command(), *args], cwd=cwd, env=dict(os.environ), timeout=120,
                       stdin=stdin)


# ---------------------------------------------------------------- json


@pytest.mark.parametrize("name", CASES)
def test_json_golden(name: str, update_golden: bool) -> None:
    rc, out, err = sglc("check", f"tests/errors/{name}.sgl", "--diagnostics-format=json")
    assert rc == 1 and out == ""
    golden = GOLDEN / f"{name}.jsonl"
    if update_golden:
        golden.write_text(err)
    assert err == golden.read_text()
    for line in err.splitlines():
        obj = json.loads(line)
        assert set(obj) == JSON_KEYS
        assert obj["severity"] == "error" and obj["fixit"] is None and obj["flag"] is None
        assert obj["path"] == f"tests/errors/{name}.sgl"
        assert all(isinstance(obj[k], int) and obj[k] >= 1
                   for k in ("line", "col", "end_line", "end_col"))


def test_json_is_the_text_diagnostics() -> None:
    """The same diagnostics as the text format, in the same order."""
    rc, _, text = sglc("check", "tests/errors/type_multiple.sgl")
    heads = [ln for ln in text.splitlines() if ": error: " in ln]
    notes = [ln[len("note: "):] for ln in text.splitlines() if ln.startswith("note: ")]
    rc2, _, js = sglc("check", "tests/errors/type_multiple.sgl", "--diagnostics-format=json")
    objs = [json.loads(ln) for ln in js.splitlines()]
    assert rc == rc2 == 1
    assert heads == [f"{o['path']}:{o['line']}:{o['col']}: error: {o['message']}" for o in objs]
    assert notes == [n for o in objs for n in o["notes"]]


def test_json_on_compile_run_and_success(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sgl"
    bad.write_text("func main() {\n    print(y);\n}\n")
    for cmd in (["compile", str(bad)], [str(bad)], ["run", str(bad), "--target", "seq"]):
        rc, out, err = sglc(*cmd, "--diagnostics-format=json", cwd=tmp_path)
        assert rc == 1, cmd
        (obj,) = [json.loads(ln) for ln in err.splitlines()]
        assert (obj["line"], obj["col"], obj["path"]) == (2, 11, str(bad))
    rc, out, err = sglc("check", str(REPO / "examples" / "reduce.sgl"),
                        "--diagnostics-format=json")
    assert (rc, out, err) == (0, "", "")


def test_json_renderer_fixit_and_warning() -> None:
    d = Diagnostic(Span(3, 5, 3, 9), "unused variable 'tmp'", ["remove it"], "warning")
    d.flag = "unused-variable"  # type: ignore[attr-defined]  # the warnings' field
    d.fixit = FixIt(Span(3, 5, 3, 20), "")  # type: ignore[attr-defined]
    assert diagnostic_json(d, "a.sgl") == {
        "severity": "warning", "path": "a.sgl", "line": 3, "col": 5, "end_line": 3,
        "end_col": 9, "message": "unused variable 'tmp'", "notes": ["remove it"],
        "flag": "unused-variable",
        "fixit": {"line": 3, "col": 5, "end_line": 3, "end_col": 20, "replacement": ""},
    }
    e = Diagnostic(Span(1, 1, 1, 2), "first")
    assert [json.loads(x)["message"] for x in render_json([d, e], "a.sgl").splitlines()] == \
        ["first", "unused variable 'tmp'"]


# ---------------------------------------------------------------- sarif


def check_sarif(log: object) -> list[dict]:
    """The structure of a SARIF 2.1.0 log as sglc writes it; its results."""
    assert isinstance(log, dict)
    assert log["version"] == "2.1.0" and isinstance(log["$schema"], str)
    assert "sarif" in log["$schema"] and "2.1.0" in log["$schema"]
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "sglc" and driver["version"] == SGLC_VERSION
    rules = driver["rules"]
    assert isinstance(rules, list)
    ids = [r["id"] for r in rules]
    assert len(set(ids)) == len(ids)
    for r in rules:
        assert isinstance(r["id"], str) and isinstance(r["shortDescription"]["text"], str)
    results = run["results"]
    assert isinstance(results, list)
    for res in results:
        assert res["ruleId"] in ids and ids[res["ruleIndex"]] == res["ruleId"]
        assert res["level"] in ("error", "warning", "note")
        assert isinstance(res["message"]["text"], str) and res["message"]["text"]
        (loc,) = res["locations"]
        phys = loc["physicalLocation"]
        assert isinstance(phys["artifactLocation"]["uri"], str)
        reg = phys["region"]
        for k in ("startLine", "startColumn", "endLine", "endColumn"):
            assert isinstance(reg[k], int) and reg[k] >= 1
        assert (reg["endLine"], reg["endColumn"]) >= (reg["startLine"], reg["startColumn"])
    return results


# The subset of SARIF 2.1.0 that sglc writes, as a JSON schema written here
# from the standard's object model (OASIS SARIF 2.1.0, sections 3.13-3.30).
_REGION = {"type": "object", "required": ["startLine", "startColumn", "endLine", "endColumn"],
           "properties": {k: {"type": "integer", "minimum": 1}
                          for k in ("startLine", "startColumn", "endLine", "endColumn")}}
_ARTIFACT = {"type": "object", "required": ["uri"],
             "properties": {"uri": {"type": "string", "minLength": 1},
                            "uriBaseId": {"type": "string"}}}
_MESSAGE = {"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}}
SARIF_SUBSET_SCHEMA = {
    "type": "object",
    "required": ["$schema", "version", "runs"],
    "properties": {
        "$schema": {"type": "string", "format": "uri"},
        "version": {"const": "2.1.0"},
        "runs": {"type": "array", "minItems": 1, "maxItems": 1, "items": {
            "type": "object",
            "required": ["tool", "results"],
            "properties": {
                "tool": {"type": "object", "required": ["driver"], "properties": {
                    "driver": {"type": "object", "required": ["name", "version", "rules"],
                               "properties": {
                                   "name": {"type": "string"},
                                   "version": {"type": "string"},
                                   "rules": {"type": "array", "items": {
                                       "type": "object", "required": ["id"],
                                       "properties": {"id": {"type": "string"},
                                                      "name": {"type": "string"},
                                                      "shortDescription": _MESSAGE}}}}}}},
                "columnKind": {"enum": ["utf16CodeUnits", "unicodeCodePoints"]},
                "results": {"type": "array", "items": {
                    "type": "object",
                    "required": ["ruleId", "level", "message", "locations"],
                    "properties": {
                        "ruleId": {"type": "string"},
                        "ruleIndex": {"type": "integer", "minimum": 0},
                        "level": {"enum": ["none", "note", "warning", "error"]},
                        "message": _MESSAGE,
                        "locations": {"type": "array", "items": {
                            "type": "object", "required": ["physicalLocation"],
                            "properties": {"physicalLocation": {
                                "type": "object", "required": ["artifactLocation", "region"],
                                "properties": {"artifactLocation": _ARTIFACT,
                                               "region": _REGION}}}}},
                        "fixes": {"type": "array", "items": {
                            "type": "object", "required": ["artifactChanges"],
                            "properties": {"description": _MESSAGE, "artifactChanges": {
                                "type": "array", "minItems": 1, "items": {
                                    "type": "object",
                                    "required": ["artifactLocation", "replacements"],
                                    "properties": {"artifactLocation": _ARTIFACT,
                                                   "replacements": {"type": "array", "items": {
                                                       "type": "object",
                                                       "required": ["deletedRegion"],
                                                       "properties": {
                                                           "deletedRegion": _REGION,
                                                           "insertedContent": _MESSAGE,
                                                       }}}}}}}}},
                    }}},
            }}},
    },
}


def test_sarif_of_several_files() -> None:
    rc, out, err = sglc("check", "tests/errors/type_multiple.sgl",
                        "tests/errors/break_out_of_pardo.sgl", "examples/reduce.sgl",
                        "--diagnostics-format=sarif")
    assert rc == 1 and out == ""
    results = check_sarif(json.loads(err))  # the whole of stderr is one log
    got = [(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            r["locations"][0]["physicalLocation"]["region"]["startLine"], r["level"],
            r["ruleId"]) for r in results]
    assert got == [("tests/errors/type_multiple.sgl", 2, "error", "sgl-error"),
                   ("tests/errors/type_multiple.sgl", 4, "error", "sgl-error"),
                   ("tests/errors/type_multiple.sgl", 5, "error", "sgl-error"),
                   ("tests/errors/break_out_of_pardo.sgl", 4, "error", "sgl-error")]
    assert results[0]["message"]["text"] == (
        "'a' is declared int but its initial value has type float\n"
        "note: there is no implicit conversion; write int(...)")
    assert results[0]["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 2, "startColumn": 18, "endLine": 2, "endColumn": 21}


def test_sarif_without_diagnostics(tmp_path: Path) -> None:
    rc, out, err = sglc("check", "examples/reduce.sgl", "--diagnostics-format=sarif")
    assert rc == 0 and out == ""
    assert check_sarif(json.loads(err)) == []
    rc, out, err = sglc("fmt", "-", "--diagnostics-format=sarif", cwd=tmp_path,
                        stdin="func main() {\n    var x = ;\n}\n")
    assert rc == 1
    (res,) = check_sarif(json.loads(err))
    assert res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "%3Cstdin%3E"


def test_sarif_renderer_warning_fixit_and_uris() -> None:
    w = Diagnostic(Span(3, 5, 3, 9), "unused variable 'tmp'", [], "warning")
    w.flag = "unused-variable"  # type: ignore[attr-defined]
    w.fixit = FixIt(Span(3, 1, 4, 1), "")  # type: ignore[attr-defined]
    e = Diagnostic(Span(1, 1, 1, 2), "bad", ["a note"])
    log = sarif_log([(w, "dir/a b.sgl"), (e, "/abs/b.sgl"), (w, "c.sgl")], SGLC_VERSION)
    results = check_sarif(log)
    rules = log["runs"][0]["tool"]["driver"]["rules"]  # type: ignore[index]
    assert [r["id"] for r in rules] == ["unused-variable", "sgl-error"]
    assert [(r["ruleId"], r["ruleIndex"], r["level"]) for r in results] == [
        ("unused-variable", 0, "warning"), ("sgl-error", 1, "error"),
        ("unused-variable", 0, "warning")]
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in results]
    assert uris[0] == {"uri": "dir/a%20b.sgl", "uriBaseId": "%SRCROOT%"}
    assert uris[1] == {"uri": "file:///abs/b.sgl"}
    (fix,) = results[0]["fixes"]
    (change,) = fix["artifactChanges"]
    assert change["replacements"] == [{
        "deletedRegion": {"startLine": 3, "startColumn": 1, "endLine": 4, "endColumn": 1},
        "insertedContent": {"text": ""}}]
    assert results[1]["properties"] == {"notes": ["a note"]}
    assert "fixes" not in results[1]


def test_sarif_matches_the_subset_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    w = Diagnostic(Span(3, 5, 3, 9), "unused", [], "warning")
    w.fixit = FixIt(Span(3, 5, 3, 9), "x")  # type: ignore[attr-defined]
    log = sarif_log([(w, "a.sgl"), (Diagnostic(Span(1, 1, 1, 2), "bad", ["n"]), "b.sgl")],
                    "0")
    jsonschema.validate(log, SARIF_SUBSET_SCHEMA)
    rc, _, err = sglc("check", "tests/errors/type_multiple.sgl", "--diagnostics-format=sarif")
    jsonschema.validate(json.loads(err), SARIF_SUBSET_SCHEMA)
    broken = json.loads(err)
    del broken["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, SARIF_SUBSET_SCHEMA)


def test_text_is_the_default() -> None:
    rc, _, err = sglc("check", "tests/errors/type_multiple.sgl", "--diagnostics-format=text")
    rc2, _, err2 = sglc("check", "tests/errors/type_multiple.sgl")
    assert rc == rc2 == 1 and err == err2
    assert err.replace("tests/errors/", "") == \
        (REPO / "tests" / "errors" / "type_multiple.err").read_text()
    rc, _, err = sglc("check", "x.sgl", "--diagnostics-format=xml")
    assert rc == 2 and "xml" in err
