"""The model's process keeps large buffers as mappings of their own, given back when freed."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import TREE

PROBE = """
import ctypes, sys
if sys.argv[1] == "fixed":
    from explorer.core.embed.allocator import keep_large_buffers_mapped
    keep_large_buffers_mapped()
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
libc.free(libc.malloc(16 << 20))  # a long batch's activation, mapped and freed
buffer = libc.malloc(4 << 20)  # a later, smaller one
for line in open("/proc/self/maps"):
    fields = line.split()
    low, high = (int(x, 16) for x in fields[0].split("-"))
    if low <= buffer < high:
        print("heap" if fields[5:] == ["[heap]"] else "mapping", high - low)
"""


def where_a_later_buffer_lives(mode: str) -> tuple[str, int]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, mode], capture_output=True, text=True, cwd=TREE, check=True
    )
    kind, size = done.stdout.split()
    return kind, int(size)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's knob")
def test_after_a_long_batch_a_large_buffer_is_still_a_mapping_of_its_own():
    # Without the fixed threshold, glibc raises it to 16 MiB when the first buffer is freed,
    # and the next 4 MiB buffer comes from the heap, where freed memory stays with the process.
    assert where_a_later_buffer_lives("default")[0] == "heap"
    kind, size = where_a_later_buffer_lives("fixed")
    assert kind == "mapping" and size < 8 << 20


TRIM_PROBE = """
import ctypes, sys
from explorer.core.embed.allocator import give_back_free_memory
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
libc.memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
def rss():
    return next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmRSS"))
blocks = [libc.malloc(64 << 10) for _ in range(800)]  # a batch's buffers: 50 MB on the heap
for block in blocks:
    libc.memset(block, 1, 64 << 10)
for block in blocks[:-1]:  # the last one stays: the heap's top cannot shrink past it
    libc.free(block)
before = rss()
if sys.argv[1] == "trim":
    give_back_free_memory()
print(before - rss())
"""


def rss_given_back_kb(mode: str) -> int:
    done = subprocess.run(
        [sys.executable, "-c", TRIM_PROBE, mode], capture_output=True, text=True, cwd=TREE
    )
    assert done.returncode == 0, done.stderr
    return int(done.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_the_free_pages_of_a_finished_batch_go_back_to_the_system():
    # Freed below the heap's top, 50 MB stay resident until they are given back.
    assert rss_given_back_kb("keep") < 5 << 10
    assert rss_given_back_kb("trim") > 40 << 10
