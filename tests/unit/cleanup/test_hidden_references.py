"""The hidden holders, read and cleared without touching what is the user's: a
``locals()`` dict the user saved, an exception class's own ``__str__``, a
``_`` the user bound themselves."""

from __future__ import annotations

import gc
import sys
import traceback
import weakref
from typing import Any

import pytest
from cleanup_harness import FakeShell
from fakes import inner_frame

from jupyterlab_vram_helper.cleanup.cleanup import Cleanup
from jupyterlab_vram_helper.cleanup.hidden_references import error_title, output_cache_labels, output_cache_objects
from jupyterlab_vram_helper.oom import error_frames

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.usefixtures("real_torch", "sys_last_restored")

SNAPSHOTS = sys.version_info < (3, 13)  # where reading f_locals leaves a dict on the frame


def hidden(result: dict[str, Any], holder: str) -> dict[str, Any]:
    [found] = [h for h in result["hidden"] if h["holder"] == holder]
    return found


def record_last_error(shell: FakeShell, exc: BaseException) -> None:
    """What IPython keeps of an error that ended a cell (sys.last_* put back by sys_last_restored)."""
    sys.last_type, sys.last_value, sys.last_traceback = type(exc), exc, exc.__traceback__
    shell.last_execution_result.error_in_exec = exc


def fail_saving_locals(saved: list[dict[str, Any]]) -> None:
    x = torch.ones(1000)  # noqa: F841 -- in the saved dict
    saved.append(locals())  # on 3.10-3.12: the frame's own f_locals snapshot
    raise ValueError("failed")


def fail_holding(probes: list[weakref.ref]) -> None:
    held = torch.ones(1000)
    probes.append(weakref.ref(held))
    raise ValueError("failed")


def failed_frame(saved: list[dict[str, Any]]) -> Any:
    try:
        fail_saving_locals(saved)
    except ValueError as exc:
        return inner_frame(exc.__traceback__)
    raise AssertionError("did not fail")


# --- a locals() dict the user saved ---------------------------------------------------------


def test_reading_a_failed_functions_locals_leaves_the_locals_dict_the_user_saved() -> None:
    saved: list[dict[str, Any]] = []
    frame = failed_frame(saved)
    assert [name for name, _ in error_frames.frame_locals(frame)] == ["saved", "x"]
    assert list(saved[0]) == ["saved", "x"]  # was emptied: [] (the snapshot cleared under the user)
    # A snapshot nobody else holds is still emptied once read: clear_frames frees its locals.
    probes: list[weakref.ref] = []
    try:
        fail_holding(probes)
    except ValueError as exc:
        kept = exc
    assert [name for name, _ in error_frames.frame_locals(inner_frame(kept.__traceback__))] == ["probes", "held"]
    traceback.clear_frames(kept.__traceback__)
    gc.collect()
    assert probes[0]() is None


def test_only_a_snapshot_nothing_else_holds_counts_as_the_frames() -> None:
    """The reference-count baseline, on this interpreter (measured afresh: the first check calibrates)."""
    error_frames._frame_only_count.cache_clear()

    def fail() -> None:
        x = 1  # noqa: F841
        raise ValueError("failed")

    try:
        fail()
    except ValueError as exc:
        frame = inner_frame(exc.__traceback__)
    snapshot = frame.f_locals
    if not SNAPSHOTS:
        assert not error_frames.only_the_frame_holds(snapshot)  # a view of the frame: nothing to empty
        return
    assert snapshot is frame.f_locals  # the one dict, kept on the frame
    assert error_frames.only_the_frame_holds(snapshot)
    also = [snapshot]  # anyone else's reference
    assert not error_frames.only_the_frame_holds(snapshot)
    del also
    assert error_frames.only_the_frame_holds(snapshot)


def test_an_out_of_memory_diagnosis_leaves_the_locals_dict_the_user_saved(cleanup: Cleanup, shell: FakeShell) -> None:
    saved: list[dict[str, Any]] = []
    try:
        fail_saving_locals(saved)
    except ValueError as exc:
        record_last_error(shell, exc)
    tb = hidden(cleanup.held_references(), "last_traceback")  # what the diagnosis of an OOM error reads
    assert tb["total_bytes"] == 4000
    assert list(saved[0]) == ["saved", "x"]


