"""Drives CellMemoryRecorder's hooks as IPython would, with a scripted RSS and a fake torch.cuda."""

from __future__ import annotations

import types
from typing import Any

from fakes import CountsFirstShell, FakeTorch

from jupyterlab_vram_helper.cells.cell_accounting import CellMemoryRecorder
from jupyterlab_vram_helper.config import SamplerConfig

GB = 1 << 30
MB = 1 << 20


class ScriptedRss:
    """RSS figures that the test sets, with a VmHWM that behaves like the kernel's."""

    def __init__(self, rss: int = 100 * MB, can_reset: bool = True):
        self.current = rss
        self.hwm = rss
        self.can_reset = can_reset
        self.resets = 0
        # Which /proc file each read would hit, in order.
        self.reads: list[str] = []

    def set(self, rss: int) -> None:
        self.current = rss
        self.hwm = max(self.hwm, rss)

    def moves(self, *values: int) -> None:
        """The RSS at each of ``values`` in turn, as a cell that allocates, then frees, moves it."""
        for rss in values:
            self.set(rss)

    def rss_and_peak(self, hold_gil: bool = True) -> tuple[int | None, int | None]:
        self.reads.append("status" if hold_gil else "status, GIL released")
        return self.current, self.hwm

    def reset_peak(self) -> bool:
        if not self.can_reset:
            return False
        self.resets += 1
        self.hwm = self.current
        return True

    def close(self) -> None:
        pass


class Harness:
    def __init__(
        self,
        torch: FakeTorch | None = None,
        reset: bool = True,
        rss: ScriptedRss | None = None,
        max_records: int = 2000,
        listeners: bool = True,
    ):
        self.config = SamplerConfig(reset_peak_per_cell=reset)
        self.sent: list[Any] = []
        self.rss = rss or ScriptedRss()
        self.torch = torch
        self.listeners = listeners
        # run_hooks counts cells as IPython 9 does.
        self.shell = CountsFirstShell()
        self.recorder = CellMemoryRecorder(
            config=lambda: self.config,
            send=self.sent.append,
            has_listeners=lambda: self.listeners,
            rss=self.rss,  # type: ignore[arg-type]
            torch_module=lambda: self.torch,
            shell=self.shell,
            max_records=max_records,
        )

    def cell(
        self,
        body=lambda: None,
        cell_id: str | None = "c1",
        error: BaseException | None = None,
        before_exec: BaseException | None = None,
        store_history: bool = True,
    ):
        """Run a cell through both hooks, and return its record from the history."""
        self.run_hooks(body, cell_id, error, before_exec, store_history)
        return self.last()

    def run_hooks(
        self,
        body=lambda: None,
        cell_id: str | None = "c1",
        error: BaseException | None = None,
        before_exec: BaseException | None = None,
        store_history: bool = True,
    ) -> None:
        """Run a cell through both hooks and do nothing else, because a history
        request would finish the records."""
        info = types.SimpleNamespace(cell_id=cell_id, store_history=store_history, raw_cell="x")
        count = self.shell.execution_count
        if store_history:
            self.shell.execution_count += 1
        self.recorder.pre_run_cell(info)
        body()
        result = types.SimpleNamespace(
            info=info, execution_count=count, error_in_exec=error, error_before_exec=before_exec, result=None
        )
        self.recorder.post_run_cell(result)

    def last(self):
        history = self.recorder.history()
        return history[-1] if history else None

    def cells_sent(self):
        return [r for m in self.sent if m["type"] == "cells" for r in m["records"]]

    def errors_sent(self):
        return [m for m in self.sent if m["type"] == "error"]


def figures(rss: int | None, gpus=()):
    return {
        "host": {"rss_bytes": rss, "total_bytes": None, "available_bytes": None},
        "torch": {"imported": True, "cuda_initialized": True},
        "tensorflow": {"imported": False, "gpus_initialized": False},
        "gpus": [
            {
                "index": i,
                "name": None,
                "total_bytes": None,
                "nvml": None,
                "tensorflow": None,
                "torch": {
                    "allocated_bytes": a,
                    "reserved_bytes": r,
                    "peak_allocated_bytes": None,
                    "active_bytes": None,
                    "inactive_split_bytes": None,
                    "num_ooms": 0,
                    "num_alloc_retries": 0,
                },
            }
            for i, a, r in gpus
        ],
    }


def resets(torch: FakeTorch) -> list[Any]:
    return [c for c in torch.calls if c[0] == "reset_peak_memory_stats"]


class LaterCalls:
    """A call_soon that runs nothing until the test says so, like a stalled sender thread."""

    def __init__(self) -> None:
        self.calls: list[Any] = []

    def __call__(self, call) -> None:
        self.calls.append(call)

    def run(self) -> None:
        calls, self.calls = self.calls, []
        for call in calls:
            call()


def deferred_harness(**kwargs: Any) -> tuple[Harness, LaterCalls]:
    h = Harness(**kwargs)
    later = LaterCalls()
    h.recorder._call_soon = later
    return h, later


def stats_reads(torch: FakeTorch) -> list[Any]:
    return [c for c in torch.calls if c[0] == "memory_stats_as_nested_dict"]


def _no_nvml():
    raise ImportError("no pynvml")
