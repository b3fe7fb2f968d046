"""What the kernel knows right after a cell died of out-of-memory.

``post_run_cell`` hands :class:`OomWatch` the failing exception's class name
and message text (never the exception); it reads the state of the device the
message names (its allocator, NVML and host RAM) and what this notebook's
references hold there (the ``inspect`` walk of cleanup.py), and returns the
diagnosis of oom_diagnosis.py for the cell's record.

It runs on the kernel's main thread between cells, and only after an
out-of-memory error, so it may cost the milliseconds that the namespace walk
takes. Nothing here imports torch, because the figures come from a sample
reading.

The names the failing cell works with (its model, its optimizer, its data)
are not stale, because deleting them is no fix for a cell that needs them.
:func:`failing_cell_names` tells them apart from the rest, and they are left
out of what the diagnosis calls stale.
"""

from __future__ import annotations

import re
import sys
import types
from collections.abc import Callable, Mapping, Set
from typing import TYPE_CHECKING, Any

from ..sampling.readers import torch_cuda
from . import error_frames
from .cell_outcome import SCANNED_MESSAGE_CHARS, error_chain, error_message
from .oom_children import dataloader_workers, gpu_children, host_children
from .oom_diagnosis import STALE_HOLDERS_LISTED, OomState, diagnose
from .oom_message import (
    KIND_CUDA,
    KIND_CUDA_LIBRARY,
    KIND_MPS,
    KIND_XLA,
    OomProcess,
    old_torch_message,
    parse_oom_message,
)

# The message shapes in protocol_types.py are needed for annotations only.
if TYPE_CHECKING:
    from ..protocol_types import OomDiagnosis, OomStaleHolder

HOST_DEVICE = "cpu"
# Code that a frame makes and runs on the spot, such as a comprehension (before
# Python 3.12 comprehensions have code objects of their own), is looked into
# this many levels deep.
MAX_CODE_DEPTH = 4
# At most this many notebook functions are looked into for the names they read.
MAX_FUNCTIONS = 64
# The code objects with these names run where they are made, so what they read
# counts as read by the code that makes them.
_RUN_IN_PLACE = frozenset({"<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>", "<lambda>"})
# The instructions that read a global (or, at a cell's top level, a name of
# the notebook's namespace), and those that bind or delete one.
_READ_OPS = frozenset(
    {
        "LOAD_NAME",
        "LOAD_GLOBAL",
        # Python 3.12 reads a global in a class body with this instruction.
        "LOAD_FROM_DICT_OR_GLOBALS",
    }
)
_BIND_OPS = frozenset({"STORE_NAME", "STORE_GLOBAL", "DELETE_NAME", "DELETE_GLOBAL"})


