"""CellMemoryRecorder's records of odd cells: an error's bounded message head, empty, nested,
failing, interrupted and cancelled cells, a user's own peak reset, console cells and odd cell
ids; records hold numbers and names only, and the history keeps the last n."""

from __future__ import annotations

import json
import threading
import types

from cell_harness import GB, MB, Harness, deferred_harness, figures
from fakes import FakeTorch, set_allocator

# --- error records --------------------------------------------------------------------------------


def test_message_head_is_bounded_and_an_unprintable_error_is_survived() -> None:
    class Unprintable(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    h = Harness()
    record = h.cell(error=ValueError("x" * 5000))
    assert len(record["error"]["message_head"]) == 1000
    record = h.cell(error=Unprintable())
    assert record["error"] == {"type": "Unprintable", "message_head": "", "out_of_memory": False}
    assert h.errors_sent() == []


# --- odd cells --------------------------------------------------------------------------------


def test_empty_cell_post_without_pre_makes_no_record() -> None:
    h = Harness()
    info = types.SimpleNamespace(cell_id="c", store_history=True)
    h.recorder.post_run_cell(
        types.SimpleNamespace(info=info, execution_count=None, error_in_exec=None, error_before_exec=None)
    )
    assert h.recorder.history() == [] and h.sent == []


def test_nested_cells_and_an_empty_nested_cell() -> None:
    h = Harness()
    outer = types.SimpleNamespace(cell_id="outer", store_history=True)
    inner = types.SimpleNamespace(cell_id="inner", store_history=False)
    empty = types.SimpleNamespace(cell_id="empty", store_history=False)

    def result(info, count):
        return types.SimpleNamespace(info=info, execution_count=count, error_in_exec=None, error_before_exec=None)

    h.recorder.pre_run_cell(outer)
    h.recorder.pre_run_cell(inner)
    h.recorder.post_run_cell(result(inner, 7))
    h.recorder.post_run_cell(result(empty, None))  # get_ipython().run_cell("") inside the outer cell
    h.recorder.post_run_cell(result(outer, 6))
    # %%capture's body, run_cell's code: part of the cell that ran it, whose record
    # covers it (IPython numbered it as the next cell, with no cell id of its own).
    assert [(r["cell_id"], r["execution_count"]) for r in h.recorder.history()] == [("outer", 6)]


def test_a_nested_run_that_fails_is_recorded_as_its_running_cells() -> None:
    """An out-of-memory error %%capture swallowed: the running cell ends ok, the failure has its record."""
    h = Harness()
    h.shell.execution_count = 7  # IPython already incremented it for the running cell, [6]
    outer = types.SimpleNamespace(cell_id="outer", store_history=True)
    inner = types.SimpleNamespace(cell_id=None, store_history=False, raw_cell="x = make_big()")
    h.recorder.pre_run_cell(outer)
    h.recorder.pre_run_cell(inner)
    h.recorder.post_run_cell(
        types.SimpleNamespace(
            info=inner, execution_count=7, error_before_exec=None, error_in_exec=MemoryError("out of memory")
        )
    )
    h.recorder.post_run_cell(
        types.SimpleNamespace(info=outer, execution_count=6, error_in_exec=None, error_before_exec=None)
    )
    assert [(r["cell_id"], r["execution_count"], r["status"]) for r in h.recorder.history()] == [
        ("outer", 6, "error"),
        ("outer", 6, "ok"),
    ]


def test_a_cell_run_inside_another_keeps_both_peaks_exact(cuda: FakeTorch) -> None:
    """The inner cell's resets must not lose what the outer one reached before it."""
    h, later = deferred_harness(torch=cuda)
    outer = types.SimpleNamespace(cell_id="outer", store_history=True)
    inner = types.SimpleNamespace(cell_id="inner", store_history=False)

    def result(info, count):
        return types.SimpleNamespace(info=info, execution_count=count, error_in_exec=None, error_before_exec=None)

    h.recorder.pre_run_cell(outer)  # RSS 100 MB, allocated 1 GB
    h.rss.set(2 * GB)  # the outer cell's peaks, reached before it runs the inner cell...
    h.rss.set(200 * MB)
    set_allocator(cuda, 0, 3 * GB, 4 * GB)
    set_allocator(cuda, 0, 1 * GB, 4 * GB)
    h.recorder.pre_run_cell(inner)  # ...which resets both counters
    h.rss.set(500 * MB)
    set_allocator(cuda, 0, 2 * GB, 4 * GB)
    failed = result(inner, 7)
    failed.error_in_exec = ValueError("the nested code fails: it gets a record of its own")
    h.recorder.post_run_cell(failed)
    h.rss.set(300 * MB)  # the outer cell goes on
    set_allocator(cuda, 0, 1 * GB, 4 * GB)
    h.recorder.post_run_cell(result(outer, 6))
    later.run()
    inner_record, outer_record = h.recorder.history()
    assert inner_record["host"] == {
        "rss_before_bytes": 200 * MB,
        "rss_after_bytes": 500 * MB,
        "rss_peak_bytes": 500 * MB,
        "peak_exact": True,
    }
    assert outer_record["host"] == {
        "rss_before_bytes": 100 * MB,
        "rss_after_bytes": 300 * MB,
        "rss_peak_bytes": 2 * GB,
        "peak_exact": True,
    }
    assert inner_record["gpus"][0]["allocated_peak_bytes"] == 2 * GB
    assert outer_record["gpus"][0]["allocated_peak_bytes"] == 3 * GB and outer_record["peak_exact"]


def test_the_users_own_peak_reset_in_a_cell_makes_its_peak_approximate_and_keeps_what_was_seen(
    cuda: FakeTorch,
) -> None:
    """Load, reset, train, print max_memory_allocated: the counter forgets what came
    before the user's reset, so the cell's peak is what was seen, said to be approximate."""
    h = Harness(cuda)

    def body():
        set_allocator(cuda, 0, 9 * GB, 10 * GB)  # an 8 GB transient...
        h.recorder.observe(figures(100 * MB, [(0, 9 * GB, 10 * GB)]))  # ...the sampler saw
        set_allocator(cuda, 0, 1 * GB, 10 * GB)
        cuda.cuda.reset_peak_memory_stats(0)  # the user's own measurement starts
        set_allocator(cuda, 0, 1 * GB + 100 * MB, 10 * GB)

    gpu = h.cell(body)["gpus"][0]
    assert gpu["allocated_peak_bytes"] == 9 * GB and gpu["peak_exact"] is False

    def unseen():
        set_allocator(cuda, 0, 9 * GB, 10 * GB)  # a transient no sample caught
        set_allocator(cuda, 0, 512 * MB, 10 * GB)
        cuda.cuda.reset_peak_memory_stats(0)  # the counter falls below the value at the start

    gpu = h.cell(unseen)["gpus"][0]
    assert gpu["allocated_before_bytes"] == 1 * GB + 100 * MB
    assert gpu["allocated_peak_bytes"] == 1 * GB + 100 * MB and gpu["peak_exact"] is False

    def own_reset_only():
        set_allocator(cuda, 0, 3 * GB, 10 * GB)
        set_allocator(cuda, 0, 1 * GB, 10 * GB)

    gpu = h.cell(own_reset_only)["gpus"][0]
    assert gpu["allocated_peak_bytes"] == 3 * GB and gpu["peak_exact"] is True


def test_an_interrupted_notebook_cell_beside_a_subshell_cell_is_the_one_recorded_interrupted() -> None:
    """ipykernel 7 ends a cancelled (awaiting) cell with post_run_cell(None), on the
    main thread: a subshell's cell that started later, on its own thread, goes on."""
    h = Harness()
    h.shell.execution_count = 5
    notebook = types.SimpleNamespace(cell_id="notebook", store_history=True, raw_cell="await x")
    subshell = types.SimpleNamespace(cell_id="subshell", store_history=True, raw_cell="y = 1")
    h.recorder.pre_run_cell(notebook)
    started, finish = threading.Event(), threading.Event()

    def subshell_thread() -> None:
        h.recorder.pre_run_cell(subshell)
        started.set()
        finish.wait(5)
        h.recorder.post_run_cell(
            types.SimpleNamespace(info=subshell, execution_count=9, error_in_exec=None, error_before_exec=None)
        )

    thread = threading.Thread(target=subshell_thread)
    thread.start()
    assert started.wait(5)
    h.recorder.post_run_cell(None)  # the notebook's cell is interrupted while it awaits
    finish.set()
    thread.join(5)
    assert sorted((r["cell_id"], r["status"]) for r in h.recorder.history()) == [
        ("notebook", "interrupted"),
        ("subshell", "ok"),
    ]
    assert h.recorder._pending == []


def test_cancelled_cell_is_interrupted_with_the_expected_count() -> None:
    h = Harness()
    h.shell.execution_count = 42  # IPython already incremented it for this stored cell
    h.recorder.pre_run_cell(types.SimpleNamespace(cell_id=None, store_history=True))
    h.recorder.post_run_cell(None)  # ipykernel: the cell's coroutine was cancelled
    record = h.last()
    assert (record["status"], record["error"], record["execution_count"], record["cell_id"]) == (
        "interrupted",
        None,
        41,
        None,
    )


def test_console_cell_and_odd_cell_ids() -> None:
    h = Harness()
    assert h.cell(cell_id=None)["cell_id"] is None
    assert h.cell(cell_id="")["cell_id"] is None
    assert h.cell(cell_id=123)["cell_id"] is None  # type: ignore[arg-type]
    assert h.cell(cell_id="x" * 1000)["cell_id"] == "x" * 256


def test_records_are_numbers_and_names_only(cuda: FakeTorch) -> None:
    h = Harness(cuda)
    h.cell(error=type("OutOfMemoryError", (RuntimeError,), {})("CUDA out of memory."))

    def leaves(value):
        if isinstance(value, dict):
            for v in value.values():
                yield from leaves(v)
        elif isinstance(value, list):
            for v in value:
                yield from leaves(v)
        else:
            yield value

    record = h.last()
    assert all(v is None or type(v) in (int, float, str, bool) for v in leaves(record))
    assert json.loads(json.dumps(record)) == record


def test_history_keeps_the_last_n_and_ids_increase() -> None:
    h = Harness(max_records=3)
    for _ in range(5):
        h.cell()
    assert [r["record_id"] for r in h.recorder.history()] == [3, 4, 5]
    assert [r["record_id"] for r in h.cells_sent()] == [1, 2, 3, 4, 5]
