"""Reads PyTorch's CUDA caching allocator without side effects.

Never imports torch and never initialises CUDA: the figures are read only once
``torch.cuda.is_initialized()`` is true, always with an explicit device index
(the current device is per thread, and resolving it from the sampler thread
could initialise a context on device 0).

Under the ``cudaMallocAsync`` backend (``PYTORCH_CUDA_ALLOC_CONF=
backend:cudaMallocAsync``) the driver's memory pool does the caching: torch
fills allocated and reserved bytes (current and peak) and leaves the native
allocator's block figures (active, inactive split, alloc retries) at zero, so
those are sent as unknown rather than as a false 0. Reading that backend's
stats switches to the device, so only devices that already have a context are
read there.

A device without a CUDA context holds nothing of torch's (allocating there
creates the context first): its stats are all zero, so they are not read at
all (:data:`NO_ALLOCATIONS`), and its peaks need no reset. On a machine with
eight GPUs and a notebook using one, that spares seven stats calls (~12 us
each on an H100 machine) and seven resets at every cell start, seven more
after every cell and seven at every sampler tick. torch's primary-context
check tells (it creates no context); a device seen with a context keeps it for
the life of the process, so it is asked once per device that has one.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:  # the message shapes, for annotations only (protocol_types.py)
    from ...protocol_types import TorchGpuFigures, TorchInfo, TorchState


# ``loaded_torch()``: the torch module if the user imported it, else ``None``.
# A module that is still being imported (another thread holds the import
# lock) may lack attributes; callers treat any AttributeError as "not ready
# yet". ``sys.modules.get`` bound to its argument: both cell hooks call it,
# and a call without a Python frame costs them ~1.5 us less with cold caches.
loaded_torch: Callable[[], Any] = functools.partial(sys.modules.get, "torch")


def cuda_initialized(torch: Any) -> bool:
    """Tell whether PyTorch has initialised CUDA, treating any failure to ask as no."""
    try:
        return bool(torch.cuda.is_initialized())
    except Exception:
        return False


def torch_state(torch: Any, initialized: bool | None = None) -> TorchState:
    """The sample's ``torch`` field; ``initialized``: what the caller has just read of ``cuda_initialized``."""
    if torch is None:
        return {"imported": False, "cuda_initialized": False}
    return {"imported": True, "cuda_initialized": cuda_initialized(torch) if initialized is None else initialized}


def torch_info(torch: Any) -> TorchInfo | None:
    """The hello's ``torch`` field."""
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
# Figures the cudaMallocAsync backend never fills in (torch leaves them at 0).
_NATIVE_ONLY_FIGURES = ("active_bytes", "inactive_split_bytes", "num_alloc_retries")


class _Allocator(NamedTuple):
    """torch's allocator entry points, looked up once per torch module.

    Looked up only once CUDA is initialised (every caller checks first), when
    the backend is fixed. The hooks and every sampler tick go through here.
    """

    torch: Any
    backend: str | None  # "native" or "cudaMallocAsync"; None where torch cannot say (< 2.0)
    stats: Callable[[int], Mapping[str, Any]]
    reset_peaks: Callable[[int], Any] | None
    has_context: Callable[[int], Any] | None
    # Devices seen with a context: a primary context stays for the process's life.
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


# The stats of a device without a CUDA context, where torch has allocated nothing:
# what its allocator would answer, shared and never to be changed.
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
    # The C binding behind memory_stats_as_nested_dict: that wrapper's own
    # checks (CUDA initialised? which device?) cost a third of each call
    # (~7 of ~20 us on an H100 machine), and our callers have made them.
    stats = getattr(native, "_cuda_memoryStats", None) or _stats_function(torch)
    # The same for reset_peak_memory_stats, whose wrapper only resolves the
    # device index (three Python calls) that our callers pass explicitly.
    # Looked up here without the public fallback: a torch lacking both must
    # still have its figures read (the reset fails alone: CellAllocators.reset_peaks).
    reset = getattr(native, "_cuda_resetPeakMemoryStats", None)
    known = _Allocator(torch, backend, stats, reset, getattr(native, "_cuda_hasPrimaryContext", None), set())
    _allocator = known
    return known


def allocator_backend(torch: Any) -> str | None:
    """``"native"`` or ``"cudaMallocAsync"``; ``None`` where torch cannot say (older than 2.0)."""
    return _bound(torch).backend


def _readable(allocator: _Allocator, index: int) -> bool:
    """Whether device ``index``'s figures are known without creating a context there:
    the native allocator's stats are host-side bookkeeping; under cudaMallocAsync,
    a device with a context is read, and one torch says has none holds nothing
    (:func:`_unused`: read as NO_ALLOCATIONS, so that a first context made there
    during a cell counts from zero, as under the native allocator)."""
    if allocator.backend != ASYNC_BACKEND:
        return True
    return _context_state(allocator, index) is not None  # cannot tell: read nothing rather than risk a context


