"""Running the stages on a large stack.

The stages recurse over the program's tree, so `sglc` (and the front-end
fuzzer) run them in a thread with a 512 MiB stack and a recursion limit of
200,000: deeply nested programs (thousands of nested operators) compile
instead of failing with a RecursionError."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

STACK_BYTES = 512 * 1024 * 1024
RECURSION_LIMIT = 200_000


def call_deep(fn: Callable[[], T]) -> T:
    """fn() in a thread with a large stack and recursion limit; its result,
    or its exception raised again here.  The caller's limit is restored, and
    the calling thread waits in short joins, so that a signal handler of the
    main thread (a SIGALRM timeout) still runs."""
    out: list[tuple[bool, object]] = []

    def run() -> None:
        try:
            out.append((True, fn()))
        except BaseException as e:  # noqa: BLE001 - handed to the calling thread
            out.append((False, e))

    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old_limit, RECURSION_LIMIT))
    try:
        old_stack = threading.stack_size(STACK_BYTES)
        try:
            t = threading.Thread(target=run, name="sglc", daemon=True)
            t.start()
        finally:
            threading.stack_size(old_stack)
        while t.is_alive():
            t.join(0.05)
    finally:
        sys.setrecursionlimit(old_limit)
    ok, value = out[0]
    if not ok:
        raise value  # type: ignore[misc]
    return value  # type: ignore[return-value]
