"""Our IPython hooks never raise into IPython, a SystemExit included: the hooks run
no cell code, only the helper's reads, and an exit from one of those (a user
object's __sizeof__ while the out-of-memory diagnosis sizes the namespace) would
end the kernel. The cell hooks' own case, with an interrupt's, is
test_cell_hooks_never_raise.py's test_a_hook_swallows_everything."""

from __future__ import annotations

import types

import pytest
from cell_harness import Harness
from fakes import CountsFirstShell

from jupyterlab_vram_helper.allocations.allocation_sites import AllocationSites

EXITS = [SystemExit, GeneratorExit]


def test_an_exit_in_the_out_of_memory_diagnosis_costs_the_diagnosis_not_the_record() -> None:
    h = Harness()

    def diagnose(type_name: str, message: str):
        raise SystemExit(7)  # an object's __sizeof__, while the namespace is sized

    h.recorder._diagnose_oom = diagnose
    record = h.cell(error=MemoryError("Unable to allocate 8.00 GiB for an array"))
    assert record["status"] == "error" and record["error"]["out_of_memory"]
    assert record["oom"] is None
    errors = h.errors_sent()
    assert len(errors) == 1 and "diagnosing the out-of-memory error failed: SystemExit: 7" in errors[0]["message"]
    assert h.cell()["status"] == "ok"  # the next cell is recorded as ever


@pytest.mark.parametrize("exit_class", EXITS)
def test_the_allocation_hooks_swallow_an_exit(monkeypatch: pytest.MonkeyPatch, exit_class: type) -> None:
    shell = CountsFirstShell()
    sites = AllocationSites(shell=lambda: shell, broadcast=lambda message: None, torch_module=lambda: None)

    raised = []

    def exits(*a):
        raised.append(exit_class)
        raise exit_class(7)

    monkeypatch.setattr(sites._numbering, "at_start", exits)
    monkeypatch.setattr(sites._numbering, "at_end", exits)
    info = types.SimpleNamespace(cell_id="c1", store_history=True, raw_cell="x")
    sites.pre_run_cell(info)  # neither raises (pytest fails a test that an exit leaves)
    sites.post_run_cell(types.SimpleNamespace(info=info, execution_count=1))
    assert raised == [exit_class, exit_class]  # both hooks met the exit: it was swallowed, not avoided
