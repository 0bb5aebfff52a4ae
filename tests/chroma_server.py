"""A real Chroma server for tests: ``chroma run`` (shipped with chromadb) on 127.0.0.1.

Each server gets a free port and its own data directory; :meth:`ChromaServer.stop` and
:meth:`ChromaServer.start` may be called again to take it down and bring it back on the same
port with the same data, as an operator restarting it would.
"""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

START_SECONDS = 60.0


def chroma_command() -> str:
    """The ``chroma`` executable of this environment (next to its Python), else on PATH."""
    beside = Path(sys.executable).parent / "chroma"
    if beside.exists():
        return str(beside)
    found = shutil.which("chroma")
    if found is None:
        raise RuntimeError("the chroma command (installed with chromadb) is not available")
    return found


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class ChromaServer:
    """One ``chroma run`` process; ``url`` stays the same across restarts."""

    def __init__(self, data_dir: Path, port: int | None = None) -> None:
        self.data_dir = data_dir
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = data_dir.parent / f"chroma-{self.port}.log"
        self._process: subprocess.Popen | None = None

    def start(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        with open(self.log, "ab") as log:
            self._process = subprocess.Popen(
                [
                    chroma_command(),
                    "run",
                    "--path",
                    str(self.data_dir),
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(self.port),
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"chroma run exited; see {self.log}")
            if self.answers():
                return
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"chroma run did not answer within {START_SECONDS:.0f} s")

    def answers(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/api/v2/heartbeat", timeout=1) as response:
                return response.status == 200
        except OSError:
            return False

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        while self.answers():  # the port is free once nothing answers on it
            time.sleep(0.05)
