"""Reads the Ray runtime the kernel initialised: its nodes, and on this machine its worker processes.

Ray's minimal install keeps no per-process memory the driver can read without the dashboard's
state API: ``ray.nodes()`` lists the nodes (alive or not, their address and resources), and on
the kernel's own node Ray's processes (the raylet, its workers) are the kernel's descendants,
which the sampler already reads from /proc (sampling/processes/: roles ray_worker, raylet,
ray_node). What that cannot show is said in the cluster's ``unseen``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .local_figures import LocalFigures, process_gpus, process_rss

# The process tree's roles of Ray's processes, and which of them run tasks.
RAY_ROLES = ("ray_worker", "raylet", "ray_node")
WORKER_ROLES = ("ray_worker",)

UNSEEN = (
    "Ray's telemetry here gives no memory for processes on other nodes: that needs Ray's state "
    "API (the dashboard of ray[default]), which this runtime does not serve; those nodes are "
    "listed without figures.",
    "Ray's object store (shared memory) is counted in the processes that map it, not on its own.",
)


def ray_name(ray: Any) -> str:
    """Ray's address (the GCS), which names the cluster; "ray" where the runtime does not say."""
    try:
        address = ray.get_runtime_context().gcs_address
    except Exception:
        address = None
    return address[:1024] if isinstance(address, str) and address else "ray"


def ray_version(ray: Any) -> str | None:
    """Ray's version, as the imported module gives it."""
    version = getattr(ray, "__version__", None)
    return version[:64] if isinstance(version, str) else None


def ray_dashboard(ray: Any) -> str | None:
    """The dashboard's address where the runtime started one (private attributes, read only)."""
    node = getattr(getattr(getattr(ray, "_private", None), "worker", None), "_global_node", None)
    try:
        url = getattr(node, "webui_url", None)
    except Exception:
        return None
    return url[:1024] if isinstance(url, str) and url else None


def read_nodes(ray: Any) -> tuple[list[Mapping[str, Any]], str | None]:
    """``ray.nodes()`` and the kernel's node id (call it off the kernel's main thread)."""
    nodes = ray.nodes()
    try:
        own = ray.get_runtime_context().get_node_id()
    except Exception:
        own = None
    return [node for node in nodes if isinstance(node, Mapping)], own if isinstance(own, str) else None


def ray_workers(nodes: list[Mapping[str, Any]], own_node: str | None, local: LocalFigures) -> list[dict[str, Any]]:
    """One ray_node entry per node, then the kernel's node's worker processes (memory from /proc)."""
    ray_processes = [entry for entry in local.processes.values() if entry.get("role") in RAY_ROLES]
    workers: list[dict[str, Any]] = []
    own_host = None
    for node in nodes:
        node_id = str(node.get("NodeID", ""))
        is_local = own_node is not None and node_id == own_node
        host = str(node.get("NodeManagerAddress") or node.get("NodeManagerHostname") or "")
        if is_local:
            own_host = host
        workers.append(_node(node, node_id, host, is_local, ray_processes if is_local else [], local))
    if own_node is not None:
        for entry in sorted(ray_processes, key=lambda e: e["pid"]):
            if entry.get("role") in WORKER_ROLES:
                workers.append(_process(entry, own_node, own_host or "", local))
    return workers


def _node(
    node: Mapping[str, Any],
    node_id: str,
    host: str,
    is_local: bool,
    processes: list[Mapping[str, Any]],
    local: LocalFigures,
) -> dict[str, Any]:
    raw = node.get("Resources")
    resources: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    cpus = resources.get("CPU")
    rss = [process_rss(entry) for entry in processes]
    gpus = [gpu for entry in processes for gpu in process_gpus(entry, local)]
    return {
        "id": node_id[:1024],
        "name": str(node.get("NodeName") or node.get("NodeManagerHostname") or node_id)[:1024],
        "role": "ray_node",
        "host": host[:1024],
        "pid": None,
        "local": is_local,
        "status": "alive" if node.get("Alive", True) else "dead",
        # On the kernel's node, the RSS of Ray's processes summed (the raylet and its workers).
        "memory_bytes": sum(r for r in rss if r is not None) if is_local and processes else None,
        "memory_source": "proc" if is_local else "engine",
        "memory_limit_bytes": None,
        "managed_bytes": None,
        "spilled_bytes": None,
        "nthreads": int(cpus) if isinstance(cpus, (int, float)) and cpus >= 0 else None,
        "gpus": gpus,
        "allocator": None,
    }


def _process(entry: Mapping[str, Any], node_id: str, host: str, local: LocalFigures) -> dict[str, Any]:
    pid = entry["pid"]
    return {
        "id": f"{node_id}:{pid}"[:1024],
        "name": str(entry.get("name") or pid)[:1024],
        "role": "ray_worker",
        "host": host[:1024],
        "pid": pid,
        "local": True,
        "status": "alive",
        "memory_bytes": process_rss(entry),
        "memory_source": "proc",
        "memory_limit_bytes": None,
        "managed_bytes": None,
        "spilled_bytes": None,
        "nthreads": None,
        "gpus": process_gpus(entry, local),
        "allocator": None,
    }
