"""sglc.load and the process's signals and forks (docs/embedding.md):

- Ctrl-C (SIGINT) during a call stops it: the library cancels every node of
  the call (the runtime's cancellation, as after a failure), the call
  raises KeyboardInterrupt within 1 s, even in an endless loop on threads,
  and the module works for later calls;
- a process forked after sglc.load (multiprocessing's fork start method),
  with or without a call before the fork, runs calls in the child (its
  thread levels one child after the other: the child has no OpenMP
  threads) and gets the same results, never a hang.

Each case runs in a subprocess with a timeout, so that a hang fails the
test instead of blocking the suite."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest
from conftest import REPO, run_checked

PROG = REPO / "tests" / "embed" / "interrupt.sgl"

# total(n) on a tree: the sum over the root's children of n + child_index
# (on a worker: n)
def total(n: int, children: int) -> int:
    return n if children == 0 else sum(n + i for i in range(children))


# (target, shape, the root's children)
CASES = [("omp", "2x2", 2), ("omp", "3", 3), ("omp", "0", 0), ("seq", "2x2", 2)]

INTERRUPT = """
import sys, time, sglc
m = sglc.load(sys.argv[1], target=sys.argv[2], shape=sys.argv[3])
print("first", m.total(10), flush=True)
print("calling", flush=True)
try:
    m.spin(1)
    print("returned", flush=True)
except KeyboardInterrupt:
    print("KeyboardInterrupt", flush=True)
print("again", m.total(10), flush=True)
"""


@pytest.mark.timed  # the call stops within 1 s
@pytest.mark.parametrize("target,shape,children", CASES)
def test_ctrl_c_stops_a_call(target: str, shape: str, children: int) -> None:
    proc = subprocess.Popen([sys.executable, "-c", INTERRUPT, str(PROG), target, shape],
                            stdout=subprocess.PIPE, text=True, start_new_session=True)
    # a hang kills the subprocess (readline then returns "" and the test fails)
    watchdog = threading.Timer(30, lambda: os.killpg(proc.pid, signal.SIGKILL))
    watchdog.start()
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == f"first {total(10, children)}\n"
        assert proc.stdout.readline() == "calling\n"
        time.sleep(0.5)  # inside the endless call by now
        t0 = time.monotonic()
        os.kill(proc.pid, signal.SIGINT)
        line = proc.stdout.readline()
        took = time.monotonic() - t0
        assert line == "KeyboardInterrupt\n", line
        assert took < 1.0, took
        # (readline, not communicate: the lines may be in readline's buffer)
        assert proc.stdout.readline() == f"again {total(10, children)}\n"
        assert proc.wait(timeout=60) == 0
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


FORK = """
import multiprocessing as mp, sys, sglc
m = sglc.load(sys.argv[1], target=sys.argv[2], shape=sys.argv[3])
if sys.argv[4] == "call":
    print("parent", m.total(10), flush=True)

def work(n):
    return m.total(n)

with mp.get_context("fork").Pool(2) as pool:
    print("children", pool.map(work, [1, 2, 3, 4]), flush=True)
print("parent after", m.total(5), flush=True)
"""


@pytest.mark.parametrize("before", ["call", "nocall"])
@pytest.mark.parametrize("target,shape,children", CASES)
def test_fork_after_load(target: str, shape: str, children: int, before: str) -> None:
    rc, out, err = run_checked([sys.executable, "-c", FORK, str(PROG), target, shape, before],
                               timeout=90)
    want = ([f"parent {total(10, children)}"] if before == "call" else []) + [
        f"children {[total(n, children) for n in (1, 2, 3, 4)]}",
        f"parent after {total(5, children)}"]
    assert (rc, out.splitlines()) == (0, want), err
