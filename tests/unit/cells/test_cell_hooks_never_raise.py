"""CellMemoryRecorder's hooks never raise: failing sources still give a record and one error
each, and a hook swallows everything, a KeyboardInterrupt included."""

from __future__ import annotations

import types

import pytest
from cell_harness import Harness, ScriptedRss
from fakes import FakeTorch


class BrokenRss(ScriptedRss):
    def rss_and_peak(self, hold_gil=True):
        raise OSError("proc is gone")


def test_failing_sources_still_give_a_record_and_one_error_each(cuda: FakeTorch) -> None:
    def broken_stats(device=None):
        raise RuntimeError("driver exploded")

    cuda.cuda.memory.memory_stats_as_nested_dict = broken_stats
    cuda.cuda.memory_stats_as_nested_dict = broken_stats
    h = Harness(cuda, rss=BrokenRss())
    for _ in range(3):
        record = h.cell()  # must not raise
    assert record["status"] == "ok" and record["gpus"] == []
    assert record["host"]["rss_before_bytes"] is None and record["host"]["peak_exact"] is False
    errors = h.errors_sent()
    assert {e["code"] for e in errors} == {"internal"}
    assert len(errors) == 4  # RSS at start and after, torch at start and at end: each once, not per cell
    assert all("per-cell accounting" in e["message"] for e in errors)


# An interrupt landing inside a hook; an exit raised by a user object's method
# the helper's reads called (the hooks run no cell code: ending the kernel there
# would be an accident). IPython would print either into the cell's output.
@pytest.mark.parametrize("exception_class", [KeyboardInterrupt, SystemExit, GeneratorExit])
def test_a_hook_swallows_everything(monkeypatch: pytest.MonkeyPatch, exception_class: type) -> None:
    h = Harness()

    def explode(*a):
        raise exception_class()

    monkeypatch.setattr(h.recorder, "_wall_clock", explode)  # called early in pre_run_cell
    monkeypatch.setattr(h.recorder, "_clock", explode)  # the first thing post_run_cell does
    for _ in range(3):
        h.recorder.pre_run_cell(types.SimpleNamespace())
        h.recorder.post_run_cell(None)
    errors = h.errors_sent()
    assert [e["code"] for e in errors] == ["internal", "internal"]  # start and end, each once
    assert f"measuring the cell start failed: {exception_class.__name__}" in errors[0]["message"]
