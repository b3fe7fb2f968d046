"""Reads a Dask cluster's workers from the scheduler's own telemetry.

Each worker's heartbeat carries its metrics (its RSS read by psutil, the managed and the spilled
bytes, and a ``gpu`` metric where pynvml works on the worker), which the scheduler keeps; one
``identity`` call returns them all. The client's own periodic cache asks for no worker at all
(n_workers=0), so the poller asks the scheduler itself, on its thread, with a deadline
(deadline_call.py), never on the kernel's main thread, and never runs code on the workers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .local_figures import LocalFigures, local_hosts, own_pid, process_gpus

# The statuses a client has once it is closed, or while it closes.
CLOSED_STATUSES = ("closed", "closing")


def client_closed(client: Any) -> bool:
    """Whether the user closed the client (its status says so)."""
    return str(getattr(client, "status", "")) in CLOSED_STATUSES


def scheduler_address(client: Any) -> str | None:
    """The scheduler's address, which names the cluster; None where the client does not say."""
    scheduler = getattr(client, "scheduler", None)
    address = getattr(scheduler, "address", None)
    if isinstance(address, str) and address:
        return address
    info = getattr(client, "_scheduler_identity", None)
    address = info.get("address") if isinstance(info, dict) else None
    return address if isinstance(address, str) and address else None


def dashboard_link(identity: Mapping[str, Any]) -> str | None:
    """The dashboard's address from the scheduler's identity (its services' dashboard port).

    The client's own ``dashboard_link`` is not read: without a cluster object it asks the
    scheduler synchronously with no deadline, which hangs on a scheduler that does not answer.
    """
    services = identity.get("services")
    port = services.get("dashboard") if isinstance(services, Mapping) else None
    address = identity.get("address")
    if not isinstance(port, int) or isinstance(port, bool) or not isinstance(address, str):
        return None
    return f"http://{_host_of(address)}:{port}/status"[:1024]


def engine_version(modules: Mapping[str, Any]) -> str | None:
    """distributed's version, as the imported module gives it."""
    version = getattr(modules.get("distributed"), "__version__", None)
    return version[:64] if isinstance(version, str) else None


def read_identity(client: Any, deadline_s: float) -> dict[str, Any]:
    """The scheduler's identity with every worker (call it off the kernel's main thread).

    Versions of distributed without ``identity(n_workers=...)`` answer TypeError, and then the
    client's ``scheduler_info()``, which listed every worker in those versions, is read.
    """
    try:
        answer = client.sync(client.scheduler.identity, n_workers=-1, callback_timeout=deadline_s)
    except TypeError:
        answer = client.scheduler_info()
    if not isinstance(answer, dict):
        raise ValueError(f"the scheduler answered {type(answer).__name__}, not a dict")
    return answer


def local_pids(client: Any) -> dict[str, int]:
    """The worker address -> pid of a LocalCluster in this kernel (attributes read only; {} elsewhere).

    A process worker's nanny lives in the kernel and knows its worker's process; a thread
    worker runs in the kernel itself.
    """
    cluster = getattr(client, "cluster", None)
    workers = getattr(cluster, "workers", None)
    if not isinstance(workers, dict):
        return {}
    try:
        entries = list(workers.values())
    except RuntimeError:
        return {}
    pids: dict[str, int] = {}
    for worker in entries:
        process = getattr(getattr(worker, "process", None), "process", None)
        pid = getattr(process, "pid", None)
        address = getattr(worker, "worker_address", None)
        if process is None and getattr(worker, "process", None) is None and hasattr(worker, "nthreads"):
            # A thread worker (processes=False): the kernel's own process.
            pid, address = own_pid(), getattr(worker, "address", None)
        if isinstance(address, str) and isinstance(pid, int) and pid > 0:
            pids[address] = pid
    return pids


def dask_workers(identity: Mapping[str, Any], pids: Mapping[str, int], local: LocalFigures) -> list[dict[str, Any]]:
    """The ClusterWorker of each worker in the scheduler's identity, in address order."""
    workers = identity.get("workers")
    if not isinstance(workers, Mapping):
        return []
    return [
        _worker(str(address), info, pids, local)
        for address, info in sorted(workers.items())
        if isinstance(info, Mapping)
    ]


