"""Host allocation recording (host_allocations.py) against the real tracemalloc and NumPy."""

from __future__ import annotations

import tracemalloc
import types

import pytest
from fakes import CountsFirstShell

from jupyterlab_vram_helper.allocations import host_allocations
from jupyterlab_vram_helper.allocations.host_allocations import NUMPY_TRACE_DOMAIN, HostRecorder
from jupyterlab_vram_helper.cells.cell_files import CellFiles

np = pytest.importorskip("numpy")

# More than any x86-64 or arm64 process can map (user space is 2**47 or 2**48
# bytes): malloc refuses it whatever the machine's overcommit policy.
IMPOSSIBLE_BYTES = 2**60


def _shell() -> CountsFirstShell:
    shell = CountsFirstShell()
    shell.compile = types.SimpleNamespace(_filename_map={})  # type: ignore[attr-defined]
    return shell


def _failed_numpy_allocation() -> None:
    with pytest.raises(MemoryError):
        np.empty(IMPOSSIBLE_BYTES, dtype=np.uint8)


def _numpy_trace_sizes() -> list:
    return [t.size for t in tracemalloc.take_snapshot().traces if t.domain == NUMPY_TRACE_DOMAIN]


def test_a_numpy_allocation_that_failed_is_not_listed_as_live() -> None:
    recorder = HostRecorder()
    recorder.start(4)
    try:
        held = np.ones(1_000_000)  # 8 MB that do live
        _failed_numpy_allocation()
        # What NumPy leaves behind, and what the listing must not repeat.
        if IMPOSSIBLE_BYTES not in _numpy_trace_sizes():
            pytest.skip(f"NumPy {np.__version__} leaves no trace of a failed allocation: nothing to untrack")
        grouper = recorder.group(CellFiles(_shell()))
        assert grouper is not None
        result = grouper.result("host", 50)
        assert held.nbytes <= result["total_bytes"] < 1 << 30
        assert IMPOSSIBLE_BYTES not in _numpy_trace_sizes()
        assert held.nbytes in _numpy_trace_sizes()  # the live buffer keeps its trace
        del held
    finally:
        recorder.stop()


def test_forgetting_a_failed_allocation_is_harmless_without_tracing_or_failure() -> None:
    recorder = HostRecorder()
    assert recorder.group(CellFiles(_shell())) is None  # not recording: nothing read, nothing raised
    recorder.start(2)
    try:
        kept = np.ones(1000)
        grouper = recorder.group(CellFiles(_shell()))
        assert grouper is not None and grouper.result("host", 50)["total_bytes"] >= kept.nbytes
        assert kept.nbytes in _numpy_trace_sizes()
    finally:
        recorder.stop()


def _untrack_raises(domain: int, pointer: int) -> int:
    raise OSError("the C call failed")


@pytest.mark.parametrize("bound", [None, _untrack_raises], ids=["no PyTraceMalloc_Untrack", "a call that raises"])
def test_forgetting_does_nothing_where_python_lacks_the_untrack_call(monkeypatch, bound) -> None:
    """A Python whose ctypes.pythonapi has no PyTraceMalloc_Untrack binds nothing (``_untrack`` None, bound once):
    forgetting then does nothing and raises nothing, and the listing still works."""
    monkeypatch.setattr(host_allocations, "_untrack_bound", True)
    monkeypatch.setattr(host_allocations, "_untrack", bound)
    recorder = HostRecorder()
    recorder.start(4)
    try:
        held = np.ones(100_000)
        _failed_numpy_allocation()
        before = sorted(_numpy_trace_sizes())
        host_allocations.forget_failed_numpy_allocation()
        assert sorted(_numpy_trace_sizes()) == before  # nothing untracked: a failed allocation's trace stays
        grouper = recorder.group(CellFiles(_shell()))
        assert grouper is not None and grouper.result("host", 50)["total_bytes"] >= held.nbytes
        del held
    finally:
        recorder.stop()
