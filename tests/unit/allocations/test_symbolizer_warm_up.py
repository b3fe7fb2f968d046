"""PyTorch's stack symbolizer, whose first run imports torch._inductor: run once, untraced, before
the GPU history starts (host recording restarted around it), before the cell's own accounting
reads its start, and safe against an interrupt; per-cell figures wait while host tracing is paused."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tracemalloc
import types
from pathlib import Path
from typing import Any

import pytest
from _allocation_sites_helpers import FakeShell, make_sites, new_sites, recording_torch

pytestmark = pytest.mark.usefixtures("symbolizer_never_ran")


def test_pytorchs_symbolizer_runs_untraced_before_the_gpu_history_starts() -> None:
    # Its first run imports torch._inductor: 102 s under tracemalloc on an H100 machine.
    torch = recording_torch(initialized=True)
    shell, sent, sites = new_sites(torch)
    try:
        state = sites.set_recording(True, host_frames=4, gpu_max_entries=1000)
        assert torch.symbolized == [False]  # type: ignore[attr-defined]
        assert state["gpu"]["state"] == "recording" and state["host"]["state"] == "recording"
        assert state["host"]["restarted_at"] is None  # host tracing started after it
        shell.run_cell("cell-a")
        sites.sites(max_sites=5)
        assert torch.symbolized == [False]  # type: ignore[attr-defined]  # once per process
        assert torch.first_symbolization_traced is False  # type: ignore[attr-defined]
    finally:
        sites.stop()


def test_cuda_coming_up_under_host_recording_restarts_it_around_the_symbolizer() -> None:
    torch = recording_torch(initialized=False)
    shell, sent, sites = new_sites(torch)
    try:
        state = sites.set_recording(True, host_frames=6, gpu_max_entries=1000)
        assert state["gpu"]["state"] == "waiting" and torch.symbolized == []  # type: ignore[attr-defined]
        assert tracemalloc.is_tracing()
        shell.run_cell("cell-a")  # CUDA still down: nothing to prepare
        assert torch.symbolized == []  # type: ignore[attr-defined]
        torch.initialized = True  # the user's cell brought CUDA up
        shell.run_cell("cell-b")
        assert torch.symbolized == [False]  # type: ignore[attr-defined]  # tracemalloc stopped around it
        assert tracemalloc.is_tracing() and tracemalloc.get_traceback_limit() == 6
        recording = sent[-1]["recording"]
        assert recording["gpu"]["state"] == "recording"
        assert recording["host"]["restarted_at"] is not None and recording["host"]["frames"] == 6
        assert recording["host"]["restart_reason"] == "symbolizer"
        sites.sites(max_sites=5)
        assert torch.first_symbolization_traced is False  # type: ignore[attr-defined]
    finally:
        sites.stop()
    assert not tracemalloc.is_tracing()


def test_the_symbolizer_warm_up_is_done_before_the_cells_accounting_reads_its_start() -> None:
    # The warm-up (seconds, ~150 MiB of imports) is the helper's, not the
    # cell's: its hook runs before the per-cell accounting's, which the
    # helper registered at install, long before recording was turned on.
    from IPython.core.events import EventManager, available_events

    torch = recording_torch(initialized=False)
    shell = FakeShell()
    sent: list[dict[str, Any]] = []
    shell.events = EventManager(shell, available_events)  # type: ignore[assignment, arg-type]  # IPython's, on the fake shell
    symbolized_at_cell_start: list[list[bool]] = []

    def accounting_start(info: Any = None) -> None:
        symbolized_at_cell_start.append(list(torch.symbolized))  # type: ignore[attr-defined]

    shell.events.register("pre_run_cell", accounting_start)
    sites = make_sites(torch, shell, sent)
    try:
        sites.set_recording(True, host_frames=6, gpu_max_entries=1000)
        torch.initialized = True  # the user's cell brought CUDA up
        shell.run_cell("cell-b")
        assert symbolized_at_cell_start == [[False]]
        assert shell.events.callbacks["pre_run_cell"] == [sites.pre_run_cell, accounting_start]
    finally:
        sites.stop()
    assert shell.events.callbacks["pre_run_cell"] == [accounting_start]


def test_an_interrupt_during_the_symbolizer_at_a_cell_start_leaves_recording_whole() -> None:
    torch = recording_torch(initialized=False)
    shell, sent, sites = new_sites(torch)
    real_symbolize = torch._C._profiler.symbolize_tracebacks  # type: ignore[attr-defined]

    def interrupted(tracebacks: list[Any]) -> list[Any]:
        raise KeyboardInterrupt

    try:
        sites.set_recording(True, host_frames=5, gpu_max_entries=1000)
        torch.initialized = True
        torch._C._profiler.symbolize_tracebacks = interrupted  # type: ignore[attr-defined]
        shell.run_cell("cell-a")  # no exception reaches IPython
        assert tracemalloc.is_tracing() and tracemalloc.get_traceback_limit() == 5
        state = sent[-1]["recording"]  # the host restart is said
        assert state["gpu"]["state"] == "waiting" and state["host"]["restarted_at"] is not None
        assert state["host"]["restart_reason"] == "symbolizer"
        torch._C._profiler.symbolize_tracebacks = real_symbolize  # type: ignore[attr-defined]
        shell.run_cell("cell-b")  # tried again
        assert torch.symbolized == [False]  # type: ignore[attr-defined]
        assert sent[-1]["recording"]["gpu"]["state"] == "recording"
    finally:
        sites.stop()


def test_an_interrupted_record_request_leaves_recording_off_and_says_so() -> None:
    torch = recording_torch(initialized=True)

    def interrupted(tracebacks: list[Any]) -> list[Any]:
        raise KeyboardInterrupt

    torch._C._profiler.symbolize_tracebacks = interrupted  # type: ignore[attr-defined]
    shell, sent, sites = new_sites(torch)
    with pytest.raises(KeyboardInterrupt):  # the request's answer: interrupted
        sites.set_recording(True, host_frames=4, gpu_max_entries=1000)
    assert sites.enabled is False and not tracemalloc.is_tracing()
    assert sent[-1]["recording"]["host"]["state"] == "off" and sent[-1]["recording"]["gpu"]["state"] == "off"
    assert shell.events.callbacks == {"pre_run_cell": [], "post_run_cell": []}


def test_a_symbolizer_that_already_ran_is_not_run_again() -> None:
    sys.modules["torch._inductor"] = types.ModuleType("torch._inductor")  # the user compiled a model
    torch = recording_torch(initialized=False)
    shell, sent, sites = new_sites(torch)
    try:
        sites.set_recording(True, host_frames=4, gpu_max_entries=1000)
        torch.initialized = True
        shell.run_cell("cell-a")
        assert torch.symbolized == []  # type: ignore[attr-defined]
        assert sent[-1]["recording"]["gpu"]["state"] == "recording"
        assert sent[-1]["recording"]["host"]["restarted_at"] is None
    finally:
        sites.stop()


def test_preparing_real_torchs_symbolizer_imports_what_its_first_run_does() -> None:
    # In a process of its own: a first run, and no import of real torch into this one.
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed")
    code = (
        "import sys, torch\n"
        "from jupyterlab_vram_helper.allocations.gpu_allocations import prepare_symbolizer, symbolizer_ready\n"
        "before = symbolizer_ready()\n"
        "prepare_symbolizer(torch)\n"
        "print(before, symbolizer_ready())\n"
    )
    helper = Path(__file__).resolve().parents[3] / "python_helper"
    env = dict(os.environ, PYTHONPATH=str(helper))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True"]


def test_per_cell_figures_due_while_host_tracing_is_paused_wait_for_it() -> None:
    # The symbolizer runs on the main thread with host tracing stopped; the
    # sender thread's per-cell figures would lack the host's meanwhile.
    import time

    shell, sent, sites = new_sites(None)
    try:
        sites.set_recording(True, host_frames=2, gpu_max_entries=1000)
        sites.host.paused = True
        shell.run_cell("cell-a")
        result = types.SimpleNamespace(info=types.SimpleNamespace(cell_id="cell-a"), execution_count=1)
        for cb in list(shell.events.callbacks["post_run_cell"]):
            cb(result)
        assert [m for m in sent if m["type"] == "cell_alive"] == []
        sites.host.paused = False
        deadline = time.monotonic() + 5
        while not [m for m in sent if m["type"] == "cell_alive"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [m for m in sent if m["type"] == "cell_alive"], "the figures never came once tracing resumed"
    finally:
        sites.stop()
