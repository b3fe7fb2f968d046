"""Reads PyTorch's CUDA caching allocator without side effects.

This module never imports torch and never initialises CUDA. The figures are
read only once ``torch.cuda.is_initialized()`` is true, and always with an
explicit device index, because the current device is per thread, and
resolving it from the sampler thread could initialise a context on device 0.

Under the ``cudaMallocAsync`` backend (``PYTORCH_CUDA_ALLOC_CONF=
backend:cudaMallocAsync``) the driver's memory pool does the caching. Torch
fills in the allocated and reserved bytes (current and peak) and leaves the
native allocator's block figures (active, inactive split, alloc retries) at
zero, so those are sent as unknown rather than as a false 0. Reading that
backend's stats switches to the device, so only devices that already have a
context are read there.

A device without a CUDA context holds nothing of torch's, because allocating
there creates the context first. Its stats are all zero, so they are not read
at all (:data:`NO_ALLOCATIONS`), and its peaks need no reset. On a machine
with eight GPUs and a notebook using one, that spares seven stats calls
(about 12 us each on an H100 machine) and seven resets at every cell start,
seven more after every cell, and seven at every sampler tick. Torch's
primary-context check tells whether a device has a context, without creating
one. A device seen with a context keeps it for the life of the process, so
the check is asked only until it says yes.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

# The message shapes in protocol_types.py are needed for annotations only.
if TYPE_CHECKING:
    from ...protocol_types import TorchGpuFigures, TorchInfo, TorchState


# ``loaded_torch()`` returns the torch module if the user imported it, or else
# ``None``. A module that is still being imported (while another thread holds
# the import lock) may lack attributes, so callers treat any AttributeError as
# "not ready yet". It is ``sys.modules.get`` bound to its argument, because
# both cell hooks call it, and a call without a Python frame costs them about
# 1.5 us less with cold caches.
loaded_torch: Callable[[], Any] = functools.partial(sys.modules.get, "torch")


def cuda_initialized(torch: Any) -> bool:
    """Tell whether PyTorch has initialised CUDA, treating any failure to ask as no."""
    try:
        return bool(torch.cuda.is_initialized())
    except Exception:
        return False


def torch_state(torch: Any, initialized: bool | None = None) -> TorchState:
    """The sample's ``torch`` field. ``initialized`` is what the caller has just
    read of ``cuda_initialized``, so that it is not asked twice."""
    if torch is None:
        return {"imported": False, "cuda_initialized": False}
    return {"imported": True, "cuda_initialized": cuda_initialized(torch) if initialized is None else initialized}


def torch_info(torch: Any) -> TorchInfo | None:
    """The ``torch`` field of the ``hello`` message."""
    if torch is None:
        return None
    version = getattr(getattr(torch, "version", None), "cuda", None)
    return {
        "version": _str_or_none(getattr(torch, "__version__", None)),
        "cuda_build": _str_or_none(version),
        "cuda_initialized": cuda_initialized(torch),
    }


def _str_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


ASYNC_BACKEND = "cudaMallocAsync"
# The figures that the cudaMallocAsync backend never fills in, which torch
# leaves at 0.
_NATIVE_ONLY_FIGURES = ("active_bytes", "inactive_split_bytes", "num_alloc_retries")


class _Allocator(NamedTuple):
    """Torch's allocator entry points, looked up once per torch module, because
    the hooks and every sampler tick go through here.

    They are looked up only once CUDA is initialised (every caller checks
    first), when the backend is fixed.
    """

    torch: Any
    # "native" or "cudaMallocAsync", or None where torch cannot say (before 2.0).
    backend: str | None
    stats: Callable[[int], Mapping[str, Any]]
    reset_peaks: Callable[[int], Any] | None
    has_context: Callable[[int], Any] | None
    # The devices seen with a context, since a primary context stays for the
    # process's life.
    with_context: set[int]


_allocator: _Allocator | None = None


def _zero_stats() -> Mapping[str, Any]:
    counter = {"current": 0, "peak": 0, "allocated": 0, "freed": 0}
    pools = {"all": counter, "large_pool": counter, "small_pool": counter}
    names = (
        "allocated_bytes",
        "reserved_bytes",
        "active_bytes",
        "inactive_split_bytes",
        "requested_bytes",
        "allocation",
        "segment",
        "active",
        "inactive_split",
    )
    stats: dict[str, Any] = {name: pools for name in names}
    stats.update(num_ooms=0, num_alloc_retries=0)
    return stats


# The stats of a device without a CUDA context, where torch has allocated
# nothing. It is what its allocator would answer, and it is shared, so it must
# never be changed.
NO_ALLOCATIONS: Mapping[str, Any] = _zero_stats()


def _bound(torch: Any) -> _Allocator:
    global _allocator
    known = _allocator
    if known is not None and known.torch is torch:
        return known
    try:
        backend: str | None = str(torch.cuda.get_allocator_backend())
    except Exception:
        backend = None
    native = getattr(torch, "_C", None)
    # This is the C binding behind memory_stats_as_nested_dict. That wrapper's
    # own checks (whether CUDA is initialised, and which device) cost a third
    # of each call (about 7 of 20 us on an H100 machine), and the helper's
    # callers have made them already.
    stats = getattr(native, "_cuda_memoryStats", None) or _stats_function(torch)
    # The same goes for reset_peak_memory_stats, whose wrapper only resolves
    # the device index (three Python calls) that the helper's callers pass
    # explicitly. It is looked up here without the public fallback, because a
    # torch lacking both must still have its figures read; only the reset then
    # fails (see cell_allocators and _no_peak_reset).
    reset = getattr(native, "_cuda_resetPeakMemoryStats", None)
    known = _Allocator(torch, backend, stats, reset, getattr(native, "_cuda_hasPrimaryContext", None), set())
    _allocator = known
    return known


def allocator_backend(torch: Any) -> str | None:
    """``"native"`` or ``"cudaMallocAsync"``, or ``None`` where torch cannot say (before 2.0)."""
    return _bound(torch).backend


def _readable(allocator: _Allocator, index: int) -> bool:
    """Whether device ``index``'s figures are known without creating a context there.

    The native allocator's stats are host-side bookkeeping, so they always
    are. Under cudaMallocAsync, a device with a context is read, and one that
    torch says has none holds nothing (:func:`_unused`). That one reads as
    NO_ALLOCATIONS, so that a first context made there during a cell counts
    from zero, as under the native allocator.
    """
    if allocator.backend != ASYNC_BACKEND:
        return True
    # Where torch cannot tell, nothing is read rather than risk a context.
    return _context_state(allocator, index) is not None


def _context_state(allocator: _Allocator, index: int) -> bool | None:
    """Whether this process has a CUDA context on device ``index``, or None where torch cannot say."""
    if index in allocator.with_context:
        return True
    if allocator.has_context is None:
        return None
    try:
        present = bool(allocator.has_context(index))
    except Exception:
        return None
    if present:
        allocator.with_context.add(index)
    return present


def _has_context(allocator: _Allocator, index: int) -> bool:
    return _context_state(allocator, index) is True


def _unused(allocator: _Allocator, index: int) -> bool:
    """Whether device ``index`` provably holds nothing of torch's, because torch
    says that it has no context there. It is False where torch cannot say, and
    then the device's stats are read."""
    return _context_state(allocator, index) is False


