"""The run report: --sgl-report=FILE.html and `sglc report` (docs/cost-model.md,
"The report"), and the page in a real headless browser (Debian's chromium;
those tests skip without it)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from conftest import REPO, run_checked, run_env, run_program, sglc_command, target_params
from test_instr import REDUCE, N  # the same program and size as the statistics tests

from sglc import report

RUNS = target_params([("seq", 1, "2x3"), ("omp", 1, "2x[1,3]"), ("omp", 1, "3x2"),
                      ("mpi", 2, "2x2"), ("mpi", 2, "2x[1,3]")])

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is missing (Debian package chromium, see .ci/run)")


def tree_paths(shape: str) -> set[str]:
    """Every node's path of a shape like 2x3 or 2x[1,3] (an independent model
    of the brief's shapes: a list gives each node of the level its count)."""
    level = ["0"]
    paths = set(level)
    for part in shape.split("x"):
        part = part.strip()
        if part.startswith("["):
            counts = [int(c) for c in part.strip("[]").split(",")]
        else:
            counts = [int(part)] * len(level)
        assert len(counts) == len(level), shape
        level = [f"{p}.{i}" for p, c in zip(level, counts) for i in range(c)]
        paths.update(level)
    return paths


def slot(page: str) -> dict:
    m = re.search(r'<script type="application/json" id="sgl-data">(.*?)</script>', page, re.S)
    assert m, "no data slot"
    return json.loads(m.group(1))


def check_page(page: str) -> dict:
    """What every page must be: the template with its slot filled, and no
    network reference."""
    head, tail = report.template_parts()
    assert page.startswith(head) and page.endswith(tail)
    assert "http://" not in page and "https://" not in page
    assert "<link" not in page and "src=" not in page
    return slot(page)


