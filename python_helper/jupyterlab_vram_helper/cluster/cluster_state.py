"""Builds a cluster's ClusterState from one reading, and decides whether two readings differ.

The cluster message goes out only after a reading that changed something (cluster_poller.py),
so the comparison here follows the sampler's: a membership or status change, or a figure that
moved by more than ``change_threshold_bytes``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

# The actions each engine's API can run on its workers (cluster_actions.py says what Ray cannot).
ACTIONS = {"dask": ["gc", "empty_cache", "read_allocators", "restart"], "ray": []}
# A Ray node's figure already holds its worker processes' memory, so they are not summed again.
NOT_SUMMED_ROLES = ("ray_worker",)
FIGURES = ("memory_bytes", "memory_limit_bytes", "managed_bytes", "spilled_bytes")


def totals(workers: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The ClusterTotals of a cluster's workers."""
    summed = [w for w in workers if w["role"] not in NOT_SUMMED_ROLES]
    gpus = [gpu for w in summed for gpu in w["gpus"]]
    return {
        "workers": len(summed),
        "paused": sum(1 for w in summed if w["status"] == "paused"),
        "memory_bytes": _sum_all([w["memory_bytes"] for w in summed]),
        "memory_limit_bytes": _sum_all([w["memory_limit_bytes"] for w in summed]),
        "spilled_bytes": _sum_any([w["spilled_bytes"] for w in summed]),
        "gpu_used_bytes": _sum_any([gpu["used_bytes"] for gpu in gpus]) if gpus else None,
        "gpu_total_bytes": _sum_any([gpu["total_bytes"] for gpu in gpus]) if gpus else None,
    }


def _sum_all(values: list[int | None]) -> int | None:
    """The sum, or None where one is unknown (an empty cluster sums to 0)."""
    return None if any(v is None for v in values) else sum(v for v in values if v is not None)


def _sum_any(values: list[int | None]) -> int | None:
    """The sum of the known ones, or None where none is known."""
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def state_changed(before: Mapping[str, Any] | None, now: Mapping[str, Any], threshold: int) -> bool:
    """Whether ``now`` differs from ``before`` enough to send: status, membership, or figures."""
    if before is None:
        return True
    if before["status"] != now["status"] or before["message"] != now["message"]:
        return True
    old = {w["id"]: w for w in before["workers"]}
    new = {w["id"]: w for w in now["workers"]}
    if old.keys() != new.keys():
        return True
    return any(_worker_changed(old[key], new[key], threshold) for key in new)


def _worker_changed(before: Mapping[str, Any], now: Mapping[str, Any], threshold: int) -> bool:
    if before["status"] != now["status"] or before["allocator"] != now["allocator"]:
        return True
    if any(_moved(before[key], now[key], threshold) for key in FIGURES):
        return True
    old_gpus = [gpu["used_bytes"] for gpu in before["gpus"]]
    new_gpus = [gpu["used_bytes"] for gpu in now["gpus"]]
    return len(old_gpus) != len(new_gpus) or any(
        _moved(a, b, threshold) for a, b in zip(old_gpus, new_gpus, strict=True)
    )


def _moved(a: int | None, b: int | None, threshold: int) -> bool:
    if a is None or b is None:
        return a is not b
    return abs(a - b) > threshold
