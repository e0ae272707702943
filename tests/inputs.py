"""Input files of a program that reads them: ``NAME_input.py`` beside
``NAME.sgl`` makes them (examples/pagerank_input.py writes the two .npy
files of pagerank.sgl). The test harnesses run it in a program's fresh
working folder before the program, with this Python (NumPy is a test
dependency)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def input_script(src: Path) -> Path | None:
    """The script that makes src's input, if it has one."""
    script = src.with_name(f"{src.stem}_input.py")
    return script if script.is_file() else None


def prepare(src: Path, cwd: Path) -> None:
    """Makes src's input files in cwd (nothing when it needs none)."""
    script = input_script(src)
    if script is not None:
        subprocess.run([sys.executable, str(script)], cwd=cwd, check=True,
                       capture_output=True, text=True, timeout=120)
