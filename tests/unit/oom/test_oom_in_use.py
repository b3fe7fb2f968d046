"""The names a failing cell works with are not stale references: deleting its
model and optimizer is no fix for the cell that trains them."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest

from jupyterlab_vram_helper.oom.oom_watch import OomWatch, failing_cell_names, names_used_by

GIB = 1 << 30
MESSAGE = (
    "CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of 15.77 GiB of which 48.00 MiB "
    "is free. Including non-PyTorch memory, this process has 15.72 GiB memory in use. Of the allocated memory "
    "15.00 GiB is allocated by PyTorch, and 300.00 MiB is reserved by PyTorch but unallocated."
)


class OutOfMemoryError(RuntimeError):
    """Named like torch's, which the diagnosis recognises by name."""


EARLIER_CELL = """
def train_step(batch):
    return model(batch.inputs)
"""
FAILING_CELL = """
for batch in loader:
    loss = train_step(batch)
    optimizer.step()
"""


def _run_failing_cell(ns: dict[str, Any]) -> BaseException:
    """Run the two cells in ``ns`` as a notebook would; the error the second ends with."""
    exec(compile(EARLIER_CELL, "<cell 1>", "exec"), ns)

    def model(_inputs: Any) -> Any:
        raise OutOfMemoryError(MESSAGE)

    ns.update(model=model, optimizer=object(), inputs=object(), loader=[types.SimpleNamespace(inputs=1)])
    try:
        exec(compile(FAILING_CELL, "<cell 2>", "exec"), ns)
    except OutOfMemoryError as exc:
        return exc
    raise AssertionError("the cell did not fail")


def test_the_names_the_failing_cell_and_its_notebook_functions_use() -> None:
    ns: dict[str, Any] = {}
    exc = _run_failing_cell(ns)
    names = names_used_by(exc, "OutOfMemoryError", MESSAGE, [ns])
    assert names is not None
    # What the cell reads, and the global that train_step (an earlier cell's) reads.
    assert {"loader", "train_step", "optimizer", "model"} <= names
    # What it binds before reading: their earlier values are what a rerun does not need.
    assert not {"batch", "loss"} & names
    assert "inputs" not in names  # an attribute read (batch.inputs), not the global of that name
    # Not this error: nothing is said.
    assert names_used_by(exc, "OutOfMemoryError", "another message", [ns]) is None


def _names_of_failing(cell: str, ns: dict[str, Any]) -> frozenset | None:
    def model(_inputs: Any) -> Any:
        raise OutOfMemoryError(MESSAGE)

    ns.setdefault("model", model)
    try:
        exec(compile(cell, "<cell>", "exec"), ns)
    except OutOfMemoryError as exc:
        return names_used_by(exc, "OutOfMemoryError", MESSAGE, [ns])
    raise AssertionError("the cell did not fail")


def test_a_rerun_cell_does_not_need_the_value_it_is_replacing() -> None:
    # The second run of `logits = model(x)`: the first run's logits is held
    # while the new one is computed; deleting it is the fix.
    names = _names_of_failing("logits = model(x)\n", {"x": 1, "logits": object()})
    assert names == frozenset({"model", "x"})


def test_only_code_that_ran_counts_not_what_the_cell_only_defines() -> None:
    cell = (
        "class Config:\n"
        "    cache = table\n"
        "def unused():\n"
        "    return old\n"
        "scaled = [w * factor for w in weights]\n"
        "out = model(scaled)\n"
    )
    names = _names_of_failing(cell, {"table": 1, "old": 2, "factor": 3, "weights": [1]})
    assert names is not None
    # The comprehension and the class body ran; what the class binds is its own.
    assert {"factor", "weights", "model", "table"} <= names
    assert not {"old", "cache", "scaled", "out"} & names


