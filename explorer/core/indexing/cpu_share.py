"""How embedding shares the machine with the person using it.

Embedding is the one long CPU job of indexing: an hour on a kernel-sized tree. It runs on the
thread that embeds (the ``explorer index`` process's main thread, the writer thread of the TUI
or of an MCP server) at a lower CPU priority (``nice`` :data:`EMBED_NICE`: the scheduler gives a
thread at nice 0, such as the TUI's, about ten times its share when both want a core) and the
lowest best-effort I/O priority. Threads it starts afterwards, such as the model's worker pool,
inherit both. The idle I/O class is not used: it may wait for ever behind a busy disk, and the
writer holds the index's write lock while it waits.

The number of threads the model computes with is a setting (``embed_threads``, 0: torch's own
choice, one per core); one thread leaves a core free for everything else.
"""

from __future__ import annotations

import ctypes
import logging
import os
import sys
import threading

log = logging.getLogger(__name__)

EMBED_NICE = 10
"""The nice value embedding runs at (0 is normal, 19 the lowest priority)."""

_IOPRIO_WHO_PROCESS = 1
_IOPRIO_CLASS_BEST_EFFORT = 2
_IOPRIO_LOWEST_LEVEL = 7
_IOPRIO_CLASS_SHIFT = 13
_SYS_IOPRIO_SET = {"x86_64": 251, "aarch64": 30}
"""The ``ioprio_set`` system call's number per machine (Linux has no libc wrapper for it)."""


def lower_this_thread() -> None:
    """Run the calling thread, and the threads it starts from now on, at a lower CPU and I/O
    priority; a priority already lower is kept. Where the system says no, nothing changes."""
    thread = threading.get_native_id()
    try:
        if os.getpriority(os.PRIO_PROCESS, thread) < EMBED_NICE:
            os.setpriority(os.PRIO_PROCESS, thread, EMBED_NICE)
    except (OSError, AttributeError):  # no per-thread priority here, or not allowed
        log.debug("cannot lower the CPU priority of thread %s", thread)
    _lowest_io_priority(thread)


def _lowest_io_priority(thread: int) -> None:
    """The lowest best-effort I/O priority for ``thread`` (Linux only)."""
    number = _SYS_IOPRIO_SET.get(os.uname().machine) if sys.platform.startswith("linux") else None
    if number is None:
        return
    value = (_IOPRIO_CLASS_BEST_EFFORT << _IOPRIO_CLASS_SHIFT) | _IOPRIO_LOWEST_LEVEL
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.syscall(number, _IOPRIO_WHO_PROCESS, thread, value) != 0:
            log.debug("cannot lower the I/O priority of thread %s", thread)
    except (OSError, AttributeError):
        log.debug("no syscall() to lower the I/O priority with")


def limit_model_threads(threads: int) -> None:
    """Have the document model compute with ``threads`` threads (0 leaves torch's choice).
    Only once torch is loaded: a stand-in model never imports it."""
    torch = sys.modules.get("torch")
    if threads > 0 and torch is not None and torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
