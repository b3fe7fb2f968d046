"""Finds what the notebook started through an engine and can release: the ``release_engine`` listing.

A Dask LocalCluster, a multiprocessing pool, a DataLoader iterator's workers,
a Ray runtime or a vLLM engine each hold processes (and their memory) that
deleting a name does not end: the engine has to be closed. This module finds
them, by what the kernel has already loaded (``sys.modules``, never an
import) and what the notebook's namespace holds, and says which processes of
the kernel's tree each one holds.

What is found is kept as names, pids and words (:class:`Found`), never as
the objects: :func:`locate` finds an object again, by kind and name, when a
release needs it, and the release lets go of it before it answers.
Attributes are read from instances' ``__dict__`` where the engine keeps
plain state, so that no property of the user's runs.
"""

from __future__ import annotations

import gc
import sys
import types
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:  # the message shapes, for annotations only (protocol_types.py)
    from ..protocol_types import Releasable, ReleasableProcess

KIND_RAY = "ray"
KIND_DASK = "dask"
KIND_POOL = "mp_pool"
KIND_DATALOADER = "dataloader_iter"
KIND_VLLM = "vllm"

# The name of what no name of the notebook holds (the Dask client that distributed keeps as its default).
DEFAULT_CLIENT = "<default client>"
# The processes whose roles say an engine started them, for engines whose objects name no pid.
_ROLES = {
    KIND_RAY: frozenset({"raylet", "ray_worker", "ray_node"}),
    KIND_DASK: frozenset({"dask_worker", "dask_nanny"}),
    KIND_VLLM: frozenset({"vllm_engine"}),
}
# Generators are looked into this deep for a DataLoader iterator (a generator over ``enumerate(iterator)``).
_GENERATOR_DEPTH = 2
_VLLM_TYPES = frozenset({"LLM", "LLMEngine", "AsyncLLMEngine", "AsyncLLM"})
_CLOSED = frozenset({"closed", "closing", "failed"})


class Found(NamedTuple):
    """One releasable as found: what names it, and how to tell its processes (no user object)."""

    kind: str
    name: str
    label: str
    pids: frozenset[int]  # the processes its objects name; their descendants are its too
    roles: frozenset[str]  # where its objects name none: the roles of its processes


def namespace_items(user_ns: dict[str, Any]) -> list[tuple[str, Any]]:
    """The notebook's names and values, without IPython's own (``_``, ``_3``, ``In``, ``Out``)."""
    return [
        (k, v)
        for k, v in list(user_ns.items())
        if isinstance(k, str) and not k.startswith("_") and k not in ("In", "Out", "exit", "quit", "get_ipython")
    ]


def find_releasables(user_ns: dict[str, Any]) -> list[Found]:
    """Everything releasable now, for each engine the kernel has loaded."""
    items = namespace_items(user_ns)
    found: list[Found] = []
    for finder in (_pools, _dataloader_iterators, _dask, _ray, _vllm):
        try:
            found.extend(finder(items))
        except Exception:
            # An engine of another version than the one read here: its releasables are not offered.
            continue
    return found


def locate(kind: str, name: str, user_ns: dict[str, Any]) -> list[Any]:
    """The objects a release of ``kind`` and ``name`` acts on, found anew ([] when there is none now)."""
    items = namespace_items(user_ns)
    if kind == KIND_POOL:
        return [v for k, v in items if k == name and _is_live_pool(v)]
    if kind == KIND_DATALOADER:
        return [holder for holder_name, holder in _iterator_holders(items) if holder_name == name]
    if kind == KIND_DASK:
        return _dask_group(items, name)
    if kind == KIND_RAY:
        ray = sys.modules.get("ray")
        return [ray] if name == KIND_RAY and _ray_initialized(ray) else []
    if kind == KIND_VLLM:
        return [v for k, v in items if k == name and _is_vllm_engine(v)]
    return []


# -- multiprocessing pools ----------------------------------------------------------


def _pools(items: list[tuple[str, Any]]) -> Iterator[Found]:
    for name, value in items:
        if _is_live_pool(value):
            pids = _process_pids(_fields(value).get("_pool"))
            method = type(_fields(value).get("_ctx")).__name__.replace("Context", "").lower() or "?"
            yield Found(KIND_POOL, name, f"multiprocessing Pool ({len(pids)} workers, {method})", pids, frozenset())


def _is_live_pool(value: Any) -> bool:
    module = sys.modules.get("multiprocessing.pool")
    pool_class = getattr(module, "Pool", None)
    thread_pool = getattr(module, "ThreadPool", None)
    if pool_class is None or not isinstance(value, pool_class) or isinstance(value, thread_pool or ()):
        return False
    # Pool keeps its state as a plain attribute: RUN, CLOSE (still working off its queue) or TERMINATE.
    return _fields(value).get("_state") in ("RUN", "CLOSE")