def has_context(torch: Any, index: int) -> bool:
    """Whether this process has a CUDA context on device ``index``, by torch's
    primary-context check, which creates none. It is False where torch cannot
    say. The caller must check first that CUDA is initialised."""
    return _has_context(_bound(torch), index)


def _stats_function(torch: Any) -> Any:
    memory = getattr(torch.cuda, "memory", None)
    fn = getattr(memory, "memory_stats_as_nested_dict", None)
    return fn if fn is not None else torch.cuda.memory_stats_as_nested_dict


def initialized_device_reading(torch: Any, index: int) -> tuple[TorchGpuFigures | None, bool | None]:
    """The allocator figures of CUDA device ``index``, and whether this process
    has a context on the device (None where torch cannot say), from the one
    context check that both need.

    The caller, the sampler at every tick, has just seen CUDA initialised. The
    figures are ``None`` for a device that cudaMallocAsync could only read by
    creating a context. There is one nested stats call per device and sample,
    because the flat ``memory_stats()`` rebuilds and sorts a large dict, and
    each of ``memory_allocated``, ``memory_reserved`` and the like would read
    the stats again.
    """
    allocator = _bound(torch)
    # A device seen with a context keeps it, so at every tick one set lookup,
    # which is what _context_state starts with, spares the call.
    context = True if index in allocator.with_context else _context_state(allocator, index)
    if allocator.backend == ASYNC_BACKEND and context is not True:
        # Torch cannot tell, or there is no context, and reading would create one.
        return None, context
    stats = NO_ALLOCATIONS if context is False else allocator.stats(index)
    if not stats:
        return None, context
    return figures_from_stats(stats, allocator.backend), context


