"""Cleanup clearing the hidden holders: the output cache's copies, and the last error's traceback
(its frames' locals freed, a generator in the error chain left running, locals the listing read
freed while something keeps the frame, nothing outliving the user's own clear_frames)."""

from __future__ import annotations

import gc
import sys
import traceback
import weakref
from collections.abc import Generator

import pytest
from cleanup_harness import FakeShell
from fakes import inner_frame

from jupyterlab_vram_helper.cleanup.cleanup import Cleanup

real_torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")
pytestmark = pytest.mark.usefixtures("real_torch", "sys_last_restored")


def test_clearing_the_output_cache_drops_the_hidden_copies(cleanup: Cleanup, shell: FakeShell) -> None:
    t = real_torch.zeros(100)
    shell.displayhook.show(1, t)
    w = weakref.ref(t)
    del t
    out = cleanup.delete(cleanup.inspect()["listing_id"], [], ["output_cache"], [])
    assert out["cleared"] == ["output_cache"]
    assert w() is None
    assert shell.user_ns_hidden["_"] == "" and shell.user_ns["_"] == ""


def record_last_error(monkeypatch: pytest.MonkeyPatch, shell: FakeShell, exc: BaseException) -> None:
    """What IPython keeps of an error that ended a cell: sys.last_* and the last result
    (put back after the test by sys_last_restored)."""
    sys.last_type = type(exc)
    sys.last_value = exc
    sys.last_traceback = exc.__traceback__
    shell.last_execution_result.error_in_exec = exc


def test_clearing_the_traceback_frees_frame_locals(
    cleanup: Cleanup, shell: FakeShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail() -> None:
        t = real_torch.zeros(250)  # noqa: F841
        raise RuntimeError("boom")

    try:
        fail()
    except RuntimeError as exc:
        record_last_error(monkeypatch, shell, exc)
    result = cleanup.inspect()
    [tb] = [h for h in result["hidden"] if h["holder"] == "last_traceback"]
    assert tb["total_bytes"] == 1000 and "fail(): t" in tb["summary"] and "%debug" in tb["warning"]
    out = cleanup.delete(result["listing_id"], [], ["last_traceback"], [])
    assert out["cleared"] == ["last_traceback"]
    # Gone, not None: IPython's %debug tells "no traceback" by hasattr.
    assert not hasattr(sys, "last_value") and not hasattr(sys, "last_traceback")
    assert shell.last_execution_result.error_in_exec is None
    assert not [h for h in cleanup.inspect()["hidden"] if h["holder"] == "last_traceback"]


def test_clearing_the_traceback_leaves_a_generator_in_the_error_chain_running(
    cleanup: Cleanup, shell: FakeShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    errors: list[BaseException] = []

    def worker() -> Generator[int, int, None]:
        total = 0
        while True:
            try:
                total += yield total
                raise ValueError("bad item")
            except ValueError as exc:
                errors.append(exc)  # its traceback holds this generator's suspended frame

    w = worker()
    next(w)
    w.send(1)
    try:
        raise RuntimeError("a step failed") from errors[-1]
    except RuntimeError as exc:
        record_last_error(monkeypatch, shell, exc)
    out = cleanup.delete(cleanup.inspect()["listing_id"], [], ["last_traceback"], [])
    assert out["cleared"] == ["last_traceback"]
    assert w.send(2) == 3  # not finalised: the user's generator goes on


def test_clearing_the_traceback_frees_locals_the_listing_read_while_something_keeps_the_frame(
    cleanup: Cleanup, shell: FakeShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Big:
        payload = bytearray(1 << 20)

    probes: list[weakref.ref] = []

    def fail() -> None:
        big = Big()
        probes.append(weakref.ref(big))
        data = bytearray(1 << 20)  # noqa: F841 -- what makes the listing read the frame's locals
        raise RuntimeError("boom")

    try:
        fail()
    except RuntimeError as exc:
        record_last_error(monkeypatch, shell, exc)
        kept = exc.__traceback__  # a traceback the user kept: its frames outlive the clearing
    frame = inner_frame(kept)
    result = cleanup.inspect()  # reads fail()'s f_locals: on 3.10-3.12 a snapshot stays on the frame
    [tb] = [h for h in result["hidden"] if h["holder"] == "last_traceback"]
    assert "fail(): data" in tb["summary"]
    cleanup.delete(result["listing_id"], [], ["last_traceback"], [])
    gc.collect()
    assert probes[0]() is None
    assert frame.f_code.co_name == "fail"  # the frame itself is still there
    # the notebook's namespace (a module-level frame's f_locals) is untouched
    assert shell.user_ns["In"] == [] and "get_ipython" in shell.user_ns


def test_reading_a_failed_functions_locals_does_not_outlive_the_users_own_clear_frames(
    cleanup: Cleanup, shell: FakeShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The out-of-memory diagnosis reads the last error's frames (held_references);
    # the user then frees them the usual way, with traceback.clear_frames.
    probes: list[weakref.ref] = []

    def fail_holding() -> None:
        held = real_torch.zeros(1 << 18)  # a local the listing reads
        probes.append(weakref.ref(held))
        raise RuntimeError("boom")

    try:
        fail_holding()
    except RuntimeError as exc:
        record_last_error(monkeypatch, shell, exc)
        kept = exc
    [tb] = [h for h in cleanup.held_references()["hidden"] if h["holder"] == "last_traceback"]
    assert "fail_holding(): held" in tb["summary"]
    traceback.clear_frames(kept.__traceback__)
    gc.collect()
    assert probes[0]() is None  # no snapshot of ours keeps `held` alive
    frame = inner_frame(kept.__traceback__)
    assert frame.f_locals == {}  # read again: the cleared frame, as without us
