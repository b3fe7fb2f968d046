"""Recognises a cell's error that a cluster worker raised or suffered, and names the worker.

A task's exception travels back to the notebook: Dask re-raises it from the client (its
traceback runs through distributed's modules), Ray wraps it in a RayTaskError whose message
names the worker's pid, and both engines raise their own errors when a worker died under a task
(Dask's KilledWorker naming the last worker, Ray's OutOfMemoryError when its memory monitor
killed one). The kernel's own figures say nothing about that worker's memory, so the
out-of-memory assistant is told where the error came from (OomDiagnosis.cluster_worker) and a
cluster event records it with the worker's last figures. Only text is kept, never the exception.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

MAX_LINKS = 8
_DASK_ADDRESS = re.compile(r"\b(?:tcp|tls|ucx|inproc)://[\w.\-\[\]:/]+\w")
_RAY_PID = re.compile(r"\bpid=(\d+)")
_CUDA_OOM = re.compile(r"CUDA out of memory|CUDA error: out of memory|CUBLAS_STATUS_ALLOC_FAILED", re.IGNORECASE)
_RAY_MEMORY_MONITOR = "running low on memory"


class WorkerError(NamedTuple):
    """Where a cell's error came from: the engine, the kind of event, the worker and pid it names."""

    engine: str
    kind: str
    worker: str | None
    pid: int | None
    type_name: str
    message: str


def worker_error(exc: BaseException) -> WorkerError | None:
    """The cluster origin of ``exc`` (or of an error it was raised from), or None for a local error."""
    for link in _chain(exc):
        names = {cls.__name__ for cls in type(link).__mro__}
        module = type(link).__module__ or ""
        message = _message(link)
        if "KilledWorker" in names:
            found = _DASK_ADDRESS.findall(message)
            return WorkerError(
                "dask", "killed_worker", found[-1] if found else None, None, type(link).__name__, message
            )
        if module.startswith("ray") or any(name.startswith("RayTaskError") for name in names):
            pid = _RAY_PID.search(message)
            if _CUDA_OOM.search(message):
                kind = "cuda_oom"
            elif "OutOfMemoryError" in names or _RAY_MEMORY_MONITOR in message:
                kind = "oom_killed"
            else:
                continue
            return WorkerError("ray", kind, None, int(pid.group(1)) if pid else None, type(link).__name__, message)
        if _CUDA_OOM.search(message) and _raised_through(link, "distributed"):
            return WorkerError("dask", "cuda_oom", None, None, type(link).__name__, message)
    return None


def _chain(exc: BaseException) -> list[BaseException]:
    """The error, and those it was raised from or during, at most MAX_LINKS."""
    links: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and len(links) < MAX_LINKS and all(current is not seen for seen in links):
        links.append(current)
        current = current.__cause__ or current.__context__
    return links


def _message(exc: BaseException) -> str:
    try:
        return str(exc)[:4000]
    except Exception:
        return ""


def _raised_through(exc: BaseException, package: str) -> bool:
    """Whether the traceback passes through a module of ``package`` (the engine re-raised it)."""
    tb: Any = exc.__traceback__
    marker = f"/{package}/"
    while tb is not None:
        if marker in tb.tb_frame.f_code.co_filename.replace("\\", "/"):
            return True
        tb = tb.tb_next
    return False
