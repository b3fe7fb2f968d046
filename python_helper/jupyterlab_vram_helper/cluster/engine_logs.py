"""Catches the engine's own words for a worker's memory trouble, from the loggers in the kernel.

A LocalCluster's nannies live in the kernel's process, and the nanny's memory monitor logs
"Worker tcp://... (pid=...) exceeded 95% memory budget. Restarting..." before it kills its
worker (distributed/worker_memory.py). A handler on those loggers keeps that line, so that the
event that explains the worker's end carries the engine's words. Only the message strings are
kept, never the log record, whose arguments may be the user's objects. It is installed only
when ``distributed`` is already imported, and taken off when the poller stops.
"""

from __future__ import annotations

import collections
import logging
import re
import sys
import time
from typing import NamedTuple

# The loggers of distributed's memory monitors: the nanny's (restarts) and the worker's (pause,
# spill), the latter heard only for thread workers, which run in the kernel.
LOGGERS = ("distributed.nanny.memory", "distributed.worker.memory")
MAX_KEPT = 200
MAX_TEXT = 1000
_RESTART = re.compile(r"Worker (\S+) \(pid=(\d+)\) exceeded \d+% memory budget")


class EngineLine(NamedTuple):
    """One warning of the engine: when, which logger, its text, and the worker and pid it names."""

    time: float
    logger: str
    text: str
    worker: str | None
    pid: int | None


class EngineLogCatcher(logging.Handler):
    """Keeps the last warnings of distributed's memory monitors, as strings."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: collections.deque[EngineLine] = collections.deque(maxlen=MAX_KEPT)
        self._loggers: list[logging.Logger] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()[:MAX_TEXT]
            match = _RESTART.search(text)
            worker = match.group(1) if match else None
            pid = int(match.group(2)) if match else None
            self.lines.append(EngineLine(time.time(), record.name, text, worker, pid))
        except Exception:
            # A log line the helper cannot read must not reach logging's own error output.
            pass

    def install(self) -> bool:
        """Attach to distributed's memory loggers, if distributed is imported; True when attached."""
        if self._loggers or "distributed" not in sys.modules:
            return bool(self._loggers)
        for name in LOGGERS:
            logger = logging.getLogger(name)
            logger.addHandler(self)
            self._loggers.append(logger)
        return True

    def uninstall(self) -> None:
        """Take the handler off every logger it was attached to."""
        for logger in self._loggers:
            logger.removeHandler(self)
        self._loggers = []

    def since(self, moment: float) -> list[EngineLine]:
        """The lines caught after ``moment`` (Unix seconds), oldest first."""
        return [line for line in tuple(self.lines) if line.time > moment]

    def restart_of(self, worker_id: str) -> EngineLine | None:
        """The last line that says the nanny restarted this worker for its memory."""
        for line in reversed(tuple(self.lines)):
            if line.worker == worker_id:
                return line
        return None
