"""Answers a cluster_action request: an action run on every worker through the engine's own API.

Dask's ``client.run`` runs the by-value function of worker_calls.py in each worker (gc,
torch's empty_cache where the worker has torch and CUDA, or a reading of its allocator), with
the worker's RSS before and after; ``client.restart`` restarts the workers. Ray's API cannot do
either here: its tasks land in pooled worker processes that a task cannot choose, and its actors
run only their own methods, so a Ray action is answered done false with the reason, rather than
pretended. The request is the user's confirmation (the frontend asks first).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from ..protocol import RequestError
from .cluster_discovery import find_clusters
from .cluster_reading import cluster_name
from .deadline_call import DeadlineCalls, DeadlineExceeded
from .worker_calls import worker_action

RAY_UNREACHABLE = (
    "Ray cannot run this on its workers from here: its tasks land in whichever pooled worker "
    "process is free, so a task cannot reach each worker, and its actors run only their own "
    "methods. Run the cleanup inside your tasks or actors, or restart the runtime "
    "(ray.shutdown() and ray.init())."
)


def answer(
    args: Mapping[str, Any],
    user_ns: Mapping[str, Any] | None,
    calls: DeadlineCalls,
    keep_allocator: Callable[[str, str, dict[str, Any]], None] = lambda name, worker, reading: None,
) -> dict[str, Any]:
    """The ClusterActionResult of ``args`` (engine, cluster, action, timeout_s, as protocol.py checked them)."""
    engine, name, action = args["engine"], args["cluster"], args["action"]
    handle = _find(engine, name, user_ns)
    if handle is None:
        raise RequestError("refused", f"no {engine} cluster named {name!r} is attached to this kernel; nothing was run")
    if engine == "ray":
        return _result(engine, name, action, False, RAY_UNREACHABLE, [])
    if action == "restart":
        return _restart(handle, name, args["timeout_s"], calls)
    return _run_on_workers(handle, name, action, args["timeout_s"], calls, keep_allocator)


def _find(engine: str, name: str, user_ns: Mapping[str, Any] | None) -> Any:
    for found in find_clusters(user_ns):
        if found.engine != engine:
            continue
        if cluster_name(engine, found.handle) == name:
            return found.handle
    return None


def _result(engine: str, name: str, action: str, done: bool, message: str | None, workers: list) -> dict[str, Any]:
    return {
        "engine": engine,
        "cluster": name,
        "action": action,
        "done": done,
        "message": message[:1000] if message else None,
        "workers": workers,
    }


def _run_on_workers(
    client: Any,
    name: str,
    action: str,
    timeout_s: float,
    calls: DeadlineCalls,
    keep_allocator: Callable[[str, str, dict[str, Any]], None],
) -> dict[str, Any]:
    function = worker_action()

    def run() -> Any:
        try:
            return client.run(function, action, on_error="return")
        except TypeError:
            # distributed before 2023.3 has no on_error: one failing worker fails the call.
            return client.run(function, action)

    try:
        answers = calls.call(f"action {name}", run, timeout_s)
    except DeadlineExceeded:
        return _result("dask", name, action, False, f"The workers did not answer within {timeout_s:g} s.", [])
    except Exception as exc:
        return _result("dask", name, action, False, f"The action failed: {type(exc).__name__}: {exc}", [])
    workers = [_worker(str(address), reply) for address, reply in sorted(dict(answers).items())]
    for worker in workers:
        if worker["allocator"] is not None:
            keep_allocator(name, worker["id"], worker["allocator"])
    failed = [w["id"] for w in workers if not w["ok"]]
    message = f"It failed on {len(failed)} of {len(workers)} workers." if failed else None
    return _result("dask", name, action, not failed, message, workers)


def _worker(address: str, reply: Any) -> dict[str, Any]:
    if not isinstance(reply, Mapping):
        error = f"{type(reply).__name__}: {reply}" if isinstance(reply, BaseException) else "no answer"
        return {
            "id": address[:1024],
            "ok": False,
            "error": error[:1000],
            "torch": None,
            "host_before_bytes": None,
            "host_after_bytes": None,
            "gpu_reserved_before_bytes": None,
            "gpu_reserved_after_bytes": None,
            "allocator": None,
        }
    allocator = reply.get("allocator")
    return {
        "id": address[:1024],
        "ok": True,
        "error": None,
        "torch": bool(reply.get("torch")),
        "host_before_bytes": reply.get("host_before_bytes"),
        "host_after_bytes": reply.get("host_after_bytes"),
        "gpu_reserved_before_bytes": reply.get("gpu_reserved_before_bytes"),
        "gpu_reserved_after_bytes": reply.get("gpu_reserved_after_bytes"),
        "allocator": dict(allocator, read_at=time.time()) if isinstance(allocator, Mapping) else None,
    }


def _restart(client: Any, name: str, timeout_s: float, calls: DeadlineCalls) -> dict[str, Any]:
    try:
        calls.call(f"action {name}", lambda: client.restart(timeout=timeout_s), timeout_s + 1.0)
    except DeadlineExceeded:
        return _result("dask", name, "restart", False, f"The restart did not finish within {timeout_s:g} s.", [])
    except Exception as exc:
        return _result("dask", name, "restart", False, f"The restart failed: {type(exc).__name__}: {exc}", [])
    return _result("dask", name, "restart", True, None, [])
