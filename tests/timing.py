"""Bounds on an algorithm's work, measured in the CPU time of the test's own thread.

The suite runs three workers on two cores beside servers and model loads, so a wall clock counts
the wait for a core as well as the work: a check of hostile HTML that takes 1.6 s alone took
5.9 s in a CI run and failed its bound of 5 s, its code as linear as ever. The thread's CPU time
counts the work alone, which is what a quadratic algorithm multiplies. Only for code that runs
on the test's thread: work handed to another thread or process is not counted.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def at_most_cpu_seconds(limit: float, what: str = "") -> Iterator[None]:
    """Fail when the block's own thread spends ``limit`` seconds of CPU or more."""
    started = time.thread_time()
    yield
    spent = time.thread_time() - started
    assert spent < limit, f"{what or 'the block'}: {spent:.2f} s of CPU, the bound is {limit} s"
