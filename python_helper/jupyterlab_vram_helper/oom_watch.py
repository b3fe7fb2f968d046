"""What the kernel knows right after a cell died of out-of-memory.

``post_run_cell`` hands :class:`OomWatch` the failing exception's class name
and message text (never the exception); it reads the state of the device the
message names — allocator, NVML, host RAM — and what this notebook's
references hold there (the ``inspect`` walk of cleanup.py), and returns the
diagnosis of oom_diagnosis.py for the cell's record.

It runs on the kernel's main thread between cells, and only after an
out-of-memory error, so it may cost milliseconds (the namespace walk).
Nothing here imports torch: the figures come from a sample reading.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Optional

from .oom_diagnosis import STALE_HOLDERS_LISTED, OomDiagnosis, OomStaleHolder, OomState, diagnose
from .oom_message import OomProcess, parse_oom_message

HOST_DEVICE = "cpu"


class OomWatch:
    def __init__(
        self,
        read_figures: Callable[[], Mapping[str, Any]],
        inspect: Callable[[], Mapping[str, Any]],
        allocation_sites: Optional[Callable[[str], Any]] = None,
    ):
        """``read_figures()``: a fresh sample reading; ``inspect()``: an ``inspect`` result
        with ``held_bytes_by_device`` (cleanup.py's ``held_references``);
        ``allocation_sites(device)``: the top live sites there ("host" or "cuda:N") while
        allocations are recorded, as an :class:`OomAllocationSites` (allocation_sites.py)."""
        self._read_figures = read_figures
        self._inspect = inspect
        self._allocation_sites = allocation_sites

    def diagnose(self, type_name: str, message: str) -> Optional[OomDiagnosis]:
        facts = parse_oom_message(type_name, message)
        if facts is None:
            return None
        figures = self._read_figures()
        if facts["kind"] == "host":
            state = _host_state(figures)
            device_key = HOST_DEVICE
        else:
            index = facts["device_index"]
            if index is None:
                index = _only_gpu_index(figures)
            state = _gpu_state(figures, index)
            device_key = f"cuda:{index}" if index is not None else None
        if device_key is not None:
            state["stale_bytes"], state["stale_holders"] = _stale(self._inspect(), device_key)
            # What references hold is allocated memory: never more than the allocator holds.
            allocated = state.get("allocated_bytes")
            if device_key != HOST_DEVICE and allocated is not None and state["stale_bytes"] is not None:
                state["stale_bytes"] = min(state["stale_bytes"], allocated)
        diagnosis = diagnose(facts, state)
        if self._allocation_sites is not None:
            sites_device = "host" if device_key == HOST_DEVICE else device_key
            try:
                found = self._allocation_sites(sites_device) if sites_device is not None else None
            except Exception:
                found = None  # the diagnosis stands without it
            diagnosis["allocation_sites"] = found  # type: ignore[typeddict-unknown-key]
        return diagnosis


def _empty_state(device_index: Optional[int]) -> OomState:
    return {
        "device_index": device_index,
        "total_bytes": None,
        "free_bytes": None,
        "allocated_bytes": None,
        "reserved_bytes": None,
        "num_alloc_retries": None,
        "process_in_use_bytes": None,
        "other_processes": None,
        "stale_bytes": None,
        "stale_holders": [],
    }


def _host_state(figures: Mapping[str, Any]) -> OomState:
    state = _empty_state(None)
    host = figures.get("host") or {}
    state["total_bytes"], state["free_bytes"] = host_limit(host)
    state["process_in_use_bytes"] = host.get("rss_bytes")
    return state


def host_limit(host: Mapping[str, Any]) -> "tuple[Optional[int], Optional[int]]":
    """The RAM the kernel may use and what is left of it: its container's
    limit when one is set (the kernel is killed there, long before the node's
    RAM runs out), else the machine's total and available."""
    total, available = host.get("total_bytes"), host.get("available_bytes")
    container = host.get("container")
    if not isinstance(container, dict) or not isinstance(container.get("limit_bytes"), int):
        return total, available
    limit = container["limit_bytes"]
    usage = container.get("usage_bytes")
    rss = host.get("rss_bytes")
    if isinstance(usage, int) and isinstance(rss, int):
        usage = max(usage, rss)  # the kernel's RSS is charged to its cgroup
    left = max(0, limit - usage) if isinstance(usage, int) else None
    if left is not None and isinstance(available, int):
        left = min(left, available)  # a limit above what the node has left
    return limit, left if left is not None else available


def _only_gpu_index(figures: Mapping[str, Any]) -> Optional[int]:
    gpus = figures.get("gpus") or []
    return gpus[0]["index"] if len(gpus) == 1 else None


def _gpu_state(figures: Mapping[str, Any], index: Optional[int]) -> OomState:
    state = _empty_state(index)
    gpu = next((g for g in figures.get("gpus") or [] if g.get("index") == index), None)
    if gpu is None:
        return state
    torch = gpu.get("torch") or {}
    nvml = gpu.get("nvml") or {}
    state["total_bytes"] = nvml.get("total_bytes") or gpu.get("total_bytes")
    used, total = nvml.get("used_bytes"), nvml.get("total_bytes")
    state["free_bytes"] = total - used if used is not None and total is not None else None
    state["allocated_bytes"] = torch.get("allocated_bytes")
    state["reserved_bytes"] = torch.get("reserved_bytes")
    state["num_alloc_retries"] = torch.get("num_alloc_retries")
    state["process_in_use_bytes"] = nvml.get("process_used_bytes")
    processes = nvml.get("processes")
    if processes is not None:
        others: List[OomProcess] = [
            {"pid": p["pid"], "used_bytes": p["used_bytes"]} for p in processes if not p.get("this_process")
        ]
        state["other_processes"] = others
    return state


def _stale(inspected: Mapping[str, Any], device_key: str) -> "tuple[Optional[int], List[OomStaleHolder]]":
    """Bytes on ``device_key`` held by the notebook's names and hidden references, and the largest holders."""
    holders: List[OomStaleHolder] = []
    for entry in inspected.get("entries") or []:
        on_device = _on_device(entry, device_key)
        if on_device:
            holders.append({"holder": "name", "label": str(entry.get("name")), "bytes": on_device})
    for hidden in inspected.get("hidden") or []:
        on_device = _on_device(hidden, device_key)
        if on_device:
            holders.append({"holder": str(hidden.get("holder")), "label": str(hidden.get("label")), "bytes": on_device})
    holders.sort(key=lambda h: -h["bytes"])
    # Holders share storages (``x`` and ``Out[3]``, ``Out[3]`` and the last
    # result): each holder's figure is true alone, their sum is not.
    held = inspected.get("held_bytes_by_device")
    if isinstance(held, dict):
        value = held.get(device_key)
        total = int(value) if isinstance(value, int) else 0
    else:  # a plain inspect result: at least leave out what the names count already
        total = sum(_on_device(entry, device_key) for entry in inspected.get("entries") or [])
        for hidden in inspected.get("hidden") or []:
            named: Dict[str, Any] = hidden.get("named_bytes_by_device") or {}
            shared = named.get(device_key)
            total += max(0, _on_device(hidden, device_key) - (int(shared) if isinstance(shared, int) else 0))
    return total, holders[:STALE_HOLDERS_LISTED]


def _on_device(entry: Mapping[str, Any], device_key: str) -> int:
    by_device: Dict[str, Any] = entry.get("bytes_by_device") or {}
    value = by_device.get(device_key)
    return int(value) if isinstance(value, int) else 0
