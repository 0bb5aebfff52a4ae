"""A tiny server used by the snapshot tests."""

import json


def health() -> str:
    """Report that the server is alive."""
    return json.dumps({"status": "ok"})


def restore_snapshot(path: str) -> bool:
    """Restore a backup snapshot from path; True when it worked."""
    return path.endswith(".snapshot")
