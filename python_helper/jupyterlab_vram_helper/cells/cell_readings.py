"""What per-cell accounting keeps about a cell while it runs and after it
ends, and how a peak follows from a high-water counter and readings."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..protocol import CellStatus
from ..sampling.readers.torch_cuda import NO_ALLOCATIONS, AllocatorStats, CellAllocators

if TYPE_CHECKING:  # only the type: the module is loaded when a diagnosis is made
    from ..protocol_types import CellError, OomDiagnosis


class PendingCell:
    """What pre_run_cell measured; numbers only."""

    __slots__ = (
        "info_id",
        "cell_id",
        "execution_count",
        "started",
        "t0",
        "rss_before",
        "rss_peak_before",
        "rss_peak_from_start",
        "sampled_rss_max",
        "cuda_was_initialized",
        "gpus_before",
        "gpu_peaks_were_reset",
        "sampled_gpu_max",
        "gpu_peaks_folded",
        "nested",
        "thread",
        "tree",
    )

    def __init__(self, info_id: int, cell_id: str | None, execution_count: int | None, started: float):
        self.info_id = info_id
        self.cell_id = cell_id
        self.execution_count = execution_count
        self.started = started
        self.t0 = 0.0
        self.rss_before: int | None = None
        self.rss_peak_before: int | None = None  # VmHWM when not reset
        # VmHWM counts from this cell's start: reset there, or it was the RSS already
        self.rss_peak_from_start = False
        # The highest RSS seen during the cell by the sampler (and, for a cell
        # that ran another one inside it, VmHWM before the inner cell reset it).
        self.sampled_rss_max: int | None = None
        self.cuda_was_initialized = False
        self.gpus_before: GpuReading = {}
        self.gpu_peaks_were_reset = False
        # index -> [allocated max, reserved max], the same for torch's counters
        self.sampled_gpu_max: dict[int, list[int]] = {}
        # Devices whose peaks an inner cell's reset hid (their maxima hold them).
        self.gpu_peaks_folded: set[int] = set()
        # Run by the running cell through run_cell (%%capture, get_ipython().run_cell):
        # part of that cell, whose record covers it.
        self.nested = False
        # The thread that runs it: a kernel subshell (ipykernel 7) runs its
        # cells on a thread of its own, at the same time as the notebook's.
        self.thread = 0
        # The kernel's processes (cell_processes.CellTree), where the tree can be read.
        self.tree: Any = None


class EndedCell:
    """What post_run_cell measured, waiting for its RSS after and peak to become a record."""

    __slots__ = (
        "cell",
        "t1",
        "status",
        "error",
        "execution_count",
        "gpus_after",
        "oom",
        "host_read",
        "rss_after",
        "rss_peak_after",
        "tree_after",
    )

    def __init__(
        self,
        cell: PendingCell,
        t1: float,
        status: CellStatus,
        error: CellError | None,
        execution_count: int | None,
        gpus_after: GpuReading | None,
        oom: OomDiagnosis | None,
    ):
        self.cell = cell
        self.t1 = t1
        self.status = status
        self.error = error
        self.execution_count = execution_count
        # torch's counters after the cell (None: not read yet; {}: nothing to read)
        self.gpus_after = gpus_after
        self.oom = oom
        self.host_read = False  # rss_after and rss_peak_after are read
        self.rss_after: int | None = None
        self.rss_peak_after: int | None = None  # VmHWM
        self.tree_after: Any = None  # the processes' totals after the cell (TreeTotals), or None


# CUDA ordinal -> torch's stats of that device, as read (a device that
# cudaMallocAsync could only read by creating a context is left out); {} while
# CUDA is not initialised. torch_cuda.counters_from_stats picks the counters out.
GpuReading = dict[int, AllocatorStats]


def gpu_reading(cuda: CellAllocators | None) -> GpuReading:
    """torch's stats of every readable device now ({} while CUDA is not initialised: ``cuda`` None);
    a device without a context reads as NO_ALLOCATIONS, without asking torch for its stats."""
    if cuda is None:
        return {}
    stats, indices, with_context = cuda.stats, cuda.indices, cuda.with_context
    if len(with_context) >= len(indices):
        # Every device read has a context (the common case, and the hooks' hot
        # path): with_context is a subset of the indices (cudaMallocAsync's
        # are devices seen with a context or that torch says have none).
        return {index: stats(index) for index in indices}
    unused = cuda.unused
    return {index: stats(index) if index in with_context or not unused(index) else NO_ALLOCATIONS for index in indices}


def max_known(*values: int | None) -> int | None:
    """Return the largest of the values that are known, or None when none is."""
    known = [v for v in values if v is not None]
    return max(known) if known else None


def raise_gpu_max(cell: PendingCell, index: int, allocated: int | None, reserved: int | None) -> None:
    """Fold torch figures seen during ``cell`` (by the sampler, or before an inner cell's reset) into its maxima."""
    allocated = allocated or 0
    reserved = reserved or 0
    seen = cell.sampled_gpu_max.get(index)
    if seen is None:
        cell.sampled_gpu_max[index] = [allocated, reserved]
    else:
        if allocated > seen[0]:
            seen[0] = allocated
        if reserved > seen[1]:
            seen[1] = reserved


def peak_of(
    before: int | None,
    after: int | None,
    sampled: int | None,
    counter_before: int | None,
    counter_after: int | None,
    counter_exact: bool,
    check_foreign_reset: bool = False,
) -> tuple[int | None, bool]:
    """A cell's peak from a high-water counter and readings; (bytes, exact).

    ``counter_exact``: the counter was reset at cell start (or started from
    zero in the cell), so its value at the end is the cell's peak. Otherwise
    it counts since some earlier reset: it is the cell's peak only if it rose
    during the cell.
    ``check_foreign_reset`` (where no inner cell's reset hid part of the
    counter, which ``sampled`` then holds): a counter is never below a
    reading taken since its last reset, so a reading above it (the value at
    the start, or one the sampler took) proves that something else reset it
    during the cell (the user's own ``torch.cuda.reset_peak_memory_stats()``);
    what came before that reset is known only as far as it was seen.
    """
    if counter_exact and counter_after is not None:
        peak = max_known(counter_after, before, after, sampled)
        return peak, not check_foreign_reset or peak == counter_after
    rose = counter_after is not None and counter_before is not None and counter_after > counter_before
    peak = max_known(before, after, sampled, counter_after if rose else None)
    return peak, bool(rose and peak == counter_after)
