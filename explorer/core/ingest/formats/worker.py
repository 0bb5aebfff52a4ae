"""The extraction worker's main: reads documents' bytes, answers with their text.

Started by :mod:`explorer.core.ingest.formats.sandbox` as ``python -m
explorer.core.ingest.formats.worker MEMORY_BYTES``. It caps its own address space at
``MEMORY_BYTES`` before it reads anything, says ``ready``, then serves requests until its input
ends: a JSON header line (format, path, size, limits) followed by ``size`` bytes, answered by
one JSON line. Before each request its CPU-time limit is moved to what it has used plus the
request's time cap, so a parser that spins is stopped by the kernel even if nobody waits for
it. Anything a parser prints goes nowhere: the answers have a descriptor of their own.
"""

from __future__ import annotations

import json
import logging
import os
import resource
import sys
import warnings
from typing import IO, Any

from explorer.core.ingest.documents import SkipReason
from explorer.core.ingest.file_reading import FileRefused
from explorer.core.ingest.formats.contract import Limits
from explorer.core.ingest.formats.registry import format_named
from explorer.core.ingest.formats.sandbox import encode_document

MAX_HEADER_BYTES = 64 * 1024


def _limit_memory(memory_bytes: int) -> None:
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = memory_bytes if hard == resource.RLIM_INFINITY else min(memory_bytes, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


def _limit_cpu(seconds: float) -> None:
    """Let this request use ``seconds`` (and a margin) more of CPU time, no more."""
    used = resource.getrusage(resource.RUSAGE_SELF)
    spent = used.ru_utime + used.ru_stime
    _soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = int(spent + seconds * 1.5) + 2
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _ran_out_of_memory(memory_bytes: int) -> bool:
    """Whether this process came close to its address-space cap (its peak resident size
    passed 80 % of it): a C parser that cannot allocate may only say "unknown error"."""
    peak_bytes = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
    return peak_bytes > 0.8 * memory_bytes


def _out_of_memory(memory_bytes: int) -> dict[str, Any]:
    """The answer for a document that needed more memory than the cap; the worker then exits
    (its next request starts a fresh one, with its memory and its peak back to nothing)."""
    detail = f"needs more than the reader's {memory_bytes // 2**20} MB of memory"
    return {"ok": False, "reason": str(SkipReason.UNREADABLE), "detail": detail, "exit": True}


def _preload() -> None:
    """Import the parsers now, before the first request's clock starts."""
    for module in ("pypdfium2", "lxml.html", "docx"):
        try:
            __import__(module)
        except ImportError:
            continue  # reported when a document needs it


def _answer(request: dict[str, Any], data: bytes, memory_bytes: int) -> dict[str, Any]:
    try:
        fmt = format_named(str(request["format"]))
        limits = Limits(**request["limits"])
        document = fmt.extract(data, str(request["rel_path"]), limits)
    except FileRefused as refused:
        return {"ok": False, "reason": str(refused.reason), "detail": refused.detail}
    except MemoryError:
        return _out_of_memory(memory_bytes)
    except RecursionError:
        detail = "nested too deeply to read"
        return {"ok": False, "reason": str(SkipReason.UNREADABLE), "detail": detail}
    except ImportError as error:
        detail = f"the {request.get('format')} reader is not installed ({error.name})"
        return {"ok": False, "reason": str(SkipReason.UNREADABLE), "detail": detail}
    except Exception as error:  # noqa: BLE001 - a parser's error on a malformed file is a reason
        if _ran_out_of_memory(memory_bytes):  # libxml2 reports a failed allocation as an error
            return _out_of_memory(memory_bytes)
        detail = f"damaged {request.get('format')} file ({type(error).__name__}: {error})"
        return {"ok": False, "reason": str(SkipReason.UNREADABLE), "detail": detail[:500]}
    return {"ok": True, "document": encode_document(document)}


def _read_exactly(stream: IO[bytes], size: int) -> bytes | None:
    parts: list[bytes] = []
    remaining = size
    while remaining > 0:
        part = stream.read(min(remaining, 1 << 20))
        if not part:
            return None
        parts.append(part)
        remaining -= len(part)
    return b"".join(parts)


def serve(memory_bytes: int) -> None:
    """Answer requests on stdin until it ends."""
    replies = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # a parser printing to stdout must not break the answers
    os.close(devnull)
    logging.disable(logging.CRITICAL)
    warnings.simplefilter("ignore")
    _preload()
    _limit_memory(memory_bytes)
    requests = sys.stdin.buffer
    replies.write(b"ready\n")
    replies.flush()
    while True:
        header = requests.readline(MAX_HEADER_BYTES)
        if not header.endswith(b"\n"):
            return  # the parent closed the pipe (or sent nonsense): stop
        request = json.loads(header)
        data = _read_exactly(requests, int(request["size"]))
        if data is None:
            return
        _limit_cpu(float(request["limits"]["seconds"]))
        answer = _answer(request, data, memory_bytes)
        del data
        try:
            line = json.dumps(answer).encode("utf-8", "surrogatepass")
        except MemoryError:
            line = json.dumps(
                {"ok": False, "reason": "unreadable", "detail": "text too large to hand over"}
            ).encode()
        replies.write(line + b"\n")
        replies.flush()
        if answer.get("exit"):
            return


def main() -> None:
    serve(int(sys.argv[1]) if len(sys.argv) > 1 else 2 * 1024**3)


if __name__ == "__main__":
    main()
