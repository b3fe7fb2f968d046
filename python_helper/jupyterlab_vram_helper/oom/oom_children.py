"""The kernel's own processes in an out-of-memory diagnosis: children that hold the failing GPU
or host RAM, and DataLoader workers the out-of-memory killer took.

A notebook that starts a vLLM engine, a pool or DataLoader workers can run
out of memory because of what its own children hold: NVML lists them as
"other processes", yet the remedy is not someone else's, it is this
kernel's (stop the child, or release the engine that started it). And a
worker killed for lack of host memory ends the cell with "DataLoader worker
(pid N) is killed by signal: Killed", a message that says nothing of memory:
the process tree's last reading of the workers says how much they held, and
whether they grew as they ran (copy-on-write of the dataset's Python objects,
whose reference counts every read writes).

The figures come from the tree's readings (process_tree.py's
:class:`Seen`, numbers only); nothing here reads a process or a user object.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:  # the message shapes, for annotations only (protocol_types.py)
    from ..protocol_types import OomDataLoaderWorkers, OomRelease, OomWorker
    from ..sampling.processes.process_tree import Seen

REMEDY_RELEASE = "release_engine"
REMEDY_STOP = "stop_process"
# The default snippet offered for workers that ran out of host memory (schema/plugin.json).
WORKER_MEMORY_SNIPPET = "dataloader-worker-memory"
# USS growth counts as copy-on-write from this share of what the workers hold, and this much.
COPY_ON_WRITE_SHARE = 0.25
COPY_ON_WRITE_MIN_BYTES = 64 << 20
_WORKER_ROLE = "dataloader_worker"
# For a host out-of-memory error, a process of the tree is named from this much memory of its own.
HOST_CHILD_MIN_BYTES = 16 << 20


class OomChild(TypedDict):
    """A process of the kernel's tree that holds memory on the failing device."""

    pid: int
    start_time: int
    role: str
    used_bytes: int | None
    release: OomRelease | None


def gpu_children(
    seen: Iterable[Seen], device_index: int | None, releases: Mapping[int, OomRelease]
) -> dict[int, OomChild]:
    """The living processes of the tree that NVML listed on ``device_index``, by pid."""
    if device_index is None:
        return {}
    return {
        process.pid: _child(process, used, releases)
        for process in seen
        if process.ended_at is None
        for index, used in process.gpus
        if index == device_index
    }


def host_children(seen: Iterable[Seen], releases: Mapping[int, OomRelease]) -> dict[int, OomChild]:
    """The living processes of the tree that hold HOST_CHILD_MIN_BYTES or more of host memory
    of their own (USS, or RSS where that is all the tree read), by pid."""
    return {
        process.pid: _child(process, process.host_bytes, releases)
        for process in seen
        if process.ended_at is None and (process.host_bytes or 0) >= HOST_CHILD_MIN_BYTES
    }


def _child(process: Seen, used: int | None, releases: Mapping[int, OomRelease]) -> OomChild:
    return {
        "pid": process.pid,
        "start_time": process.start_time,
        "role": process.role,
        "used_bytes": used,
        "release": releases.get(process.pid),
    }


def mark_child(entry: dict[str, Any], child: OomChild) -> None:
    """Mark an ``other_processes`` entry as the kernel's child, with what the frontend can offer."""
    release = child["release"]
    entry["child_of_kernel"] = True
    entry["start_time"] = child["start_time"]
    entry["role"] = child["role"]
    entry["remedies"] = [REMEDY_RELEASE, REMEDY_STOP] if release is not None else [REMEDY_STOP]
    entry["release"] = release


def dataloader_workers(killed: list[int], signal: str, seen: Iterable[Seen]) -> OomDataLoaderWorkers:
    """What the killed workers and their siblings held at the tree's last reading of each."""
    workers = [_worker(process, process.pid in killed) for process in seen if _is_worker(process, killed)]
    workers.sort(key=lambda w: -(w["host_bytes"] or 0))
    held = [w["host_bytes"] for w in workers if w["host_bytes"] is not None]
    growths = [w["uss_growth_bytes"] for w in workers if w["uss_growth_bytes"] is not None]
    total = sum(held) if held else None
    growth = sum(growths) if growths else None
    copy_on_write = (
        total is not None
        and growth is not None
        and growth >= COPY_ON_WRITE_MIN_BYTES
        and growth >= COPY_ON_WRITE_SHARE * total
    )
    return {
        "killed_pids": list(killed),
        "signal": signal,
        "workers": workers,
        "workers_host_bytes": total,
        "uss_growth_bytes": growth,
        "copy_on_write": copy_on_write,
        "snippet": WORKER_MEMORY_SNIPPET,
    }


def _is_worker(process: Seen, killed: list[int]) -> bool:
    return process.pid in killed or process.role == _WORKER_ROLE


def _worker(process: Seen, killed: bool) -> OomWorker:
    growth = None
    if process.uss_bytes is not None and process.first_uss_bytes is not None:
        growth = max(0, process.uss_bytes - process.first_uss_bytes)
    return {
        "pid": process.pid,
        "start_time": process.start_time,
        "killed": killed,
        "host_bytes": process.host_bytes,
        "uss_bytes": process.uss_bytes,
        "uss_growth_bytes": growth,
        "read_at": process.rollup_at,
    }