def figures_from_stats(stats: Mapping[str, Any], backend: str | None = None) -> TorchGpuFigures:
    """Turn the caching allocator's statistics into the figures of one GPU."""
    try:
        # This runs at every sampler tick, so it uses plain lookups, checked
        # once (see counters_from_stats).
        allocated, reserved = stats["allocated_bytes"]["all"], stats["reserved_bytes"]["all"]
        figures: TorchGpuFigures = {
            "allocated_bytes": allocated["current"],
            "reserved_bytes": reserved["current"],
            "peak_allocated_bytes": allocated["peak"],
            "active_bytes": stats["active_bytes"]["all"]["current"],
            "inactive_split_bytes": stats["inactive_split_bytes"]["all"]["current"],
            "num_ooms": stats["num_ooms"],
            "num_alloc_retries": stats["num_alloc_retries"],
        }
        if not all(type(value) is int for value in figures.values()):
            figures = _checked_figures(stats)
    except (KeyError, TypeError):
        figures = _checked_figures(stats)
    if backend == ASYNC_BACKEND:
        for name in _NATIVE_ONLY_FIGURES:
            figures[name] = None  # type: ignore[literal-required]
    return figures


def _checked_figures(stats: Mapping[str, Any]) -> TorchGpuFigures:
    """Read the figures one by one, each None where its stat is missing or not an integer."""
    return {
        "allocated_bytes": _stat(stats, "allocated_bytes", "current"),
        "reserved_bytes": _stat(stats, "reserved_bytes", "current"),
        "peak_allocated_bytes": _stat(stats, "allocated_bytes", "peak"),
        "active_bytes": _stat(stats, "active_bytes", "current"),
        "inactive_split_bytes": _stat(stats, "inactive_split_bytes", "current"),
        "num_ooms": _int(stats.get("num_ooms")),
        "num_alloc_retries": _int(stats.get("num_alloc_retries")),
    }


def _stat(stats: Mapping[str, Any], name: str, field: str) -> int | None:
    try:
        return _int(stats[name]["all"][field])
    except (KeyError, TypeError):
        return None


def _int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return int(value)


# --- per-cell accounting ------------------------------------------------------


class AllocatorCounters(NamedTuple):
    """The caching allocator's current and peak counters of one device, as per-cell accounting reads them."""

    allocated: int | None
    allocated_peak: int | None
    reserved: int | None
    reserved_peak: int | None


def initialized_device_count(torch: Any) -> int:
    """How many CUDA devices torch sees, or 0 while CUDA is not initialised.

    Torch caches ``device_count()`` once CUDA is initialised. Before that it
    is not called at all, because it may run cuInit.
    """
    if torch is None or not cuda_initialized(torch):
        return 0
    return int(torch.cuda.device_count())


