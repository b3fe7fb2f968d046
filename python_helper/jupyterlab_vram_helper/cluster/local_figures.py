"""What the kernel's own sampler knows about processes on this machine, for a cluster's local workers.

The sampler reads the kernel's process tree (sampling/processes/) and NVML's per-process list at
every tick. A worker whose pid is in that tree (a LocalCluster's workers, Ray's local workers
are the kernel's descendants) gets its GPU bytes from the driver's per-process figure, which is
exact where the engine's own GPU metric is the whole device's use.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from typing import Any, NamedTuple


class LocalFigures(NamedTuple):
    """The sampler's last reading, reduced to what the cluster readings need."""

    # The tree's entries (TreeProcess) by pid.
    processes: Mapping[int, Mapping[str, Any]]
    # (name, total bytes) of each GPU by its index, from the sample's gpus.
    gpus: Mapping[int, tuple[str | None, int | None]]


EMPTY = LocalFigures({}, {})


def local_figures(figures: Mapping[str, Any] | None) -> LocalFigures:
    """The process entries and GPU totals of one sampler reading (``Figures``); EMPTY without one."""
    if not figures:
        return EMPTY
    tree = figures.get("processes") or {}
    processes = {entry["pid"]: entry for entry in tree.get("processes") or () if isinstance(entry.get("pid"), int)}
    gpus = {gpu["index"]: (gpu.get("name"), gpu.get("total_bytes")) for gpu in figures.get("gpus") or ()}
    return LocalFigures(processes, gpus)


def process_gpus(entry: Mapping[str, Any] | None, local: LocalFigures) -> list[dict[str, Any]]:
    """A local process's GPUs (ClusterWorkerGpu, scope process), from NVML's per-pid figures."""
    if entry is None:
        return []
    gpus = []
    for gpu in entry.get("gpus") or ():
        name, total = local.gpus.get(gpu["index"], (None, None))
        gpus.append(
            {
                "index": gpu["index"],
                "name": name,
                "used_bytes": gpu.get("used_bytes"),
                "total_bytes": total,
                "scope": "process",
                "utilization_percent": None,
            }
        )
    return gpus


def process_rss(entry: Mapping[str, Any] | None) -> int | None:
    """A local process's RSS, as /proc/<pid>/stat gave it at the tree's last reading."""
    if entry is None:
        return None
    host = entry.get("host") or {}
    rss = host.get("rss_bytes")
    return rss if isinstance(rss, int) else None


_local_hosts: frozenset[str] | None = None


def local_hosts() -> frozenset[str]:
    """The names and addresses of this machine that a worker's host may carry (looked up once)."""
    global _local_hosts
    if _local_hosts is None:
        names = {"127.0.0.1", "localhost", "::1", "0.0.0.0"}
        try:
            hostname = socket.gethostname()
            names.add(hostname)
            names.add(socket.gethostbyname(hostname))
        except OSError:
            pass
        _local_hosts = frozenset(names)
    return _local_hosts


def own_pid() -> int:
    """The kernel's pid (thread workers of a LocalCluster run in it)."""
    return os.getpid()
