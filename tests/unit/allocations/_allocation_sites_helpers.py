"""Shared by the allocation-recording tests (test_allocation_recording*.py, test_allocation_site_grouping.py,
test_gpu_snapshot_reads.py, test_symbolizer_warm_up.py): a fake IPython shell that fires pre_run_cell, a fake torch.cuda
with an allocator history, and AllocationSites wired to both."""

from __future__ import annotations

import sys
import tracemalloc
import types
from collections.abc import Callable
from typing import Any

from fakes import CountsFirstShell, FakeProps, FakeTorch, nested_stats

from jupyterlab_vram_helper.allocations.allocation_sites import AllocationSites

CELL_A = "/tmp/ipykernel_4242/1f2e3d4c.py"  # ipykernel's name of a cell
CELL_B = "<ipython-input-9-0123456789ab>"  # plain IPython's


class FakeEvents:
    def __init__(self) -> None:
        self.callbacks: dict[str, list[Callable[..., Any]]] = {"pre_run_cell": [], "post_run_cell": []}

    def register(self, event: str, cb: Callable[..., Any]) -> None:
        self.callbacks[event].append(cb)

    def unregister(self, event: str, cb: Callable[..., Any]) -> None:
        self.callbacks[event].remove(cb)


class FakeShell(CountsFirstShell):
    def __init__(self) -> None:
        super().__init__()
        self.events = FakeEvents()
        self.compile = types.SimpleNamespace(_filename_map={CELL_A: 4})

    def run_cell(self, cell_id: str) -> int:
        """Fire pre_run_cell as IPython does; returns the cell's execution count."""
        info = types.SimpleNamespace(cell_id=cell_id, store_history=True)
        count = self.execution_count
        self.execution_count += 1  # already counted when pre_run_cell fires (see cell_accounting.py)
        for cb in list(self.events.callbacks["pre_run_cell"]):
            cb(info)
        return count


def recording_torch(initialized: bool) -> FakeTorch:
    torch: Any = FakeTorch([FakeProps("H100", 80 << 30, "GPU-0")], initialized=initialized)  # more attributes below
    torch.stats[0] = nested_stats(4096, 8192, 4096)
    torch.history_calls = []
    torch.blocks = []

    def record(enabled: str | None = "all", **kw: Any) -> None:
        assert torch.initialized, "recording before CUDA is initialised would initialise it"
        torch.history_calls.append(dict(kw, enabled=enabled))

    torch.snapshots = []  # which snapshot call, each time

    def segments() -> list[dict[str, Any]]:
        return [{"device": 0, "blocks": list(torch.blocks)}]

    # Whether a snapshot ever ran the symbolizer for the first time while tracemalloc traced
    torch.first_symbolization_traced = False

    def symbolized_by_snapshot() -> None:
        if "torch._inductor" not in sys.modules:  # the first symbolization, as PyTorch's snapshot makes it
            torch.first_symbolization_traced |= tracemalloc.is_tracing()
            sys.modules["torch._inductor"] = types.ModuleType("torch._inductor")

    def snapshot(device: Any = None) -> dict[str, Any]:
        torch.snapshots.append("with the event history")
        symbolized_by_snapshot()
        return {"segments": segments(), "device_traces": [[]]}

    def memory_snapshot(mempool_id: Any = None, include_traces: bool = True) -> list[dict[str, Any]]:
        torch.snapshots.append("segments" if include_traces is False else "segments, events built")
        symbolized_by_snapshot()
        return segments()

    # PyTorch's stack symbolizer: whether tracemalloc traced, at each run of it
    torch.symbolized = []

    def symbolize_tracebacks(tracebacks: list[Any]) -> list[Any]:
        torch.symbolized.append(tracemalloc.is_tracing())
        sys.modules["torch._inductor"] = types.ModuleType("torch._inductor")  # what its first run imports
        return [[] for _ in tracebacks]

    torch._C._profiler = types.SimpleNamespace(
        gather_traceback=lambda python, script, cpp: object(), symbolize_tracebacks=symbolize_tracebacks
    )
    torch.cuda.memory._record_memory_history = record
    torch.cuda.memory._snapshot = snapshot
    torch.cuda.memory.memory_snapshot = memory_snapshot
    return torch


def frames(*spec: Any) -> list[dict[str, Any]]:
    return [{"filename": f, "line": line, "name": name} for f, line, name in spec]


def make_sites(torch: FakeTorch | None, shell: FakeShell, sent: list[Any]) -> AllocationSites:
    return AllocationSites(shell=lambda: shell, broadcast=sent.append, torch_module=lambda: torch)


def new_sites(torch: FakeTorch | None) -> tuple[FakeShell, list[Any], AllocationSites]:
    """A fake shell, the list of what is broadcast, and AllocationSites on both and ``torch``."""
    shell = FakeShell()
    sent: list[Any] = []
    return shell, sent, make_sites(torch, shell, sent)