def test_a_notebook_function_the_cell_called_before_the_error_reads_what_a_rerun_needs() -> None:
    ns: dict[str, Any] = {"raw": 1, "unrelated": 2, "factor": 3}
    exec(
        compile("def preprocess():\n    return scale(raw)\ndef scale(v):\n    return v * factor\n", "<cell 1>", "exec"),
        ns,
    )
    names = _names_of_failing("x = preprocess()\ny = model(x)\n", ns)
    assert names is not None
    assert {"preprocess", "scale", "raw", "factor", "model"} <= names
    assert "unrelated" not in names


def _figures() -> dict[str, Any]:
    return {"host": {}, "gpus": [{"index": 0, "torch": {"allocated_bytes": 15 * GIB}, "nvml": None}]}


def _inspect() -> dict[str, Any]:
    def entry(name: str, gib: float) -> dict[str, Any]:
        return {"name": name, "bytes_by_device": {"cuda:0": int(gib * GIB)}}

    return {
        "entries": [entry("optimizer", 4), entry("model", 2), entry("old_logits", 0.5)],
        "hidden": [],
        "held_bytes_by_device": {"cuda:0": int(6.5 * GIB)},
    }


def test_the_model_and_optimizer_of_the_failing_cell_are_not_stale() -> None:
    watch = OomWatch(read_figures=_figures, inspect=_inspect, names_in_use=lambda t, m: {"model", "optimizer", "loss"})
    d = watch.diagnose("OutOfMemoryError", MESSAGE)
    assert d is not None
    assert [h["label"] for h in d["stale_holders"]] == ["old_logits"]
    assert d["stale_bytes"] == GIB // 2
    assert [(h["label"], h["bytes"]) for h in d["in_use_holders"]] == [("optimizer", 4 * GIB), ("model", 2 * GIB)]
    # Half a GiB of stale names does not make room for the 1 GiB asked for: not the cause.
    assert "stale_references" not in [c["cause"] for c in d["causes"]]


def test_names_in_use_unknown_counts_every_name_as_before() -> None:
    def unknown(_t: str, _m: str) -> frozenset | None:
        raise RuntimeError("no shell")

    d = OomWatch(read_figures=_figures, inspect=_inspect, names_in_use=unknown).diagnose("OutOfMemoryError", MESSAGE)
    assert d is not None and d["stale_bytes"] == int(6.5 * GIB) and d["in_use_holders"] == []
    assert [c["cause"] for c in d["causes"]][0] == "stale_references"


class _Shell:
    def __init__(self, ns: dict[str, Any]):
        self.user_ns = ns
        self.user_global_ns = ns


def test_by_default_the_names_come_from_ipythons_last_error(monkeypatch: pytest.MonkeyPatch) -> None:
    ns: dict[str, Any] = {}
    exc = _run_failing_cell(ns)
    fake_ipython = types.ModuleType("IPython")
    fake_ipython.get_ipython = lambda: _Shell(ns)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "IPython", fake_ipython)
    monkeypatch.setattr(sys, "last_value", exc, raising=False)
    del exc
    names = failing_cell_names("OutOfMemoryError", MESSAGE)
    assert names is not None and {"model", "optimizer"} <= names
    d = OomWatch(read_figures=_figures, inspect=_inspect).diagnose("OutOfMemoryError", MESSAGE)
    assert d is not None and [h["label"] for h in d["stale_holders"]] == ["old_logits"]
    # No shell (a plain Python process): unknown, never an error.
    fake_ipython.get_ipython = lambda: None  # type: ignore[attr-defined]
    assert failing_cell_names("OutOfMemoryError", MESSAGE) is None


def test_a_plain_inspect_result_leaves_the_names_in_use_out_too() -> None:
    def plain() -> dict[str, Any]:
        result = _inspect()
        del result["held_bytes_by_device"]
        return result

    d = OomWatch(read_figures=_figures, inspect=plain, names_in_use=lambda t, m: {"model"}).diagnose(
        "OutOfMemoryError", MESSAGE
    )
    assert d is not None and d["stale_bytes"] == int(4.5 * GIB)
    labels: list[str] = [h["label"] for h in d["stale_holders"]]
    assert labels == ["optimizer", "old_logits"]
