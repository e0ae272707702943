"""The header of a program of tests/runtime_errors: what its run must show
(the format is described in tests/test_runtime_errors.py, which runs them
on every target; tests/sanitize.py runs them under the sanitizers)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

_HEADER = re.compile(r"^//\s*([a-z-]+)(?:\[([0-9x\[\],]+)\])?:\s?(.*)$")


@dataclass
class Spec:
    path: Path
    status: int = 1
    args: list[str] = field(default_factory=list)
    shapes: list[str] | None = None
    targets: list[str] | None = None
    stderr: dict[str | None, list[str]] = field(default_factory=dict)
    stdout: dict[str | None, list[str]] = field(default_factory=dict)
    full: bool = False
    gone_within: tuple[float, str] | None = None
    running: float | None = None

    def stderr_pieces(self, shape: str) -> list[str]:
        return self.stderr.get(None, []) + self.stderr.get(shape, [])

    def stdout_text(self, shape: str) -> str | None:
        lines = self.stdout.get(shape, self.stdout.get(None))
        return None if lines is None else "".join(line + "\n" for line in lines)


def parse_spec(path: Path) -> Spec:
    spec = Spec(path)
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("//"):
            break
        m = _HEADER.match(line)
        if not m:
            continue
        key, shape, value = m.group(1), m.group(2), m.group(3).rstrip()
        if key == "args":
            spec.args = value.split()
        elif key == "shapes":
            spec.shapes = value.split()
        elif key == "targets":
            spec.targets = value.split()
        elif key == "expect-status":
            spec.status = int(value)
        elif key == "expect-stderr":
            spec.stderr.setdefault(shape, []).append(value)
        elif key == "expect-stdout":
            spec.stdout.setdefault(shape, []).append(value)
        elif key == "matrix":
            spec.full = value == "full"
        elif key == "gone-within":
            secs, name = value.split()
            spec.gone_within = (float(secs), name)
        elif key == "expect-running":
            spec.running = float(value)
    if spec.running is None and not any(spec.stderr.values()):
        raise ValueError(f"{path.name}: no expect-stderr line")
    return spec
