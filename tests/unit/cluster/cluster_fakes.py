"""Fakes of a Dask client and the modules the helper looks into, built from a recorded scheduler answer.

tests/fixtures/dask_identity_64_workers.json is what ``scheduler.identity(n_workers=-1)`` returned
for a real LocalCluster of 64 thread workers (its ``_recorded`` key says how it was made).
"""

from __future__ import annotations

import copy
import json
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

RECORDED = Path(__file__).resolve().parents[2] / "fixtures" / "dask_identity_64_workers.json"


def recorded_identity() -> dict[str, Any]:
    """A fresh copy of the recorded 64-worker answer."""
    data = json.loads(RECORDED.read_text(encoding="utf-8"))
    data.pop("_recorded", None)
    return data


class FakeClient:
    """A client whose scheduler answers ``identity`` with ``answer`` (or hangs, or fails)."""

    def __init__(self, answer: dict[str, Any] | None = None, address: str = "tcp://10.0.0.1:8786"):
        self.answer = answer if answer is not None else recorded_identity()
        self.status = "running"
        self.hang = threading.Event()  # set: identity never answers (until released)
        self.release = threading.Event()
        self.error: BaseException | None = None
        self.old_version = False
        self.calls = 0
        self.cluster: Any = None
        self.scheduler = SimpleNamespace(address=address, identity=self._identity)
        self.ran: list[tuple[Any, tuple]] = []
        self.run_answer: dict[str, Any] | None = None

    def _identity(self, n_workers: int = 0) -> dict[str, Any]:
        return copy.deepcopy(self.answer)

    def sync(self, fn: Any, *args: Any, callback_timeout: float | None = None, **kwargs: Any) -> Any:
        self.calls += 1
        if self.old_version:
            raise TypeError("identity() got an unexpected keyword argument 'n_workers'")
        if self.hang.is_set():
            self.release.wait(30)
        if self.error is not None:
            raise self.error
        return fn(*args, **kwargs)

    def scheduler_info(self) -> dict[str, Any]:
        return copy.deepcopy(self.answer)

    def run(self, fn: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
        self.ran.append((fn, args))
        if self.run_answer is not None:
            return self.run_answer
        return {address: fn(*args) for address in self.answer["workers"]}

    def restart(self, timeout: float = 30) -> None:
        self.ran.append(("restart", (timeout,)))


def dask_modules(default: Any = None, version: str = "2026.8.0") -> dict[str, Any]:
    """sys.modules as a kernel that imported distributed has it (only what the helper reads)."""
    return {
        "distributed": SimpleNamespace(__version__=version),
        "distributed.client": SimpleNamespace(Client=FakeClient, _get_global_client=lambda: default),
    }


class FakeRay:
    """The ray module of an initialised runtime with one node (the kernel's)."""

    __version__ = "2.60.0"

    def __init__(self, initialized: bool = True):
        self.initialized = initialized
        self.node_id = "n" * 56

    def is_initialized(self) -> bool:
        return self.initialized

    def get_runtime_context(self) -> Any:
        return SimpleNamespace(gcs_address="10.0.0.2:6379", get_node_id=lambda: self.node_id)

    def nodes(self) -> list[dict[str, Any]]:
        return [
            {
                "NodeID": self.node_id,
                "Alive": True,
                "NodeManagerAddress": "10.0.0.2",
                "NodeManagerHostname": "box",
                "NodeName": "10.0.0.2",
                "Resources": {"CPU": 1.0, "memory": 1e9},
            }
        ]


class Shell:
    """The IPython shell as the poller reads it: its user namespace."""

    def __init__(self, **names: Any):
        self.user_ns: dict[str, Any] = dict(names)


def wait_until(predicate: Any, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()