class OomWatch:
    """Reads what the kernel knows right after a cell ran out of memory and builds the diagnosis."""

    def __init__(
        self,
        read_figures: Callable[[], Mapping[str, Any]],
        inspect: Callable[[], Mapping[str, Any]],
        allocation_sites: Callable[[str], Any] | None = None,
        names_in_use: Callable[[str, str], Set[str] | None] | None = None,
        processes: Callable[[], list[Any]] | None = None,
        releases: Callable[[Any], Mapping[int, Any]] | None = None,
    ):
        """Take the readers that the diagnosis draws on.

        ``read_figures()`` returns a fresh sample reading. ``inspect()`` returns
        an ``inspect`` result with ``held_bytes_by_device``, as cleanup.py's
        ``held_references`` gives it. ``allocation_sites(device)`` returns the
        top live sites on a device ("host" or "cuda:N") while allocations are
        recorded, as an :class:`OomAllocationSites` of allocation_sites.py.
        ``names_in_use(type name, message)`` returns the names that the failing
        cell's code reads or assigns, or None when they are not known; it is
        :func:`failing_cell_names` unless another is given. ``processes()``
        returns the process tree's last reading of each process, those that
        ended lately included (process_tree.py's ``recently_seen``), and
        ``releases(tree)`` maps a pid of ``tree`` to the releasable that holds
        it (kind and name, for a ``release_engine`` request).
        """
        self._names_in_use = names_in_use if names_in_use is not None else failing_cell_names
        self._read_figures = read_figures
        self._inspect = inspect
        self._allocation_sites = allocation_sites
        self._processes = processes
        self._releases = releases

    def diagnose(self, type_name: str, message: str) -> OomDiagnosis | None:
        """Diagnose the error with this class name and message, or return None
        when its message is not one that the diagnosis can read."""
        facts = parse_oom_message(type_name, message)
        if facts is None:
            return None
        figures = self._read_figures()
        if facts["kind"] == "host":
            state = _host_state(figures)
            state["children"] = self._host_children(figures)
            device_key = HOST_DEVICE
        elif facts["kind"] in (KIND_MPS, KIND_XLA):
            # Neither NVML nor torch.cuda reads this device, so the message's
            # figures are all there is.
            state = _empty_state(None)
            device_key = None
        else:
            index = facts["device_index"]
            if index is None:
                index = _only_gpu_index(figures)
            state = _gpu_state(figures, index)
            state["children"] = self._children(figures, index)
            device_key = f"cuda:{index}" if index is not None else None
        if device_key is not None:
            in_use = self._in_use(type_name, message)
            state["stale_bytes"], state["stale_holders"], state["in_use_holders"] = _stale(
                self._inspect(), device_key, in_use
            )
            # What references hold is allocated memory, so it is never more
            # than the allocator has allocated.
            allocated = state.get("allocated_bytes")
            if device_key != HOST_DEVICE and allocated is not None and state["stale_bytes"] is not None:
                state["stale_bytes"] = min(state["stale_bytes"], allocated)
        diagnosis = diagnose(facts, state)
        if facts["killed_worker_pids"]:
            self._explain_workers(diagnosis, facts["killed_worker_pids"], facts["worker_signal"] or "")
        cuda = facts["kind"] in (KIND_CUDA, KIND_CUDA_LIBRARY)
        diagnosis["expandable_segments"] = expandable_segments_known(message) if cuda else None  # type: ignore[typeddict-unknown-key]
        diagnosis["expandable_segments_on"] = expandable_segments_on() if cuda else None  # type: ignore[typeddict-unknown-key]
        if self._allocation_sites is not None:
            sites_device = "host" if device_key == HOST_DEVICE else device_key
            try:
                found = self._allocation_sites(sites_device) if sites_device is not None else None
            except Exception:
                found = None  # The diagnosis is still useful without the allocation sites.
            diagnosis["allocation_sites"] = found  # type: ignore[typeddict-unknown-key]
        return diagnosis

    def diagnose_cluster(self, type_name: str, message: str, worker: Mapping[str, Any]) -> OomDiagnosis:
        """The diagnosis of an error a cluster worker raised or died of (cluster/cluster_errors.py).

        Only the message's figures are used: the kernel's own device and host figures, and what
        its references hold, are not the worker's. An engine's kill without figures (Ray's
        memory monitor, a nanny's restart) reads as the host's memory running out.
        """
        facts = parse_oom_message(type_name, message) or parse_oom_message("MemoryError", "")
        state = _empty_state(facts["device_index"] if facts is not None else None)
        diagnosis = diagnose(facts, state)
        diagnosis["expandable_segments"] = None  # type: ignore[typeddict-unknown-key]
        diagnosis["expandable_segments_on"] = None  # type: ignore[typeddict-unknown-key]
        diagnosis["allocation_sites"] = None  # type: ignore[typeddict-unknown-key]
        diagnosis["cluster_worker"] = dict(worker)  # type: ignore[typeddict-item]
        return diagnosis

    def _seen(self) -> list[Any]:
        try:
            return self._processes() if self._processes is not None else []
        except Exception:
            return []  # The diagnosis is still useful without the kernel's processes.

    def _children(self, figures: Mapping[str, Any], index: int | None) -> dict[int, Any]:
        """The kernel's processes on device ``index``, with the releasable that holds each."""
        seen = self._seen()
        if not any(process.gpus for process in seen):
            return {}
        return gpu_children(seen, index, self._releases_of(figures))

    def _host_children(self, figures: Mapping[str, Any]) -> dict[int, Any]:
        """The kernel's processes that hold host memory of their own, with the releasable of each."""
        seen = self._seen()
        return host_children(seen, self._releases_of(figures)) if seen else {}

    def _releases_of(self, figures: Mapping[str, Any]) -> Mapping[int, Any]:
        """The releasable that holds each process of the figures' tree, by pid."""
        try:
            return self._releases(figures.get("processes")) if self._releases is not None else {}
        except Exception:
            return {}  # Stop is still offered where release cannot be.

    def _explain_workers(self, diagnosis: Any, killed: list[int], signal: str) -> None:
        """Name the killed DataLoader workers' memory, as the tree last read it, as the cause."""
        workers = dataloader_workers(killed, signal, self._seen())
        diagnosis["dataloader_workers"] = workers
        diagnosis["causes"].insert(0, {"cause": "dataloader_workers", "gain_bytes": workers["workers_host_bytes"]})

    def _in_use(self, type_name: str, message: str) -> Set[str]:
        try:
            return self._names_in_use(type_name, message) or frozenset()
        except Exception:
            # The names that the failing cell reads are unknown, so no name is set apart as in
            # use, just as when the cell reads none.
            return frozenset()


