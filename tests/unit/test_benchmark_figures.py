"""The benchmarks' own arithmetic and exit statuses, without a kernel or a GPU.

The GPU kit runs benchmarks/ once per rare GPU session: a figure computed from
the wrong parts, or a probe that fails with a traceback instead of the "no
CUDA" status, costs that session.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def benchmarks(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    return BENCHMARKS


# -- cell_hooks_overhead: where the hooks' time goes ---------------------------------------


def test_the_rest_of_the_hooks_time_takes_out_only_the_reads_made_in_them(benchmarks: Path, capsys) -> None:
    from _cell_kernels import hooks_rest
    from cell_hooks_overhead import print_hook_parts

    # One GPU: one stats read and one peak reset per cell; the sender's round handed off
    # from the event loop after the hooks, every fifth cell.
    parts = {"hooks": 100.0, "rss_read": 20.0, "torch_stats": 45.0, "peak_reset": 1.0, "round_queued": 8.0}
    calls = {"rss_read": 1.0, "torch_stats": 1.0, "peak_reset": 1.0, "round_queued": 0.2}
    assert hooks_rest(parts, calls) == 34.0  # not 26.0: the hand-off is no part of the hooks' time

    print_hook_parts(parts, calls, 300)
    out = capsys.readouterr().out
    assert "the rest 34.0 us" in out
    hooks_line = next(line for line in out.splitlines() if line.strip().startswith("hooks 100.0 us ="))
    assert "round queued" not in hooks_line
    assert "after the hooks" in out and "round queued 8.0 us per call, 0.2 calls per cell" in out


def test_a_read_made_once_per_device_counts_once_per_device(benchmarks: Path) -> None:
    from _cell_kernels import hooks_rest

    # Two devices (the stand-in torch, a two-GPU machine): two stats reads and resets per cell.
    parts = {"hooks": 80.0, "rss_read": 38.0, "torch_stats": 5.0, "peak_reset": 1.0}
    assert hooks_rest(parts, {"rss_read": 1.0, "torch_stats": 2.0, "peak_reset": 2.0}) == 30.0


# -- allocation_recording_cost: the allocator history's RSS ----------------------------------

MIB = 1 << 20
SYMBOLIZER_IMPORTS = 150 * MIB  # turning recording on with CUDA up imports torch._inductor first
HISTORY = 30 * MIB  # what the allocator history's 100,000 events hold


class FakeKernel:
    """A kernel whose RSS moves as a CUDA kernel's does under allocation_recording_cost."""

    def __init__(self) -> None:
        self.rss = 1000 * MIB
        self.recording = False
        self.history_events = 0

    def _cuda_events(self, events: int) -> None:
        if self.recording:  # the history holds its last 100,000 events
            filled = min(100_000, self.history_events + events) - self.history_events
            self.history_events += filled
            self.rss += HISTORY * filled // 100_000

    def execute(self, code: str, **_: Any) -> dict[str, Any]:
        if "range(60000)" in code:
            self._cuda_events(120_000)
        return {"status": "ok"}

    def eval(self, expression: str) -> Any:
        if "statm" in expression:
            return self.rss
        if "timeit" in expression:
            if "torch.empty" in expression:
                self._cuda_events(200_000)
            return 1000.0
        if "is_tracing" in expression:
            return False
        return 1  # tracemalloc's memory, its traces

    def request(self, comm_id: str, data: dict[str, Any], timeout: float = 0) -> dict[str, Any]:
        if data["type"] == "record_allocations":
            if data["enabled"] and not self.recording:
                self.rss += SYMBOLIZER_IMPORTS
            self.recording = data["enabled"]
            return {"type": "reply", "result": {"host": {"frames": 16}}}
        listing = {"elapsed_ms": 1.0, "devices": [{"device": "host", "sites": [], "count": 0}]}
        return {"type": "reply", "result": listing}

    def comm_data(self, comm_id: str) -> list[Any]:
        return []

    def wait_for(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return {"type": "cell_alive", "elapsed_ms": 1.0}

    def shutdown(self) -> None:
        pass


def test_the_historys_rss_growth_leaves_out_what_turning_recording_on_imports(
    benchmarks: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import allocation_recording_cost as bench

    monkeypatch.setattr(bench, "Kernel", FakeKernel)
    monkeypatch.setattr(bench, "attach_helper", lambda *args, **kwargs: "comm")
    monkeypatch.setattr(bench, "bootstrap_code", lambda: "")
    monkeypatch.setattr(bench, "require_device", lambda device: None)
    out = tmp_path / "bench.json"
    monkeypatch.setattr(
        sys,
        "argv",
        ["allocation_recording_cost.py", "--device", "cuda", "--depths", "", "--tries", "1", "--json", str(out)],
    )
    bench.main()
    figures = json.loads(out.read_text())["figures"]
    assert figures["cuda_history_rss_growth_bytes"] == HISTORY


def test_the_rss_is_read_in_bytes_whatever_the_page_size(benchmarks: Path) -> None:
    import resource

    from allocation_recording_cost import RSS_BYTES

    pages = int(Path("/proc/self/statm").read_text().split()[1]) if Path("/proc/self/statm").exists() else None
    if pages is None:
        pytest.skip("no /proc/self/statm here")
    assert eval(RSS_BYTES) == pytest.approx(pages * resource.getpagesize(), rel=0.05)


# -- _common.require_device: "no CUDA" is status 3, whatever the probe did -------------------


@pytest.mark.parametrize(
    "outcome",
    [
        subprocess.CompletedProcess([], -11, stdout="", stderr=""),  # killed by a signal, nothing said
        subprocess.CompletedProcess([], 1, stdout="", stderr="Traceback...\nImportError: libcuda.so.1"),
        subprocess.CompletedProcess([], 0, stdout="no", stderr=""),
        subprocess.TimeoutExpired(["python"], 120),
    ],
)
def test_a_cuda_probe_that_fails_in_any_way_exits_with_the_no_cuda_status(
    benchmarks: Path, monkeypatch: pytest.MonkeyPatch, capsys, outcome: Any
) -> None:
    import _common

    def run(*args: Any, **kwargs: Any) -> subprocess.CompletedProcess:
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    monkeypatch.setattr(_common.subprocess, "run", run)
    with pytest.raises(SystemExit) as exited:
        _common.require_device("cuda")
    assert exited.value.code == _common.NO_CUDA == 3
    assert "no CUDA GPU here" in capsys.readouterr().out


def test_a_cuda_probe_that_sees_cuda_lets_the_benchmark_run(benchmarks: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import _common

    monkeypatch.setattr(
        _common.subprocess, "run", lambda *args, **kwargs: subprocess.CompletedProcess([], 0, stdout="yes", stderr="")
    )
    _common.require_device("cuda")  # returns