def _worker(address: str, info: Mapping[str, Any], pids: Mapping[str, int], local: LocalFigures) -> dict[str, Any]:
    raw_metrics = info.get("metrics")
    metrics: Mapping[str, Any] = raw_metrics if isinstance(raw_metrics, Mapping) else {}
    host = str(info.get("host") or _host_of(address))
    pid = pids.get(address)
    entry = local.processes.get(pid) if pid is not None else None
    is_local = pid is not None or host in local_hosts()
    # The driver's per-process figure is the worker's own; the engine's is the whole device's.
    gpus = process_gpus(entry, local) if entry is not None and entry.get("gpus") else _engine_gpus(info, metrics)
    limit = _count(info.get("memory_limit"))
    return {
        "id": address[:1024],
        "name": str(info.get("name", address))[:1024],
        "role": "dask_worker",
        "host": host[:1024],
        "pid": pid,
        "local": is_local,
        "status": str(info.get("status", "unknown"))[:64],
        "memory_bytes": _count(metrics.get("memory")),
        "memory_source": "engine",
        # Dask's memory_limit of 0 (or None) means no limit.
        "memory_limit_bytes": limit or None,
        "managed_bytes": _managed(metrics),
        "spilled_bytes": _spilled(metrics),
        "nthreads": _count(info.get("nthreads")),
        "gpus": gpus,
        "allocator": None,
    }


def dask_unseen(workers: list[dict[str, Any]]) -> list[str]:
    """What the scheduler's telemetry cannot show of these workers, one sentence each."""
    unseen = []
    remote = [w for w in workers if w["pid"] is None]
    if remote:
        unseen.append(
            f"{_workers(len(remote))} not started by this kernel: Dask's scheduler does not report a "
            "worker's pid, so their figures cannot be checked against the process itself."
        )
    without_gpu = [w for w in workers if not w["gpus"]]
    if without_gpu:
        unseen.append(
            f"{_workers(len(without_gpu))} without GPU figures: a Dask worker reports its GPU only "
            "where pynvml works in it, and a worker without a GPU looks the same."
        )
    return unseen


def _workers(count: int) -> str:
    return "1 worker" if count == 1 else f"{count} workers"


def _host_of(address: str) -> str:
    """The host part of a ``tcp://host:port`` address."""
    rest = address.split("://", 1)[-1]
    return rest.rsplit(":", 1)[0] if ":" in rest else rest


def _count(value: Any) -> int | None:
    """A byte or thread count where the engine gave a non-negative number; None otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or value < 0:
        return None
    return int(value)


def _managed(metrics: Mapping[str, Any]) -> int | None:
    # Named managed_bytes since distributed 2021.11, managed_in_memory before.
    for key in ("managed_bytes", "managed_in_memory", "managed"):
        if key in metrics:
            return _count(metrics[key])
    return None


def _spilled(metrics: Mapping[str, Any]) -> int | None:
    # {"memory": ..., "disk": ...} in recent versions (what was spilled, in memory and on disk),
    # spilled_nbytes before; the bytes on disk are what the worker spilled.
    spilled = metrics.get("spilled_bytes", metrics.get("spilled_nbytes"))
    if isinstance(spilled, Mapping):
        return _count(spilled.get("disk"))
    return _count(spilled)


def _engine_gpus(info: Mapping[str, Any], metrics: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The device the worker's pynvml reports (distributed's diagnostics/nvml.py), scope device."""
    gpu_metrics = metrics.get("gpu")
    gpu_info = info.get("gpu")
    if not isinstance(gpu_metrics, Mapping) and not isinstance(gpu_info, Mapping):
        return []
    gpu_metrics = gpu_metrics if isinstance(gpu_metrics, Mapping) else {}
    gpu_info = gpu_info if isinstance(gpu_info, Mapping) else {}
    utilization = gpu_metrics.get("utilization")
    name = gpu_info.get("name")
    return [
        {
            "index": None,
            "name": name if isinstance(name, str) else None,
            "used_bytes": _count(gpu_metrics.get("memory-used")),
            "total_bytes": _count(gpu_info.get("memory-total")),
            "scope": "device",
            "utilization_percent": float(utilization)
            if isinstance(utilization, (int, float)) and 0 <= utilization <= 100
            else None,
        }
    ]