def test_clearing_the_traceback_leaves_the_locals_dict_the_user_saved(cleanup: Cleanup, shell: FakeShell) -> None:
    saved: list[dict[str, Any]] = []
    probes: list[weakref.ref] = []

    def outer() -> None:
        held = torch.ones(1000)  # in a frame whose locals nobody saved
        probes.append(weakref.ref(held))
        fail_saving_locals(saved)

    try:
        outer()
    except ValueError as exc:
        record_last_error(shell, exc)
        kept = exc.__traceback__  # a traceback the user kept: its frames outlive the clearing
    outer_frame = inner_frame(kept)
    outer_frame.f_locals  # noqa: B018 -- a debugger's read: a snapshot on the frame that nobody holds
    result = cleanup.inspect()
    assert cleanup.delete(result["listing_id"], [], ["last_traceback"], [])["cleared"] == ["last_traceback"]
    assert list(saved[0]) == ["saved", "x"]  # was emptied: the frame's snapshot re-read after clearing
    assert isinstance(saved[0]["x"], torch.Tensor)
    gc.collect()
    assert probes[0]() is None  # what only the traceback held is freed, snapshot or not
    assert not hasattr(sys, "last_value")


# --- the exception's message, without its __str__ --------------------------------------------


class Loud(Exception):
    calls = 0

    def __str__(self) -> str:
        Loud.calls += 1
        print("EXC STR CALLED")
        return "loud"


class Raising(RuntimeError):
    def __str__(self) -> str:
        Loud.calls += 1
        raise RuntimeError("no str for you")


class Argument:
    def __str__(self) -> str:
        Loud.calls += 1
        return "argument"

    __repr__ = __str__


def test_the_title_of_the_last_error_reads_built_in_messages_and_runs_no_str_of_the_users(
    cleanup: Cleanup, shell: FakeShell, capsys: pytest.CaptureFixture
) -> None:
    """Ordinary exceptions keep str()'s text; a __str__ of the user's is never called."""
    ordinary: list[BaseException] = [
        RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB\nsecond line"),
        torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 MiB"),
        KeyError("weights"),
        ValueError(),
        MemoryError(),
        AttributeError("no attribute 'cuda'"),
        FileNotFoundError(2, "No such file or directory", "/data/x.pt"),
        ValueError(1, "two", (3, 4.0)),
        Exception("x" * 200),  # Loud's base, without its loud __str__
    ]
    if sys.version_info >= (3, 11):
        ordinary.append(ExceptionGroup("unhandled errors in a TaskGroup", [ValueError(1)]))  # noqa: F821
    try:
        b"\xff".decode()
    except UnicodeDecodeError as exc:
        ordinary.append(exc)
    for error in ordinary:
        text = str(error).strip().splitlines()[0] if str(error).strip() else ""
        text = text if len(text) <= 80 else text[:79] + "…"
        assert error_title(error) == (f"{type(error).__name__}: {text}" if text else type(error).__name__)
    Loud.calls = 0
    users = [Loud("x"), Raising("y"), ValueError(Argument()), ValueError(1, Argument()), OSError(2, "gone", Argument())]
    assert [error_title(exc) for exc in users] == ["Loud", "Raising", "ValueError", "ValueError", "FileNotFoundError"]

    def step() -> None:
        batch = torch.ones(1000)  # noqa: F841 -- what makes the traceback a holder worth listing
        raise Loud("boom")

    try:
        step()
    except Loud as exc:
        record_last_error(shell, exc)
    assert hidden(cleanup.inspect(), "last_traceback")["label"] == "Traceback of the last error (Loud)"
    assert Loud.calls == 0
    assert "EXC STR CALLED" not in capsys.readouterr().out


# --- a _ the user bound ------------------------------------------------------------------------


def test_a_users_own_underscore_is_not_the_output_cache(cleanup: Cleanup, shell: FakeShell) -> None:
    shown = torch.ones(1000)
    shell.displayhook.show(1, shown)  # Out[1], _1, and IPython's _ (in user_ns and user_ns_hidden)
    mine = torch.ones(2000)
    shell.user_ns["_"] = mine  # the user's own `_ = ...` (IPython's copy stays in user_ns_hidden)
    assert not any(o is mine for o in output_cache_objects(shell))
    assert id(mine) not in output_cache_labels(shell)
    cache = hidden(cleanup.inspect(), "output_cache")
    assert cache["total_bytes"] == 4000  # Out[1] only: was 12000, the user's _ counted as cache


