"""What per-cell accounting keeps about a cell while it runs and after it
ends, and how a peak follows from a high-water counter and readings."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..protocol import CellStatus
from ..sampling.readers.torch_cuda import NO_ALLOCATIONS, AllocatorStats, CellAllocators

# Only the types are needed here, and the modules behind them are loaded when
# a diagnosis is made, not at every cell.
if TYPE_CHECKING:
    from ..protocol_types import CellError, OomDiagnosis


class PendingCell:
    """What pre_run_cell measured. It holds numbers only, so that it keeps none
    of the user's objects alive."""

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
        "cluster",
    )

    def __init__(self, info_id: int, cell_id: str | None, execution_count: int | None, started: float):
        self.info_id = info_id
        self.cell_id = cell_id
        self.execution_count = execution_count
        self.started = started
        self.t0 = 0.0
        self.rss_before: int | None = None
        # VmHWM at the start, when it was not reset.
        self.rss_peak_before: int | None = None
        # Whether VmHWM counts from this cell's start, because it was reset
        # there or it was the RSS already.
        self.rss_peak_from_start = False
        # The highest RSS seen during the cell by the sampler (and, for a cell
        # that ran another one inside it, VmHWM before the inner cell reset it).
        self.sampled_rss_max: int | None = None
        self.cuda_was_initialized = False
        self.gpus_before: GpuReading = {}
        self.gpu_peaks_were_reset = False
        # For each device index, [allocated max, reserved max], the same for
        # torch's counters.
        self.sampled_gpu_max: dict[int, list[int]] = {}
        # The devices whose peaks an inner cell's reset hid, so that their
        # maxima above hold those peaks.
        self.gpu_peaks_folded: set[int] = set()
        # Whether the running cell ran this one through run_cell (as %%capture
        # or get_ipython().run_cell do). It is then part of that cell, whose
        # record covers it.
        self.nested = False
        # The thread that runs the cell, because a kernel subshell (ipykernel 7)
        # runs its cells on a thread of its own, at the same time as the
        # notebook's.
        self.thread = 0
        # The kernel's processes (cell_processes.CellTree), where the tree can be read.
        self.tree: Any = None
        # The clusters' readings around it (cluster/cell_cluster.CellClusterWindow), where one is attached.
        self.cluster: Any = None


class EndedCell:
    """What post_run_cell measured. It waits for the RSS after the cell and its
    peak to be read, and then becomes a record."""

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
        # Torch's counters after the cell. They are None while not read yet,
        # and {} when there was nothing to read.
        self.gpus_after = gpus_after
        self.oom = oom
        # Whether rss_after and rss_peak_after have been read.
        self.host_read = False
        self.rss_after: int | None = None
        # VmHWM at the end.
        self.rss_peak_after: int | None = None
        # The processes' totals after the cell (TreeTotals), or None.
        self.tree_after: Any = None


# This maps each CUDA ordinal to torch's stats of that device, as read. A
# device that cudaMallocAsync could only read by creating a context is left
# out, and the reading is {} while CUDA is not initialised.
# torch_cuda.counters_from_stats picks the counters out later.
GpuReading = dict[int, AllocatorStats]


def gpu_reading(cuda: CellAllocators | None) -> GpuReading:
    """Torch's stats of every readable device at this moment, or {} while CUDA is
    not initialised, which ``cuda`` being None says.

    A device without a context reads as NO_ALLOCATIONS, without asking torch
    for its stats.
    """
    if cuda is None:
        return {}
    stats, indices, with_context = cuda.stats, cuda.indices, cuda.with_context
    if len(with_context) >= len(indices):
        # Every device read has a context, which is the common case and the
        # hooks' hot path. The count comparison proves it because with_context
        # is a subset of the indices (under cudaMallocAsync the indices are the
        # devices seen with a context or that torch says have none).
        return {index: stats(index) for index in indices}
    unused = cuda.unused
    return {index: stats(index) if index in with_context or not unused(index) else NO_ALLOCATIONS for index in indices}


def max_known(*values: int | None) -> int | None:
    """Return the largest of the values that are known, or None when none is."""
    known = [v for v in values if v is not None]
    return max(known) if known else None


def raise_gpu_max(cell: PendingCell, index: int, allocated: int | None, reserved: int | None) -> None:
    """Fold torch figures seen during ``cell``, by the sampler or before an inner
    cell's reset, into its maxima."""
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
    """A cell's peak from a high-water counter and readings, as (bytes, whether exact).

    ``counter_exact`` says that the counter was reset at the cell's start, or
    started from zero in the cell, so its value at the end is the cell's peak.
    Otherwise it counts since some earlier reset, and it is the cell's peak
    only if it rose during the cell.

    ``check_foreign_reset`` is passed where no inner cell's reset hid part of
    the counter (which ``sampled`` would then hold). A counter is never below
    a reading taken since its last reset, so a reading above it (the value at
    the start, or one that the sampler took) proves that something else reset
    it during the cell, such as the user's own
    ``torch.cuda.reset_peak_memory_stats()``. What came before that reset is
    then known only as far as it was seen, so the peak is not exact.
    """
    if counter_exact and counter_after is not None:
        peak = max_known(counter_after, before, after, sampled)
        return peak, not check_foreign_reset or peak == counter_after
    rose = counter_after is not None and counter_before is not None and counter_after > counter_before
    peak = max_known(before, after, sampled, counter_after if rose else None)
    return peak, bool(rose and peak == counter_after)
