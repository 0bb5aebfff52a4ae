"""The C allocator's settings for a process that runs the document model.

A transformer's activations are large buffers whose sizes change with every batch (a batch of
long chunks needs tens of megabytes per layer, one of short chunks a few hundred kilobytes).
glibc's ``malloc`` serves a request above its mmap threshold with a mapping of its own, given
back to the system when freed; but it raises that threshold to the size of each mapped buffer
freed (up to 32 MB on 64-bit), so after the first long batch every later activation comes from
the heap, where the mixed sizes fragment it and freed memory is not returned. The process then
grows with the number of chunks embedded, not with the size of a batch.

:func:`keep_large_buffers_mapped` fixes the threshold (which also stops its raising) so large
buffers keep coming and going as mappings. Measured on 1,500 chunks with the bare model
(``benchmarks/RESULTS.md``, "Where a cold index's memory went"). Only glibc has these knobs;
elsewhere nothing changes.

:func:`give_back_free_memory` returns what the heaps hold free to the system. An embedding
batch's buffers (tokens, activations below the threshold, the store's write) are freed into
glibc's per-thread arenas, which keep them; over a window's threads and two folders' batches the
free pages added up: 90 s into a two-folder window's embedding, ``malloc_trim`` gave back 49 MB
of 68 MB held free, in 2.7 ms (``benchmarks/RESULTS.md``, stop 64).
"""

from __future__ import annotations

import ctypes
import logging
import sys
from collections.abc import Callable
from functools import cache
from typing import cast

log = logging.getLogger(__name__)

MMAP_THRESHOLD = 1 << 20
"""Buffers of at least this many bytes are mapped apart from the heap (1 MiB)."""
_M_MMAP_THRESHOLD = -3
"""``mallopt``'s parameter number for the mmap threshold (glibc's malloc.h)."""


@cache
def keep_large_buffers_mapped() -> None:
    """Fix glibc's mmap threshold at :data:`MMAP_THRESHOLD` for this process (once; before the
    model's first allocations is best). Where there is no glibc, nothing happens."""
    if not sys.platform.startswith("linux"):
        return
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # another C library (musl has no mallopt): its own settings
        return
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    if mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) != 1:
        log.debug("mallopt refused the mmap threshold")


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None where the C library has none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # musl and others: nothing to call
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return cast("Callable[[int], int]", trim)


def give_back_free_memory() -> None:
    """Return the free pages of every heap of this process to the system (a few milliseconds;
    after a batch of work whose buffers are gone). Where there is no glibc, nothing happens."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
