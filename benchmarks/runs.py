"""One JSON file per benchmark run, computed once, shareable between processes.

A run's file is written atomically when the run ends, so an interrupted benchmark resumes where
it stopped; a run in progress is *claimed* by a ``.claim`` file holding its process id, so
several processes can share the work, and the claim of a process that died is taken over.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

__all__ = ["claim", "run_missing"]


def claim(path: Path) -> bool:
    """Claim the run saved at ``path`` for this process; ``False`` if a live process owns it."""
    marker = path.with_suffix(".claim")
    for _ in range(2):
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            try:
                pid = int(marker.read_text() or "0")
                if pid <= 0:  # written by no process (a crash before the pid was written)
                    raise ProcessLookupError
                os.kill(pid, 0)
                return False  # another live process owns it
            except (ValueError, ProcessLookupError, FileNotFoundError):
                marker.unlink(missing_ok=True)  # stale: its process is gone
                continue
            except PermissionError:
                return False
        with os.fdopen(fd, "w") as f:
            f.write(str(os.getpid()))
        return True
    return False


def run_missing(path: Path, compute: Callable[[], dict]) -> dict | None:
    """Compute and save the run at ``path``, unless it is saved or claimed by another process.

    Returns the run's result, or ``None`` when this process did not run it.
    """
    if path.exists() or not claim(path):
        return None
    try:
        result = compute()
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(result, indent=1))
        tmp.replace(path)
    finally:
        path.with_suffix(".claim").unlink(missing_ok=True)
    return result
