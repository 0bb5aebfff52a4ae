"""One checkout's run of a probe, for the benchmarks that put this checkout beside a baseline:
the probe's code runs in a process of its own, importing that checkout's explorer (its folder
first on the path and the process's working folder, so this checkout's editable install is
not what it finds), and prints one JSON value.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def probe_in(checkout: Path, code: str, *args: object) -> Any:
    """What ``code``, run by Python in ``checkout`` with ``args`` on its command line, printed
    as JSON."""
    done = subprocess.run(
        [sys.executable, "-c", code, *map(str, args)],
        cwd=checkout,
        env={**os.environ, "PYTHONPATH": str(checkout)},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)
