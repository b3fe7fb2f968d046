"""Reads one found cluster, Dask or Ray, with a deadline, and names what went wrong in words.

Each reader returns the cluster's name, its facts (version, dashboard, unseen), its workers, a
status (ok, timeout, unreachable, closed, error) and a message where the status is not ok, and
what the reading took. A failure is never raised: the poller keeps the last figures and says
why they are old.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from . import dask_telemetry as dask
from . import ray_telemetry as ray_reads
from .deadline_call import DeadlineCalls, DeadlineExceeded, StillWaiting
from .local_figures import LocalFigures

Reading = tuple[str, dict[str, Any], list[dict[str, Any]], str, str | None, float | None]


def cluster_name(engine: str, handle: Any) -> str:
    """The name a cluster goes by in ClusterState and in cluster_action requests."""
    if engine == "dask":
        return dask.scheduler_address(handle) or f"dask client {id(handle):x}"
    return ray_reads.ray_name(handle)


def read_dask(
    client: Any, local: LocalFigures, calls: DeadlineCalls, deadline_s: float, modules: Mapping[str, Any] | None
) -> Reading:
    """A Dask client's cluster: the scheduler's identity of every worker, with the local pids."""
    import sys

    name = cluster_name("dask", client)
    facts: dict[str, Any] = {
        "version": dask.engine_version(sys.modules if modules is None else modules),
        "dashboard": None,
        "unseen": [],
    }
    if dask.client_closed(client):
        return name, facts, [], "closed", "The client was closed; its workers' last figures are kept.", None
    started = time.perf_counter()
    try:
        identity = calls.call(name, lambda: dask.read_identity(client, deadline_s), deadline_s + 0.5)
    except BaseException as exc:
        status, message = failure(exc, deadline_s, "scheduler")
        return name, facts, [], status, message, None
    read_ms = (time.perf_counter() - started) * 1000
    facts["dashboard"] = dask.dashboard_link(identity)
    workers = dask.dask_workers(identity, dask.local_pids(client), local)
    facts["unseen"] = dask.dask_unseen(workers)
    return name, facts, workers, "ok", None, read_ms


def read_ray(
    ray: Any, local: LocalFigures, calls: DeadlineCalls, deadline_s: float, modules: Mapping[str, Any] | None
) -> Reading:
    """The Ray runtime's nodes, and the kernel's node's worker processes from /proc."""
    name = cluster_name("ray", ray)
    facts: dict[str, Any] = {
        "version": ray_reads.ray_version(ray),
        "dashboard": ray_reads.ray_dashboard(ray),
        "unseen": list(ray_reads.UNSEEN),
    }
    started = time.perf_counter()
    try:
        nodes, own = calls.call(name, lambda: ray_reads.read_nodes(ray), deadline_s + 0.5)
    except BaseException as exc:
        status, message = failure(exc, deadline_s, "Ray's GCS")
        return name, facts, [], status, message, None
    read_ms = (time.perf_counter() - started) * 1000
    return name, facts, ray_reads.ray_workers(nodes, own, local), "ok", None, read_ms


def failure(exc: BaseException, deadline_s: float, what: str) -> tuple[str, str]:
    """The status and the message of a reading that failed with ``exc``."""
    kind = type(exc).__name__
    text = str(exc).strip()
    if isinstance(exc, (DeadlineExceeded, StillWaiting)) or kind in ("TimeoutError", "CancelledError"):
        detail = "an earlier reading is still waiting for it" if isinstance(exc, StillWaiting) else "no answer"
        return (
            "timeout",
            f"The {what} did not answer within {deadline_s:g} s ({detail}); "
            "the figures are from the last reading that answered.",
        )
    if isinstance(exc, OSError) or kind in ("CommClosedError", "StreamClosedError"):
        return "unreachable", f"The {what} cannot be reached ({kind}: {text})"[:1000]
    return "error", f"Reading the {what} failed: {kind}: {text}"[:1000]