# Torch's nested stats dict of one device, as its binding returns it: a fresh
# dict of numbers. The cell hooks keep it as read, and leave picking the
# counters out of it (:func:`counters_from_stats`) to the sender thread, so
# that the hooks stay cheap.
AllocatorStats = Mapping[str, Any]


def allocator_counters(torch: Any, index: int) -> AllocatorCounters | None:
    """The current and peak allocated and reserved bytes of device ``index``, or
    ``None`` for a device that cudaMallocAsync could only read by creating a
    context."""
    allocator = _bound(torch)
    if not _readable(allocator, index):
        return None
    return counters_from_stats(NO_ALLOCATIONS if _unused(allocator, index) else allocator.stats(index))


def counters_from_stats(stats: AllocatorStats | None) -> AllocatorCounters | None:
    """The four counters that per-cell accounting uses, from torch's nested stats,
    or None when nothing was read."""
    if not stats:
        return None
    # Four lookups, checked once, are cheaper than four _stat calls.
    try:
        allocated, reserved = stats["allocated_bytes"]["all"], stats["reserved_bytes"]["all"]
        counters = AllocatorCounters(allocated["current"], allocated["peak"], reserved["current"], reserved["peak"])
    except (KeyError, TypeError):
        return AllocatorCounters(
            _stat(stats, "allocated_bytes", "current"),
            _stat(stats, "allocated_bytes", "peak"),
            _stat(stats, "reserved_bytes", "current"),
            _stat(stats, "reserved_bytes", "peak"),
        )
    if all(type(value) is int for value in counters):
        return counters
    return AllocatorCounters(*(_int(value) for value in counters))


class CellAllocators(NamedTuple):
    """Torch's allocator entry points as the cell hooks call them at every cell.

    It is made once CUDA is initialised, and holds the devices whose stats can
    be read without creating a context, and torch's own bindings for the
    stats and the peak reset. Under the native allocator that never changes
    again in the process (CUDA is not de-initialised, and a forked child
    starts over), so the hooks keep it (``fixed``) and call the bindings
    directly, without the per-device checks of :func:`allocator_counters`,
    which cost five Python calls per device at both ends of every cell. Under
    cudaMallocAsync the readable devices grow as contexts are created, so it
    is made again at every cell.

    ``unused(index)`` says that the device has no context (see the module
    docstring), so its reading is :data:`NO_ALLOCATIONS`, it is read nowhere,
    and its peaks need no reset. ``with_context`` holds the devices known to
    have one, and is looked at first, because a set lookup is cheaper than
    three Python calls per device and reading with cold caches.
    """

    torch: Any
    indices: tuple[int, ...]
    stats: Callable[[int], AllocatorStats]
    reset_peaks: Callable[[int], Any]
    fixed: bool
    unused: Callable[[int], bool]
    with_context: set[int]


def cell_allocators(torch: Any) -> CellAllocators | None:
    """The hooks' view of torch's allocators, or ``None`` while CUDA is not initialised."""
    if torch is None or not cuda_initialized(torch):
        return None
    allocator = _bound(torch)
    indices = tuple(index for index in range(int(torch.cuda.device_count())) if _readable(allocator, index))
    reset = allocator.reset_peaks or getattr(torch.cuda, "reset_peak_memory_stats", None) or _no_peak_reset
    return CellAllocators(
        torch,
        indices,
        allocator.stats,
        reset,
        allocator.backend != ASYNC_BACKEND,
        functools.partial(_unused, allocator),
        allocator.with_context,
    )


def _no_peak_reset(index: int) -> None:
    # This stands in for a torch without either reset, so that the figures
    # are still read and only the reset fails.
    raise AttributeError("this torch has no reset_peak_memory_stats")