def failing_cell_names(type_name: str, message: str) -> frozenset[str] | None:
    """The notebook names the failing cell works with: those its code, and the
    notebook functions it was running when it failed, read, bind or delete.

    The names are read from the code objects on the failing stack, not from the
    cell's text, because those are the cell as it ran (with magics already
    turned into Python), and they include a ``train()`` defined in an earlier
    cell that uses ``model`` as a global. IPython's ``showtraceback`` keeps the
    cell's error in ``sys.last_value``, and it is used only if it is the error
    being diagnosed. The result is None when the names cannot be told. Only
    names are returned, so nothing keeps the error or its frames alive.
    """
    exc: Any = None
    try:
        ipython = sys.modules.get("IPython")
        shell = ipython.get_ipython() if ipython is not None else None
        namespaces = [
            ns
            for ns in (getattr(shell, "user_ns", None), getattr(shell, "user_global_ns", None))
            if isinstance(ns, dict)
        ]
        exc = getattr(sys, "last_value", None)
        if not namespaces or not isinstance(exc, BaseException):
            return None
        return names_used_by(exc, type_name, message, namespaces)
    except Exception:
        return None
    finally:
        # The traceback holds the failed cell's frames and their tensors.
        del exc


def names_used_by(
    exc: BaseException, type_name: str, message: str, namespaces: list[dict[str, Any]]
) -> frozenset[str] | None:
    """The names of ``namespaces`` that the code on ``exc``'s stack needs, if
    ``exc`` is (or wraps) the error named by ``type_name`` and ``message``:
    those each frame running notebook code reads before it binds them.

    A name that the cell binds before it reads it (``logits = model(x)`` run a
    second time) held its earlier value while the new one was computed. That
    value is what deleting the name frees, and the cell does not need it, so
    the name stays stale. Only code that ran, or that the cell calls, counts:
    the frames on the stack, the comprehensions, lambdas and class bodies they
    ran, and the notebook functions that they name (see
    :func:`_add_notebook_functions`). The body of a function that the cell only
    defines does not count.

    The result is None when ``exc`` is an older error, not this cell's.
    """
    links = list(error_chain(exc))
    if not any(
        type(link).__name__ == type_name and error_message(link)[:SCANNED_MESSAGE_CHARS] == message for link in links
    ):
        # This is an older error, not this cell's.
        return None
    names: set[str] = set()
    for frame in error_frames.traceback_frames(link.__traceback__ for link in links):
        if any(frame.f_globals is ns for ns in namespaces):
            names.update(_read_before_bound(frame.f_code))
        del frame
    _add_notebook_functions(names, namespaces)
    return frozenset(names)


def _add_notebook_functions(names: set[str], namespaces: list[dict[str, Any]]) -> None:
    """Add the names that the notebook's functions among ``names`` read, and then
    those that the functions they name read, up to MAX_FUNCTIONS functions.

    Such a function may be a ``preprocess()`` from an earlier cell that the
    failing cell called, and that finished, before the error. It no longer has
    a frame on the stack, but a rerun of the cell calls it again, so it needs
    its names too.
    """
    looked: set[str] = set()
    queue = list(names)
    while queue and len(looked) < MAX_FUNCTIONS:
        name = queue.pop()
        if name in looked:
            continue
        looked.add(name)
        for ns in namespaces:
            value = ns.get(name)
            code = getattr(value, "__code__", None) if isinstance(value, types.FunctionType) else None
            if code is not None and any(value.__globals__ is other for other in namespaces):  # type: ignore[union-attr]
                found = _read_before_bound(code) - names
                names.update(found)
                queue.extend(found)
            del value