def test_clearing_the_output_cache_keeps_a_users_own_underscore(cleanup: Cleanup, shell: FakeShell) -> None:
    shown = torch.ones(1000)
    shell.displayhook.show(1, shown)
    w = weakref.ref(shown)
    del shown
    shell.user_ns["_"] = str.upper  # gettext-style
    out = cleanup.delete(cleanup.inspect()["listing_id"], [], ["output_cache"], [])
    assert out["cleared"] == ["output_cache"]
    assert w() is None  # the cache is cleared ...
    assert shell.user_ns["_"] is str.upper  # ... the user's _ stays (was reset to '')
    assert shell.user_ns["__"] == "" and shell.user_ns_hidden["_"] == ""
    # and IPython still tells it from its own: its copy differs from the user's value
    assert shell.user_ns_hidden["_"] is not shell.user_ns["_"]


def test_deleting_a_name_keeps_a_users_own_underscore_bound_to_it(cleanup: Cleanup, shell: FakeShell) -> None:
    shell.user_ns["model"] = model = torch.ones(1000)
    shell.user_ns["_"] = model  # the user's second name for it
    del model
    out = cleanup.delete(cleanup.inspect()["listing_id"], ["model"], [], [])
    assert out["deleted"] == ["model"]
    assert isinstance(shell.user_ns.get("_"), torch.Tensor)  # was deleted as an output-cache copy
    assert out["still_alive"] and out["still_alive"][0]["name"] == "model"


# --- a _N the user bound ------------------------------------------------------------------------


def test_a_users_own_numbered_underscore_is_not_the_output_cache(cleanup: Cleanup, shell: FakeShell) -> None:
    shell.displayhook.show(1, torch.ones(1000))  # IPython's _1 (in user_ns and user_ns_hidden)
    mine = torch.ones(2000)
    shell.user_ns["_1"] = mine  # the user's own `_1 = ...` over IPython's
    shell.user_ns["_99"] = mine  # and one no output ever had
    assert not any(o is mine for o in output_cache_objects(shell))
    assert id(mine) not in output_cache_labels(shell)
    cache = hidden(cleanup.inspect(), "output_cache")
    assert cache["total_bytes"] == 4000  # Out[1] only: was 12000, the user's _1 and _99 counted as cache


def test_clearing_the_output_cache_keeps_a_users_own_numbered_underscore(cleanup: Cleanup, shell: FakeShell) -> None:
    shown = torch.ones(1000)
    shell.displayhook.show(1, shown)
    w = weakref.ref(shown)
    del shown
    shell.user_ns["_1"] = mine = torch.ones(10)
    shell.user_ns["_99"] = mine
    out = cleanup.delete(cleanup.inspect()["listing_id"], [], ["output_cache"], [])
    assert out["cleared"] == ["output_cache"]
    assert w() is None  # the cache is cleared ...
    assert shell.user_ns["_1"] is mine and shell.user_ns["_99"] is mine  # ... the user's names stay (were deleted)
    assert "_1" not in shell.user_ns_hidden  # IPython's copy goes


def test_deleting_a_name_keeps_a_users_own_numbered_underscore_bound_to_it(cleanup: Cleanup, shell: FakeShell) -> None:
    shell.user_ns["model"] = model = torch.ones(1000)
    shell.displayhook.show(1, model)  # IPython's _1, Out[1]
    shell.user_ns["_99"] = model  # the user's second name for it
    del model
    out = cleanup.delete(cleanup.inspect()["listing_id"], ["model"], [], [])
    assert out["deleted"] == ["model"]
    assert isinstance(shell.user_ns.get("_99"), torch.Tensor)  # was deleted as an output-cache copy
    assert "_1" not in shell.user_ns and 1 not in shell.user_ns["_oh"]  # IPython's copies go
    assert out["still_alive"] and out["still_alive"][0]["name"] == "model"
