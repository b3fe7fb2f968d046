"""What the end-to-end tests of the kernel's processes share: a live helper kernel sampling
every half second, cells that must succeed, and the code of a worker that holds memory.

The process tree and the release tests start real workers from a real kernel and read
what the helper says of them; both need the same kernel set-up and the same kind of
worker, one whose memory is its own (every page written, so resident and private).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kernel_harness import CellSession, live_helper_kernel

MB = 1 << 20
# Samples every half second, so that the tree is read often while a cell runs.
CONFIG = {"interval_s": 0.5, "heartbeat_s": 2.0}


def hold_code(mb: int) -> str:
    """Cell code defining ``_hold()``: a worker's function that keeps ``mb`` MB of its own."""
    return f"""
import multiprocessing as mp, os, time
def _hold(_=None):
    global _held
    _held = bytearray({mb} << 20)
    _held[::4096] = b"\\x01" * len(range(0, len(_held), 4096))
    return os.getpid()
"""


@pytest.fixture(name="session")
def session_fixture(bootstrap: str) -> Iterator[CellSession]:
    """``session``: a live helper kernel for one test, with :data:`CONFIG` (import the function to use it)."""
    with live_helper_kernel(bootstrap, CONFIG) as (kernel, comm_id):
        yield CellSession(kernel, comm_id)


def run(session: CellSession, code: str, timeout: float = 60) -> dict[str, Any]:
    """Run ``code`` as a cell that must succeed, and return its record."""
    result = session.run(code, record_timeout=timeout, timeout=timeout)
    assert result["reply"]["status"] == "ok", result["reply"]
    return result["record"]