# -- DataLoader iterators -----------------------------------------------------------


def _iterator_class() -> Any:
    module = sys.modules.get("torch.utils.data.dataloader")
    return getattr(module, "_MultiProcessingDataLoaderIter", None)


def _is_live_iterator(value: Any, cls: Any) -> bool:
    return cls is not None and isinstance(value, cls) and not _fields(value).get("_shutdown", True)


def _iterator_holders(items: list[tuple[str, Any]]) -> Iterator[tuple[str, Any]]:
    """(name, holder) of each live iterator: the iterator itself, a DataLoader holding its
    persistent one (name ``dl._iterator``), or a generator whose frame holds one."""
    cls = _iterator_class()
    if cls is None:
        return
    for name, value in items:
        if _is_live_iterator(value, cls):
            yield name, value
        elif isinstance(value, types.GeneratorType):
            if _generator_iterator(value, cls) is not None:
                yield name, value
        elif _is_live_iterator(_fields(value).get("_iterator"), cls) and type(value).__name__ == "DataLoader":
            yield f"{name}._iterator", value


def iterator_of(holder: Any) -> Any:
    """The live DataLoader iterator a holder (iterator, DataLoader, generator) holds, or None."""
    cls = _iterator_class()
    if _is_live_iterator(holder, cls):
        return holder
    if isinstance(holder, types.GeneratorType):
        return _generator_iterator(holder, cls)
    iterator = _fields(holder).get("_iterator")
    return iterator if _is_live_iterator(iterator, cls) else None


def _generator_iterator(generator: Any, cls: Any) -> Any:
    """The live iterator a suspended generator holds, in a local or on its frame's value stack."""
    if getattr(generator, "gi_frame", None) is None:
        return None  # it ended: it holds nothing
    # A suspended generator's referents are its frame's locals and value stack, where a ``for``
    # loop keeps its iterator (the frame object itself does not list them: the generator owns them).
    seen = {id(generator)}
    level = [generator]
    for _ in range(_GENERATOR_DEPTH):
        following = []
        for obj in level:
            for referent in gc.get_referents(obj):
                if _is_live_iterator(referent, cls):
                    return referent
                if id(referent) not in seen and not isinstance(referent, (type, types.ModuleType, dict)):
                    seen.add(id(referent))
                    following.append(referent)
        level = following
    return None


def _dataloader_iterators(items: list[tuple[str, Any]]) -> Iterator[Found]:
    for name, holder in _iterator_holders(items):
        iterator = iterator_of(holder)
        pids = _process_pids(_fields(iterator).get("_workers"))
        where = "a generator" if isinstance(holder, types.GeneratorType) else "a DataLoader" if "." in name else None
        label = f"DataLoader iterator ({len(pids)} workers)" + (f", held by {where}" if where else "")
        yield Found(KIND_DATALOADER, name, label, pids, frozenset())


# -- Dask ---------------------------------------------------------------------------


def _dask_classes() -> tuple[Any, Any]:
    client = getattr(sys.modules.get("distributed.client"), "Client", None)
    cluster = getattr(sys.modules.get("distributed.deploy.cluster"), "Cluster", None)
    return client, cluster


def _open(obj: Any) -> bool:
    status = getattr(obj, "status", None)
    return str(getattr(status, "name", status)) not in _CLOSED


def _dask_groups(items: list[tuple[str, Any]]) -> list[tuple[str, list[Any], Any]]:
    """(name, clients, cluster) per cluster (or client without one), named by a client's name first."""
    client_class, cluster_class = _dask_classes()
    if client_class is None:
        return []
    groups: dict[int, tuple[str, list[Any], Any]] = {}

    def add(name: str, client: Any, cluster: Any) -> None:
        # The first name found wins: the clients' names come first, as closing the client
        # is what the notebook did to start it.
        key = id(cluster) if cluster is not None else id(client)
        _, clients, _ = groups.setdefault(key, (name, [], cluster))
        if client is not None and all(c is not client for c in clients):
            clients.append(client)

    for name, value in items:
        if isinstance(value, client_class) and _open(value):
            add(name, value, _fields(value).get("cluster"))
    for name, value in items:
        if cluster_class is not None and isinstance(value, cluster_class) and _open(value):
            add(name, None, value)
    default = _default_client()
    if default is not None and _open(default):
        add(DEFAULT_CLIENT, default, _fields(default).get("cluster"))
    return list(groups.values())


