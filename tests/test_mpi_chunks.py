"""Long MPI messages: MPI counts are ints, so a value's bytes travel in
messages of at most OOB_CHUNK bytes (1 GiB; runtime_c/sgl_mpi_msg.h).  Built
here with -DSGL_OOB_CHUNK=4096, tests/big/chunks.sgl sends rows inside the
message string and a long vector as a piece, each in many messages, down
(scatter, a bcast to one or several remote children) and up (gather).
Before, a message string over 2 GiB was an internal error ('message larger
than 2 GiB'); one of 2.24 GB at np 2 was checked by hand (bench-sized, not
run here).  The expected output is computed here from the program."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import HAVE_MPI, MPI_MISSING_REASON, run_checked, run_program, sglc_command

SRC = Path(__file__).resolve().parent / "big" / "chunks.sgl"
ROWS = 40


@pytest.fixture(scope="module")
def exe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("chunks") / "chunks"
    env = dict(os.environ, CFLAGS=(os.environ.get("CFLAGS", "") + " -DSGL_OOB_CHUNK=4096").strip())
    rc, _, err = run_checked([*sglc_command(), str(SRC), "-o", str(out), "--target", "mpi"],
                             env=env, timeout=300)
    assert rc == 0, err
    return out


@pytest.mark.skipif(not HAVE_MPI, reason=MPI_MISSING_REASON)
@pytest.mark.parametrize("nprocs,shape", [(2, "2"), (3, "3"), (2, "2x2")])
def test_long_values_travel_in_many_messages(exe: Path, nprocs: int, shape: str) -> None:
    c = int(shape.split("x")[0])
    rc, out, err = run_program(exe, nprocs, shape, [str(ROWS)], timeout=120)
    assert rc == 0, err
    ns = [ROWS + i + (c - 1) + ROWS for i in range(c)]
    assert out == (f"{c} {ROWS} {c - 1} {sum(range(100000 + c - 1))}\n"
                   f"[{', '.join(map(str, ns))}]\n")
