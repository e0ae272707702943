"""Differential testing (tests/gen/): 30 generated shape-independent programs
must print what the reference interpreter (tests/refinterp/) prints, with
status 0, on every target and machine shape.

To stay within about 3 minutes on 2 cores, each seed runs on seq
--sgl-shape 0 plus 8 of the 13 other configurations, chosen in turn,
so that every configuration runs on at least 5 seeds; two seeds are tested
at once.  Failures are saved (and minimized) in tests/gen/failures/.
"""

from __future__ import annotations

import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

GEN = Path(__file__).resolve().parent / "gen"
sys.path.insert(0, str(GEN))

import difftest  # noqa: E402
import sglgen  # noqa: E402

SEEDS = list(range(1000, 1030))
SUBSET = 8
_VERDICTS: dict[int, difftest.Verdict] = {}


@pytest.fixture(scope="module")
def verdicts() -> dict[int, difftest.Verdict]:
    """Run every seed once (two at a time); minimize failures briefly."""
    if not _VERDICTS:
        with ThreadPoolExecutor(max_workers=2) as pool:
            results = pool.map(lambda s: difftest.check_seed(s, SUBSET, True, 60.0), SEEDS)
            _VERDICTS.update(zip(SEEDS, results, strict=True))
    return _VERDICTS


def test_every_config_five_times() -> None:
    counts = Counter(c for s in SEEDS for c in difftest.configs_for(s, SUBSET))
    usable = [c for c in difftest.CONFIGS if c.target != "mpi" or difftest.have_mpi()]
    assert set(counts) == set(usable)
    low = {str(c): n for c, n in counts.items() if n < 5}
    assert not low, f"configurations run on fewer than 5 seeds: {low}"


def test_generator_deterministic_and_small() -> None:
    for s in SEEDS[:10]:
        a, b = sglgen.generate(s), sglgen.generate(s)
        assert a == b
        assert a.count("\n") <= sglgen.MAX_LINES
    assert sglgen.generate(1) != sglgen.generate(2)


def test_checker_catches_a_wrong_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A compiled run that prints other than the interpreter is reported,
    on its config only (sglc's output stands in for a wrong one here)."""
    text = "func main() {\n    print(7 / -2, -7 % 3, sort([2.5, 0.0, 1.0]));\n}\n"
    configs = [difftest.Config("seq", 1, "0"), difftest.Config("seq", 1, "2x3")]
    real = difftest.run_config

    def wrong(exe: Path, cfg: difftest.Config, cwd: Path) -> difftest.Outcome:
        res = real(exe, cfg, cwd)
        if cfg.shape == "2x3":
            res.stdout = res.stdout.replace("-3", "-4")
        return res

    assert difftest.oracle(text, "2x3", tmp_path).stdout == "-3 -1 [0.0, 1.0, 2.5]\n"
    monkeypatch.setattr(difftest, "run_config", wrong)
    v = difftest.check_source(text, configs, tmp_path)
    assert not v.ok and v.bad == [configs[1]], v.report
    assert "differs from the reference interpreter" in v.report


def test_checker_catches_a_difference(tmp_path: Path) -> None:
    """The comparison can fail: a program that prints nchildren is not
    shape-independent (the interpreter prints otherwise on 2x3)."""
    text = "func main() {\n    print(nchildren);\n}\n"
    configs = [difftest.Config("seq", 1, "0"), difftest.Config("seq", 1, "2x3")]
    v = difftest.check_source(text, configs, tmp_path)
    assert not v.ok and v.bad == [configs[1]], v.report


@pytest.mark.parametrize("seed", SEEDS)
def test_generated_program(seed: int, verdicts: dict[int, difftest.Verdict]) -> None:
    v = verdicts[seed]
    assert v.ok, (f"seed {seed} differs on {', '.join(map(str, v.bad))}; program and report in "
                  f"{difftest.FAILURES}/seed-{seed}.*\n{v.report[:4000]}")


def test_fuzz_frontend_smoke() -> None:
    """A short run of tests/gen/fuzz_frontend.py (the full one: make fuzz-frontend)."""
    import fuzz_frontend

    assert fuzz_frontend.main(["--count", "300", "--seed", "11", "--backend"]) == 0