def _context_state(allocator: _Allocator, index: int) -> bool | None:
    """Whether this process has a CUDA context on device ``index``; None where torch cannot say."""
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
    """Whether device ``index`` provably holds nothing of torch's: torch says it has no
    context there. False where torch cannot say (then its stats are read)."""
    return _context_state(allocator, index) is False


def has_context(torch: Any, index: int) -> bool:
    """Whether this process has a CUDA context on device ``index`` (CUDA initialised:
    the caller checks), by torch's primary-context check, which creates none;
    False where torch cannot say."""
    return _has_context(_bound(torch), index)


def _stats_function(torch: Any) -> Any:
    memory = getattr(torch.cuda, "memory", None)
    fn = getattr(memory, "memory_stats_as_nested_dict", None)
    return fn if fn is not None else torch.cuda.memory_stats_as_nested_dict


def initialized_device_reading(torch: Any, index: int) -> tuple[TorchGpuFigures | None, bool | None]:
    """Allocator figures of CUDA device ``index``, where the caller has just seen CUDA
    initialised (the sampler, every tick), and whether this process has a context on the
    device (None: torch cannot say), from the one context check both need. The figures
    are ``None`` for a device that cudaMallocAsync could only read by creating a context.

    One nested stats call per device and sample: the flat ``memory_stats()``
    rebuilds and sorts a large dict, and each of ``memory_allocated``/
    ``memory_reserved``/... would read the stats again.
    """
    allocator = _bound(torch)
    # A device seen with a context keeps it: one set lookup (what _context_state
    # starts with), without its call, at every tick.
    context = True if index in allocator.with_context else _context_state(allocator, index)
    if allocator.backend == ASYNC_BACKEND and context is not True:
        return None, context  # cannot tell, or no context: reading would create one
    stats = NO_ALLOCATIONS if context is False else allocator.stats(index)
    if not stats:
        return None, context
    return figures_from_stats(stats, allocator.backend), context


def figures_from_stats(stats: Mapping[str, Any], backend: str | None = None) -> TorchGpuFigures:
    """Turn the caching allocator's statistics into the figures of one GPU."""
    try:
        # Every sampler tick: plain lookups, checked once (see counters_from_stats).
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
    """Figure by figure, None where a stat is missing or not an integer."""
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

    ``device_count()`` is cached by torch once CUDA is initialised; before
    that it is not called at all (it may run cuInit).
    """
    if torch is None or not cuda_initialized(torch):
        return 0
    return int(torch.cuda.device_count())


# torch's nested stats dict of one device as its binding returns it: a fresh
# dict of numbers. The cell hooks keep it as read and leave picking the
# counters out of it (:func:`counters_from_stats`) to the sender thread.
AllocatorStats = Mapping[str, Any]


def allocator_counters(torch: Any, index: int) -> AllocatorCounters | None:
    """Current and peak allocated/reserved bytes of device ``index`` (explicit index);
    ``None`` for a device that cudaMallocAsync could only read by creating a context."""
    allocator = _bound(torch)
    if not _readable(allocator, index):
        return None
    return counters_from_stats(NO_ALLOCATIONS if _unused(allocator, index) else allocator.stats(index))


def counters_from_stats(stats: AllocatorStats | None) -> AllocatorCounters | None:
    """The four counters per-cell accounting uses, from torch's nested stats (None: nothing read)."""
    if not stats:
        return None
    # Four lookups, checked once, rather than four _stat calls.
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
    """torch's allocator entry points as the cell hooks call them at every cell.

    Made once CUDA is initialised: the devices whose stats can be read
    without creating a context, and torch's own bindings for the stats and
    the peak reset. Under the native allocator that never changes again in
    the process (CUDA is not de-initialised; a forked child starts over), so
    the hooks keep it (``fixed``) and call the bindings directly, without
    the per-device checks of :func:`allocator_counters` (five Python calls
    per device, at both ends of every cell). Under cudaMallocAsync the
    readable devices grow as contexts are created: made again at every cell.
    ``unused(index)``: the device has no context (see the module docstring):
    its reading is :data:`NO_ALLOCATIONS`, read nowhere, and its peaks need no reset.
    ``with_context``: the devices known to have one, looked at first (a set
    lookup instead of three Python calls per device and reading, with caches cold).
    """

    torch: Any
    indices: tuple[int, ...]
    stats: Callable[[int], AllocatorStats]
    reset_peaks: Callable[[int], Any]
    fixed: bool
    unused: Callable[[int], bool]
    with_context: set[int]


def cell_allocators(torch: Any) -> CellAllocators | None:
    """The hooks' view of torch's allocators; ``None`` while CUDA is not initialised."""
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
    # A torch without either reset: the figures are still read, the reset fails alone.
    raise AttributeError("this torch has no reset_peak_memory_stats")
