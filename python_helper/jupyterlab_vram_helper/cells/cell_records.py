"""Makes an ended cell's readings into the protocol's ``cell`` record (docs/protocol.md).

The record holds the cell's host and GPU figures, each peak, and whether that
peak is exact. It contains only numbers and strings, and it is built on the
sender thread rather than on the kernel's main thread."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..sampling.readers.torch_cuda import AllocatorCounters, counters_from_stats
from .cell_processes import processes_section
from .cell_readings import EndedCell, GpuReading, PendingCell, peak_of

# The message shapes in protocol_types.py are needed for annotations only.
if TYPE_CHECKING:
    from ..protocol_types import CellGpuLoad, CellGpuMemory, CellHostMemory, CellMemoryRecord


def cell_record(
    record_id: int,
    ended: EndedCell,
    gpus: list[CellGpuMemory],
    gpu_load: list[CellGpuLoad] | None = None,
    interval_s: float = 1.0,
) -> CellMemoryRecord:
    """The record of ``ended``, whose end figures have been read.

    ``gpus`` comes from :func:`gpu_records` and ``gpu_load`` from cell_load.py; when
    ``gpu_load`` is None, the record carries no load figures. ``interval_s`` is the sampler's
    interval, which spaces the readings of the kernel's processes.
    """
    cell = ended.cell
    rss_peak, rss_exact = peak_of(
        cell.rss_before,
        ended.rss_after,
        cell.sampled_rss_max,
        cell.rss_peak_before,
        ended.rss_peak_after,
        cell.rss_peak_from_start,
    )
    host: CellHostMemory = {
        "rss_before_bytes": cell.rss_before,
        "rss_after_bytes": ended.rss_after,
        "rss_peak_bytes": rss_peak,
        "peak_exact": rss_exact,
    }
    record: CellMemoryRecord = {
        "record_id": record_id,
        "execution_count": ended.execution_count,
        "cell_id": cell.cell_id,
        "started": cell.started,
        "duration_s": max(0.0, ended.t1 - cell.t0),
        "status": ended.status,
        "error": ended.error,
        "peak_exact": rss_exact and all(g["peak_exact"] for g in gpus),
        "host": host,
        "gpus": gpus,
        "oom": ended.oom,
    }
    if gpu_load is not None:
        record["gpu_load"] = gpu_load
    if cell.tree is not None:
        section = processes_section(cell.tree, ended.tree_after, interval_s)
        if section is not None:
            record["processes"] = section
    return record


def gpu_records(cell: PendingCell, after: GpuReading) -> list[CellGpuMemory]:
    """One entry per device that the cell's kernel has used, from torch's counters
    before ``cell`` and ``after`` it."""
    records: list[CellGpuMemory] = []
    for index in sorted(set(cell.gpus_before) | set(after)):
        b = counters_from_stats(cell.gpus_before.get(index))
        a = counters_from_stats(after.get(index))
        if not cell.cuda_was_initialized:
            # CUDA came up during the cell, so the allocator counted from zero.
            b = AllocatorCounters(0, 0, 0, 0)
            counters_exact = True
        else:
            counters_exact = cell.gpu_peaks_were_reset and b is not None
        sampled = cell.sampled_gpu_max.get(index, (None, None))
        unfolded = index not in cell.gpu_peaks_folded
        allocated_peak, allocated_exact = peak_of(
            b and b.allocated,
            a and a.allocated,
            sampled[0],
            b and b.allocated_peak,
            a and a.allocated_peak,
            counters_exact,
            unfolded,
        )
        reserved_peak, reserved_exact = peak_of(
            b and b.reserved,
            a and a.reserved,
            sampled[1],
            b and b.reserved_peak,
            a and a.reserved_peak,
            counters_exact,
            unfolded,
        )
        if not (allocated_peak or reserved_peak or (a and a.reserved) or (b and b.reserved)):
            # This kernel never used the device, so it gets no entry.
            continue
        records.append(
            {
                "index": index,
                "allocated_before_bytes": b.allocated if b else None,
                "allocated_after_bytes": a.allocated if a else None,
                "allocated_peak_bytes": allocated_peak,
                "reserved_before_bytes": b.reserved if b else None,
                "reserved_after_bytes": a.reserved if a else None,
                "reserved_peak_bytes": reserved_peak,
                "peak_exact": allocated_exact and reserved_exact,
            }
        )
    return records
