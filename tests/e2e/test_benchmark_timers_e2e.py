"""The benchmarks' part timers install into a real helper kernel and time what they name.

They wrap the helper's internals by attribute (benchmarks/_cell_kernels.py
PART_TIMERS, benchmarks/_sampler_parts.py TICK_PART_TIMERS). A rename in the
helper would break them on the GPU machine, where a lost run is costly: here
they run against the current helper, with the benchmarks' stand-in torch
(CUDA up on two devices), so the torch parts are exercised too.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kernel_harness import Kernel, live_helper_kernel

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from _cell_kernels import PART_TIMERS, PART_TIMES  # noqa: E402
from _common import STANDIN_CUDA  # noqa: E402
from _sampler_parts import TICK_PART_TIMERS, TICK_PART_TIMES, TICK_PARTS_MISSING, summarize  # noqa: E402

pytestmark = pytest.mark.kernel


@pytest.fixture(scope="module")
def kernel(bootstrap: str) -> Iterator[Kernel]:
    with live_helper_kernel(bootstrap, {"interval_s": 0.05}) as (k, _):
        reply = k.execute(STANDIN_CUDA, silent=True, store_history=False)
        assert reply["status"] == "ok", reply
        yield k


def test_the_sampler_tick_timers_time_every_part_a_tick_runs(kernel: Kernel) -> None:
    reply = kernel.execute(TICK_PART_TIMERS, silent=True, store_history=False)
    assert reply["status"] == "ok", reply
    assert kernel.eval(TICK_PARTS_MISSING) == []  # every part's attribute is where the timers look
    deadline = time.monotonic() + 10
    while len(kernel.eval(TICK_PART_TIMES).get("tick", [])) < 10 and time.monotonic() < deadline:
        kernel.pump(0.2)
    summary = summarize(kernel.eval(TICK_PART_TIMES))
    assert summary["tick"]["calls"] >= 10
    for part in ("read", "host", "decide"):
        assert summary[part]["calls_per_tick"] == pytest.approx(1.0, abs=0.1), part
    for part in ("torch", "torch_stats"):  # per device: the stand-in has two
        assert summary[part]["calls_per_tick"] == pytest.approx(2.0, abs=0.2), part
    nvml = kernel.eval("__import__('jupyterlab_vram_helper').runtime.current().source.nvml.available")
    if nvml:  # a machine with a GPU: the stand-in's two devices map to what NVML lists
        assert summary["nvml_memory"]["calls"] > 0
    else:  # no NVML: nothing timed, nothing made up
        assert "nvml" not in summary and "nvml_memory" not in summary
    assert summary["tick"]["us_per_tick"] >= summary["read"]["us_per_tick"] > summary["host"]["us_per_tick"] > 0


def test_the_hook_part_timers_time_the_reads_the_hooks_make(kernel: Kernel) -> None:
    reply = kernel.execute(PART_TIMERS, silent=True, store_history=False)
    assert reply["status"] == "ok", reply
    for _ in range(5):
        assert kernel.execute("pass")["status"] == "ok"
    parts = kernel.eval(PART_TIMES)
    assert len(parts["rss_read"]) >= 5
    # At every cell start: one stats read and one peak reset per stand-in device.
    assert len(parts["torch_stats"]) >= 10 and len(parts["peak_reset"]) >= 10
    # The first cell to end after a round hands the sender its next round.
    assert len(parts["round_queued"]) >= 1
