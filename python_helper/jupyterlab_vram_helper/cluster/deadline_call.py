"""Calls into an engine that may not answer, with a deadline that the caller's thread keeps.

A scheduler that is stopped, or a client whose connection hangs, must cost a reading its
figures and never the poller's thread, nor the kernel's: the call runs on a daemon thread of
its own and the caller waits for it at most the deadline. A call still running after that is
left to end on its own, and no second one is started on the same key meanwhile, so a hung
scheduler does not pile up threads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

THREAD_NAME = "jupyterlab-vram-cluster-call"


class DeadlineExceeded(Exception):
    """The engine did not answer within the deadline (its call may still be running)."""


class StillWaiting(Exception):
    """An earlier call on the same key has not answered yet, so no new one was made."""


class DeadlineCalls:
    """Runs calls on daemon threads and waits for each at most its deadline."""

    def __init__(self) -> None:
        self._busy: set[str] = set()
        self._lock = threading.Lock()

    def call(self, key: str, fn: Callable[[], Any], deadline_s: float) -> Any:
        """``fn()``'s result, or its exception raised here; DeadlineExceeded after ``deadline_s``."""
        with self._lock:
            if key in self._busy:
                raise StillWaiting(key)
            self._busy.add(key)
        box: dict[str, Any] = {}
        done = threading.Event()

        def run() -> None:
            try:
                box["result"] = fn()
            except BaseException as exc:
                box["error"] = exc
            finally:
                with self._lock:
                    self._busy.discard(key)
                done.set()

        try:
            threading.Thread(target=run, name=THREAD_NAME, daemon=True).start()
        except BaseException:
            with self._lock:
                self._busy.discard(key)
            raise
        if not done.wait(deadline_s):
            raise DeadlineExceeded(f"no answer within {deadline_s:g} s")
        if "error" in box:
            raise box["error"]
        return box.get("result")