@pytest.fixture(scope="module")
def reduce_src(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = tmp_path_factory.mktemp("report") / "reduce.sgl"
    src.write_text(REDUCE)
    return src


def test_header_is_current() -> None:
    """runtime_c/sgl_report_html.h is generated from runtime_c/sgl_report.html."""
    header = REPO / "runtime_c" / report.HEADER
    assert header.read_text() == report.header_text(), \
        "run: python -m sglc.report --header"


@pytest.mark.parametrize("target,nprocs,shape", RUNS)
def test_runtime_report(sglc_compile, reduce_src: Path, tmp_path: Path, target: str,
                        nprocs: int, shape: str) -> None:
    exe = sglc_compile(reduce_src, target).require()
    page_path = tmp_path / "run.html"
    rc, out, err = run_program(exe, nprocs, shape, [f"--sgl-report={page_path}", str(N)])
    assert rc == 0, err
    assert out.startswith("sum = ")
    assert "sgl-stats" not in err  # the report alone prints no summary
    data = check_page(page_path.read_text())
    stats, trace = data["stats"], data["trace"]
    assert stats["shape"] == shape and stats["nprocs"] == nprocs
    want = tree_paths(shape)
    masters = {m["node"] for m in stats["masters"]}
    assert masters == {p for p in want if any(q.startswith(p + ".") for q in want)}
    for m in stats["masters"]:
        kids = {f"{m['node']}.{c['child']}" for c in m["children"]}
        assert kids == {q for q in want if "." in q and q.rsplit(".", 1)[0] == m["node"]}
        assert all(0 <= c["compute"] <= m["time"] * 1.001 + 1e-6 for c in m["children"])
    tracks = {e["args"]["name"][5:] for e in trace["traceEvents"]
              if e["ph"] == "M" and e["name"] == "thread_name"}
    assert tracks == want
    assert [lv["level"] for lv in stats["levels"]] == list(range(shape.count("x") + 1))
    assert data["predict"] is None


def test_report_with_stats_and_trace_files(sglc_compile, reduce_src: Path,
                                           tmp_path: Path) -> None:
    """--sgl-report next to --sgl-stats and --sgl-trace: all three files, and the
    stderr summary of a bare --sgl-stats still there."""
    exe = sglc_compile(reduce_src, "omp").require()
    s, t, r = tmp_path / "s.json", tmp_path / "t.json", tmp_path / "r.html"
    rc, _, err = run_program(exe, 1, "2x2", [f"--sgl-stats={s}", f"--sgl-trace={t}",
                                             f"--sgl-report={r}", str(N)])
    assert rc == 0, err
    data = check_page(r.read_text())
    assert json.loads(s.read_text())["masters"] == data["stats"]["masters"]
    assert json.loads(t.read_text()) == data["trace"]
    rc, _, err = run_program(exe, 1, "2x2", ["--sgl-stats", f"--sgl-report={r}", str(N)])
    assert rc == 0 and "sgl-stats: shape 2x2" in err
    rc, _, err = run_program(exe, 1, "2x2", ["--sgl-report=", str(N)])
    assert rc != 0 and "--sgl-report=" in err
    rc, _, err = run_program(exe, 1, "2x2", [f"--sgl-report={tmp_path}/no/such/r.html", str(N)])
    assert rc == 0 and "sgl-report: cannot write" in err
    rc, out, _ = run_program(exe, 1, None, ["--sgl-help"])
    assert "--sgl-report=FILE.html" in out


MACHINE = {"levels": [{"level": 0, "l": 1e-3, "g_scatter": 2e-9, "g_bcast": 3e-9,
                       "g_gather": 5e-9}]}


def run_sglc(*args: str, cwd: Path) -> tuple[int, str, str]:
    return run_checked([*sglc_command(), *args], cwd=cwd, env=run_env())


def test_sglc_report_from_files(sglc_compile, reduce_src: Path, tmp_path: Path) -> None:
    exe = sglc_compile(reduce_src, "omp").require()
    s, t, m = tmp_path / "s.json", tmp_path / "t.json", tmp_path / "m.json"
    rc, _, err = run_program(exe, 1, "2x[1,3]", [f"--sgl-stats={s}", f"--sgl-trace={t}", str(N)])
    assert rc == 0, err
    m.write_text(json.dumps(MACHINE))
    rc, _, err = run_sglc("report", str(s), "--trace", str(t), "--machine", str(m), "-o",
                          "r.html", cwd=tmp_path)
    assert rc == 0, err
    data = check_page((tmp_path / "r.html").read_text())
    stats = json.loads(s.read_text())
    assert data["stats"] == stats and data["trace"] == json.loads(t.read_text())
    # the BSP cost of docs/cost-model.md per level, by hand
    p = MACHINE["levels"][0]
    lv0, lv1 = stats["levels"]
    want0 = (lv0["time"]["compute_max"] + lv0["supersteps"] * p["l"]
             + p["g_scatter"] * lv0["h_sum"]["scatter"] + p["g_bcast"] * lv0["h_sum"]["bcast"]
             + p["g_gather"] * lv0["h_sum"]["gather"])
    rows = data["predict"]
    assert [r["level"] for r in rows] == [0, 1]
    assert rows[0]["predicted"] == pytest.approx(want0, rel=1e-12) and rows[0]["known"]
    assert rows[0]["measured"] == lv0["time"]["total"]
    assert rows[1]["predicted"] == pytest.approx(lv1["time"]["compute_max"]) and not rows[1]["known"]
    # -o -: the page on standard output, as --emit's -o -
    rc, out, err = run_sglc("report", str(s), "-o", "-", cwd=tmp_path)
    assert rc == 0 and not (tmp_path / "-").exists(), err
    assert check_page(out)["stats"] == stats
    # stats alone: no trace, no prediction
    rc, _, err = run_sglc("report", str(s), "-o", "only.html", cwd=tmp_path)
    assert rc == 0, err
    data = check_page((tmp_path / "only.html").read_text())
    assert data["trace"] is None and data["predict"] is None


@pytest.mark.parametrize("target,nprocs,shape", target_params([("omp", 1, "2x[1,3]"),
                                                               ("mpi", 2, "2x2")]))
def test_runtime_report_with_a_prediction(sglc_compile, reduce_src: Path, tmp_path: Path,
                                          target: str, nprocs: int, shape: str) -> None:
    """--sgl-report with --sgl-predict=MACHINE.json: the page's prediction
    is the BSP cost per level of the page's own statistics (by hand here),
    a level without parameters marked unknown."""
    exe = sglc_compile(reduce_src, target).require()
    m, r = tmp_path / "m.json", tmp_path / "r.html"
    m.write_text(json.dumps(MACHINE))
    rc, _, err = run_program(exe, nprocs, shape, [f"--sgl-report={r}", f"--sgl-predict={m}",
                                                  str(N)])
    assert rc == 0, err
    assert "sgl-predict: total" in err  # the table on stderr is still there
    data = check_page(r.read_text())
    p = MACHINE["levels"][0]
    rows = data["predict"]
    levels = data["stats"]["levels"]
    assert [row["level"] for row in rows] == [lv["level"] for lv in levels] == [0, 1]
    for row, lv in zip(rows, levels):
        want = lv["time"]["compute_max"]
        if lv["level"] == 0:
            want += (lv["supersteps"] * p["l"] + p["g_scatter"] * lv["h_sum"]["scatter"]
                     + p["g_bcast"] * lv["h_sum"]["bcast"] + p["g_gather"] * lv["h_sum"]["gather"])
        assert row["predicted"] == pytest.approx(want, rel=1e-6)
        assert row["measured"] == pytest.approx(lv["time"]["total"], rel=1e-6)
        assert row["known"] == (lv["level"] == 0)
    # the same rows as sglc report computes from the same statistics
    py_rows = report.predict(data["stats"], MACHINE)
    for a, b in zip(rows, py_rows):
        assert a["predicted"] == pytest.approx(b["predicted"], rel=1e-6)


def test_sglc_report_errors(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "other.json").write_text("[1, 2]")
    for args, what in [(["missing.json"], "cannot read statistics missing.json"),
                       (["bad.json"], "is not valid JSON"),
                       (["other.json"], "is not a statistics file"),
                       (["bad.json", "--trace", "missing.json"], "not valid JSON")]:
        rc, out, err = run_sglc("report", *args, "-o", "x.html", cwd=tmp_path)
        assert rc == 2 and what in err and "Traceback" not in err, (args, err)
        assert not (tmp_path / "x.html").exists()


# ------------------------------------------------------------ in a real browser


def browse(page: Path, out: Path) -> tuple[str, Path]:
    """The DOM after the page's script ran, and a screenshot."""
    base = [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu",
            "--hide-scrollbars", "--window-size=1280,1400"]
    with tempfile.TemporaryDirectory() as profile:
        base.append(f"--user-data-dir={profile}")
        dom = subprocess.run([*base, "--dump-dom", page.as_uri()], capture_output=True,
                             text=True, timeout=120)
        assert dom.returncode == 0, dom.stderr[-2000:]
        shot = out / "shot.png"
        p = subprocess.run([*base, f"--screenshot={shot}", page.as_uri()], capture_output=True,
                           text=True, timeout=120)
        assert p.returncode == 0, p.stderr[-2000:]
    return dom.stdout, shot


@needs_chromium
@pytest.mark.parametrize("target,nprocs,shape",
                         target_params([("omp", 1, "2x[1,3]"), ("mpi", 2, "2x[1,3]")]))
def test_page_in_a_browser(sglc_compile, reduce_src: Path, tmp_path: Path, target: str,
                           nprocs: int, shape: str) -> None:
    exe = sglc_compile(reduce_src, target).require()
    page = tmp_path / "run.html"
    # under MPI with a machine file: the prediction drawn too
    predict = target == "mpi"
    (tmp_path / "m.json").write_text(json.dumps(MACHINE))
    extra = [f"--sgl-predict={tmp_path / 'm.json'}"] if predict else []
    rc, _, err = run_program(exe, nprocs, shape, [f"--sgl-report={page}", *extra, str(N)])
    assert rc == 0, err
    dom, shot = browse(page, tmp_path)
    assert ('id="sgl-predict"' in dom) == predict
    assert ('class="note">No prediction' in dom) == (not predict)  # drawn, not the script
    # one box (a rect with data-node) per node of the tree, drawn by the script
    boxes = re.findall(r'<rect[^>]*\bdata-node="([0-9.]+)"', dom)
    assert sorted(boxes) == sorted(tree_paths(shape))
    assert 'id="sgl-timeline"' in dom
    assert re.findall(r"<tr data-level=\"(\d+)\"", dom) == ["0", "1"]
    # a screenshot of the drawn page; a blank 1280x1400 page is about 5 KB
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 30_000


@needs_chromium
def test_sglc_report_in_a_browser(tmp_path: Path) -> None:
    """A page of sglc report with a prediction, from a hand-written
    statistics file of a 2x[1,3] run."""
    stats = {"sglc_stats": 1, "shape": "2x[1,3]", "nprocs": 1, "total_time": 0.5,
             "levels": [{"level": k, "transport": "omp", "supersteps": 1 + k,
                         "bytes": {"scatter": 0, "bcast": 0, "gather": 0},
                         "h_max": {"scatter": 0, "bcast": 0, "gather": 0},
                         "h_sum": {"scatter": 1000, "bcast": 0, "gather": 8},
                         "time": {"total": 0.4, "comm_wait": 0.1, "compute_max": 0.3,
                                  "compute_mean": 0.2}, "imbalance": 1.5} for k in (0, 1)],
             "speeds": "workers",
             "masters": [{"node": "0", "level": 0, "supersteps": 1, "time": 0.4,
                          "children": [{"child": i, "speed": 1, "recv_bytes": 8,
                                        "compute": 0.1 * (i + 1)} for i in range(2)]},
                         {"node": "0.0", "level": 1, "supersteps": 1, "time": 0.1,
                          "children": [{"child": 0, "speed": 1, "recv_bytes": 8,
                                        "compute": 0.05}]},
                         {"node": "0.1", "level": 1, "supersteps": 1, "time": 0.2,
                          "children": [{"child": i, "speed": 1, "recv_bytes": 8,
                                        "compute": 0.02 * (i + 1)} for i in range(3)]}]}
    (tmp_path / "s.json").write_text(json.dumps(stats))
    (tmp_path / "m.json").write_text(json.dumps(MACHINE))
    rc, _, err = run_sglc("report", "s.json", "--machine", "m.json", "-o", "r.html",
                          cwd=tmp_path)
    assert rc == 0, err
    dom, shot = browse(tmp_path / "r.html", tmp_path)
    boxes = re.findall(r'<rect[^>]*\bdata-node="([0-9.]+)"', dom)
    assert sorted(boxes) == sorted(tree_paths("2x[1,3]"))
    # node 0.1.2: busy 0.06 s, waiting 0.2 - 0.06 s
    m = re.search(r'<rect[^>]*data-node="0\.1\.2"[^>]*>', dom)
    assert m and 'data-busy="0.06"' in m.group(0) and 'data-wait="0.14' in m.group(0)
    assert 'id="sgl-predict"' in dom and "No timeline" in dom
    assert len(shot.read_bytes()) > 20_000


@pytest.mark.parametrize("bad, why", [
    ({"level": 0, "l": 1e-3, "g_scatter": 1e400}, 'level 0: "g_scatter" is not a finite number >= 0'),
    ({"level": 0, "l": -1.0}, 'level 0: "l" is not a finite number >= 0'),
    ({"level": 1.5, "l": 1e-3}, 'a "level" that is not a whole number >= 0'),
])
def test_a_bad_machine_file(sglc_compile, reduce_src: Path, tmp_path: Path, bad: dict,
                            why: str) -> None:
    """An infinite (1e400), negative or misplaced parameter: the runtime
    says why and predicts without parameters (the page's JSON stays
    valid: no `inf` in it); sglc report refuses the file (exit 2)."""
    exe = sglc_compile(reduce_src, "omp").require()
    m, r, s = tmp_path / "m.json", tmp_path / "r.html", tmp_path / "s.json"
    m.write_text(json.dumps({"levels": [bad]}).replace("Infinity", "1e400"))
    rc, _, err = run_program(exe, 1, "2x2", [f"--sgl-report={r}", f"--sgl-predict={m}",
                                             f"--sgl-stats={s}", str(N)])
    assert rc == 0, err
    assert f"cannot read machine parameters from '{m}': {why}" in err
    data = check_page(r.read_text())  # parses: valid JSON
    assert data["predict"] and not any(row["known"] for row in data["predict"])
    rc, _, err = run_sglc("report", str(s), "--machine", str(m), "-o", "x.html", cwd=tmp_path)
    assert rc == 2 and err == f"sglc: error: machine file {m}: {why}\n", err