def _default_client() -> Any:
    getter = getattr(sys.modules.get("distributed.client"), "_get_global_client", None)
    try:
        return getter() if getter is not None else None
    except Exception:
        return None


def _dask_group(items: list[tuple[str, Any]], name: str) -> list[Any]:
    for group_name, clients, cluster in _dask_groups(items):
        if group_name == name:
            return [*clients, *([cluster] if cluster is not None else [])]
    return []


def _dask(items: list[tuple[str, Any]]) -> Iterator[Found]:
    for name, clients, cluster in _dask_groups(items):
        pids = _nanny_pids(cluster)
        what = type(cluster).__name__ if cluster is not None else "no cluster of this kernel"
        count = len(_fields(cluster).get("workers") or {}) if cluster is not None else 0
        label = f"Dask client ({what}, {count} workers)" if clients else f"Dask {what} ({count} workers)"
        yield Found(KIND_DASK, name, label, pids, frozenset() if pids else _ROLES[KIND_DASK])


def _nanny_pids(cluster: Any) -> frozenset[int]:
    """The worker processes a LocalCluster's nannies started (a nanny lives in the kernel)."""
    pids = set()
    for worker in list((_fields(cluster).get("workers") or {}).values()):
        process = _fields(_fields(worker).get("process")).get("process")
        inner = _fields(process).get("_process")
        pid = getattr(inner, "pid", None)
        if type(pid) is int:
            pids.add(pid)
    return frozenset(pids)


# -- Ray and vLLM -------------------------------------------------------------------


def _ray_initialized(ray: Any) -> bool:
    check = getattr(ray, "is_initialized", None)
    return bool(check()) if callable(check) else False


def _ray(items: list[tuple[str, Any]]) -> Iterator[Found]:
    if _ray_initialized(sys.modules.get("ray")):
        yield Found(KIND_RAY, KIND_RAY, "Ray runtime (ray.init)", frozenset(), _ROLES[KIND_RAY])


def _is_vllm_engine(value: Any) -> bool:
    cls = type(value)
    module = getattr(cls, "__module__", "")
    return isinstance(module, str) and module.startswith("vllm") and cls.__name__ in _VLLM_TYPES


def _vllm(items: list[tuple[str, Any]]) -> Iterator[Found]:
    if "vllm" not in sys.modules:
        return
    for name, value in items:
        if _is_vllm_engine(value):
            yield Found(KIND_VLLM, name, f"vLLM {type(value).__name__}", frozenset(), _ROLES[KIND_VLLM])


# -- processes --------------------------------------------------------------------


def _fields(obj: Any) -> dict[str, Any]:
    """An instance's own attributes (no property, no __getattr__ of the user's runs)."""
    fields = getattr(obj, "__dict__", None) if obj is not None else None
    return fields if type(fields) is dict else {}


def _process_pids(processes: Any) -> frozenset[int]:
    """The pids of a list of multiprocessing ``Process`` objects, read from their ``_popen``."""
    pids = set()
    for process in list(processes or ()):
        pid = getattr(_fields(process).get("_popen"), "pid", None)
        if type(pid) is int:
            pids.add(pid)
    return frozenset(pids)


def tree_processes(found: Found, tree: Any) -> list[dict[str, Any]]:
    """The entries of the tree (a sample's ``processes``) that ``found`` holds: its pids or
    roles, and their descendants."""
    entries = list((tree or {}).get("processes") or [])
    mine: set[int] = set()
    for entry in entries:  # tree order: a parent comes before its children
        if entry["pid"] in found.pids or entry["role"] in found.roles or entry["ppid"] in mine:
            mine.add(entry["pid"])
    return [entry for entry in entries if entry["pid"] in mine]


def releasable(found: Found, tree: Any) -> Releasable:
    """The wire entry of ``found``, with its processes' memory from ``tree``."""
    entries = tree_processes(found, tree)
    gpus: dict[int, int | None] = {}
    for entry in entries:
        for gpu in entry["gpus"]:
            used = gpu["used_bytes"]
            before = gpus.get(gpu["index"], 0)
            gpus[gpu["index"]] = None if used is None or before is None else before + used
    return {
        "kind": found.kind,
        "name": found.name,
        "label": found.label,
        "processes": process_names(entries),
        "host_bytes": sum(entry["host"]["host_bytes"] or 0 for entry in entries),
        "gpus": [{"index": index, "used_bytes": used} for index, used in sorted(gpus.items())],
    }


def process_names(entries: list[dict[str, Any]]) -> list[ReleasableProcess]:
    """What names each process of ``entries``: pid, start time, role."""
    return [{"pid": e["pid"], "start_time": e["start_time"], "role": e["role"]} for e in entries]