def _read_before_bound(code: Any, depth: int = 0) -> set[str]:
    """The global (or, at a cell's top level, notebook) names ``code`` reads
    before it binds them, in the order of its instructions."""
    try:
        # The import is here because it is needed only after an out-of-memory
        # error, so the helper's start does not pay for it.
        import dis

        read: set[str] = set()
        bound: set[str] = set()
        for instruction in dis.get_instructions(code):
            name = instruction.argval
            if instruction.opname in _READ_OPS and isinstance(name, str):
                if name not in bound:
                    read.add(name)
            elif instruction.opname in _BIND_OPS and isinstance(name, str):
                bound.add(name)
            elif (
                instruction.opname == "LOAD_CONST"
                and isinstance(name, type(code))
                and depth < MAX_CODE_DEPTH
                and (name.co_name in _RUN_IN_PLACE or not name.co_flags & error_frames.CO_OPTIMIZED)
            ):
                # A comprehension, a lambda, or a class body (which runs where
                # the class is defined; what it binds is the class's).
                read.update(_read_before_bound(name, depth + 1) - bound)
        return read
    except Exception:
        # The bytecode is not understood, so every name that the code mentions,
        # attributes too, counts. More names rather than fewer keeps a name that
        # is in use from being called stale.
        return {name for name in code.co_names if isinstance(name, str)}


def expandable_segments_known(message: str) -> bool | None:
    """Whether this kernel's torch knows the allocator option expandable_segments,
    which torch 2.1 added, or None when that cannot be told.

    Offering it to an older torch is harmful, because with it in
    PYTORCH_CUDA_ALLOC_CONF the restarted kernel fails every CUDA allocation
    ("Unrecognized CachingAllocator option"). The version of the torch loaded
    here decides. When torch is not loaded, a message in the format of torch
    2.0 and earlier means no.
    """
    version = _loaded_torch_version()
    if version is not None:
        return version >= (2, 1)
    return False if old_torch_message(message) else None


def expandable_segments_on() -> bool | None:
    """Whether torch's CUDA allocator has expandable segments turned on at this
    moment, or None where that cannot be told, because CUDA is not initialised
    or the torch predates the getter.

    Offering to turn them on, which takes a restart of the kernel, is pointless
    when they are on already. The environment cannot tell: a variable set after
    CUDA started (the setting cell run without the restart) is in it, yet the
    allocator never read it. Torch's own getter
    (``_accelerator_getAllocatorSettings``, in recent PyTorch) gives the
    settings that it parsed or that were set since. It is asked only once CUDA
    is initialised, because before that the getter would parse the
    environment as it stands and fix the allocator's settings ahead of the
    user's cells.
    """
    try:
        # Torch is never imported here, only used if the notebook loaded it.
        torch = sys.modules.get("torch")
        if torch is None or not torch_cuda.cuda_initialized(torch):
            return None
        return allocator_settings_expandable(torch)
    except Exception:
        return None


def allocator_settings_expandable(torch: Any) -> bool | None:
    """Whether the allocator settings that torch parsed turn expandable segments
    on, or None when torch has no getter for them. The last
    ``expandable_segments`` option counts, as it does for torch."""
    getter = getattr(getattr(torch, "_C", None), "_accelerator_getAllocatorSettings", None)
    if getter is None:
        return None
    settings = getter()
    if not isinstance(settings, str):
        return None
    on = False
    for option in settings.split(","):
        key, _, value = option.partition(":")
        if key.strip() == "expandable_segments":
            on = value.strip().lower() == "true"
    return on


def _loaded_torch_version() -> tuple[int, int] | None:
    try:
        # Torch is never imported here, only used if the notebook loaded it.
        torch = sys.modules.get("torch")
        match = re.match(r"(\d{1,4})\.(\d{1,4})", str(getattr(torch, "__version__", "") or ""))
        return (int(match.group(1)), int(match.group(2))) if torch is not None and match else None
    except Exception:
        return None


def _empty_state(device_index: int | None) -> OomState:
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
        "in_use_holders": [],
    }


def _host_state(figures: Mapping[str, Any]) -> OomState:
    state = _empty_state(None)
    host = figures.get("host") or {}
    state["total_bytes"], state["free_bytes"] = host_limit(host)
    state["process_in_use_bytes"] = host.get("rss_bytes")
    return state


def host_limit(host: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """The RAM the kernel may use, and what is left of it.

    When the kernel's container has a limit, that limit is what counts, because
    the kernel is killed there long before the node's RAM runs out, and what is
    left is the limit less the working set, as the panel's card counts it.
    Otherwise the machine's total and available RAM count. What is left is
    None where it is unknown.
    """
    total, available = host.get("total_bytes"), host.get("available_bytes")
    container = host.get("container")
    if not isinstance(container, dict) or not isinstance(container.get("limit_bytes"), int):
        return total, available
    limit = container["limit_bytes"]
    usage = container.get("usage_bytes")
    if not isinstance(usage, int):
        # What is left under the limit is not known, and the node's free RAM
        # would overstate it.
        return limit, None
    # The working set is counted as the panel, docker stats and Kubernetes count
    # it: the file cache that reading a dataset leaves behind is given back
    # before any OOM kill, so it is not in use.
    inactive_file = container.get("inactive_file_bytes")
    used = max(0, usage - inactive_file) if isinstance(inactive_file, int) else usage
    rss = host.get("rss_bytes")
    if isinstance(rss, int):
        # The kernel's resident set is charged to its cgroup, so the usage is at
        # least that.
        used = max(used, rss)
    left = max(0, limit - used)
    if isinstance(available, int):
        # The limit may be above what the node has left.
        left = min(left, available)
    return limit, left


def _only_gpu_index(figures: Mapping[str, Any]) -> int | None:
    gpus = figures.get("gpus") or []
    return gpus[0]["index"] if len(gpus) == 1 else None


def _gpu_state(figures: Mapping[str, Any], index: int | None) -> OomState:
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
        others: list[OomProcess] = [
            {"pid": p["pid"], "used_bytes": p["used_bytes"]} for p in processes if not p.get("this_process")
        ]
        state["other_processes"] = others
    return state


def _stale(
    inspected: Mapping[str, Any], device_key: str, in_use: Set[str] = frozenset()
) -> tuple[int | None, list[OomStaleHolder], list[OomStaleHolder]]:
    """Bytes on ``device_key`` held by the notebook's names and hidden references
    that the failing cell does not use, the largest of those holders, and the
    largest names it uses (``in_use``), which are left out of the first two."""
    holders: list[OomStaleHolder] = []
    used: list[OomStaleHolder] = []
    used_bytes = 0
    for entry in inspected.get("entries") or []:
        on_device = _on_device(entry, device_key)
        if on_device:
            name = str(entry.get("name"))
            holder: OomStaleHolder = {"holder": "name", "label": name, "bytes": on_device}
            if name in in_use:
                used.append(holder)
                used_bytes += on_device
            else:
                holders.append(holder)
    for hidden in inspected.get("hidden") or []:
        on_device = _on_device(hidden, device_key)
        if on_device:
            holders.append({"holder": str(hidden.get("holder")), "label": str(hidden.get("label")), "bytes": on_device})
    holders.sort(key=lambda h: -h["bytes"])
    used.sort(key=lambda h: -h["bytes"])
    # Holders share storages (``x`` and ``Out[3]``, ``Out[3]`` and the last
    # result): each holder's figure is true alone, their sum is not.
    held = inspected.get("held_bytes_by_device")
    if isinstance(held, dict):
        value = held.get(device_key)
        total = int(value) if isinstance(value, int) else 0
        # What the names in use hold stays, whoever else holds it too: taking
        # their whole figures off the total may undercount what deleting the
        # rest frees, never overcount it.
        total = max(0, total - used_bytes)
    else:
        # A plain inspect result has no combined figure, so at least leave out
        # of the hidden holders what the names count already.
        total = sum(
            _on_device(entry, device_key)
            for entry in inspected.get("entries") or []
            if str(entry.get("name")) not in in_use
        )
        for hidden in inspected.get("hidden") or []:
            named: dict[str, Any] = hidden.get("named_bytes_by_device") or {}
            shared = named.get(device_key)
            total += max(0, _on_device(hidden, device_key) - (int(shared) if isinstance(shared, int) else 0))
    return total, holders[:STALE_HOLDERS_LISTED], used[:STALE_HOLDERS_LISTED]


def _on_device(entry: Mapping[str, Any], device_key: str) -> int:
    by_device: dict[str, Any] = entry.get("bytes_by_device") or {}
    value = by_device.get(device_key)
    return int(value) if isinstance(value, int) else 0
