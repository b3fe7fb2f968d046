"""When a cell's record is finished and sent: the hooks read one file, the sender thread does the rest,
the next cell's start finishes the records still waiting, rounds share a message."""

from __future__ import annotations

import asyncio
import threading
import types
import unittest.mock

from cell_harness import GB, MB, Harness, deferred_harness, stats_reads
from fakes import FakeTorch, known, set_allocator

from jupyterlab_vram_helper.cells.cell_readings import EndedCell


def test_the_hooks_read_one_file_and_reset_the_rest_waits_for_the_sender_thread() -> None:
    h, later = deferred_harness()
    h.run_hooks(lambda: h.rss.moves(500 * MB, 100 * MB))  # leaves VmHWM above the RSS
    later.run()
    h.rss.reads.clear()
    h.recorder.pre_run_cell(info := types.SimpleNamespace(cell_id="c1", store_history=True))
    assert h.rss.reads == ["status"] and h.rss.resets == 1
    h.rss.set(900 * MB)
    h.rss.set(300 * MB)
    h.recorder.post_run_cell(
        types.SimpleNamespace(info=info, execution_count=1, error_in_exec=None, error_before_exec=None)
    )
    assert h.rss.reads == ["status"]  # post_run_cell reads no file
    assert len(later.calls) == 1 and len(h.recorder._records) == 1 and len(h.cells_sent()) == 1
    later.run()
    assert h.rss.reads == ["status", "status, GIL released"]
    record = h.cells_sent()[-1]
    assert record["host"] == {
        "rss_before_bytes": 100 * MB,
        "rss_after_bytes": 300 * MB,
        "rss_peak_bytes": 900 * MB,
        "peak_exact": True,
    }


def test_the_next_cell_finishes_the_last_record_with_one_read_before_it_resets_the_peak() -> None:
    h, later = deferred_harness()
    h.run_hooks(lambda: h.rss.moves(800 * MB, 600 * MB))  # peak 800 MB, ends at 600 MB
    h.rss.reads.clear()
    h.run_hooks(lambda: h.rss.set(650 * MB))  # starts (resets VmHWM) before the sender thread ran
    # one status read serves as the first cell's end and the second's start; no statm read
    assert h.rss.reads == ["status"]
    first, second = h.recorder.history()
    assert (first["host"]["rss_after_bytes"], first["host"]["rss_peak_bytes"]) == (600 * MB, 800 * MB)
    assert (second["host"]["rss_before_bytes"], second["host"]["rss_peak_bytes"]) == (600 * MB, 650 * MB)
    assert first["host"]["peak_exact"] and second["host"]["peak_exact"]
    later.run()  # the sender now sends the records the hooks finished, in order
    assert [r["record_id"] for r in h.cells_sent()] == [1, 2]
    assert h.cells_sent()[0] is h.recorder.history()[0]


def test_a_cell_that_starts_while_the_sender_thread_reads_the_last_ones_end_does_not_reset_under_it() -> None:
    h, later = deferred_harness()
    h.run_hooks(lambda: h.rss.moves(800 * MB, 300 * MB))  # peak 800 MB, waiting for the sender
    about_to_read, go_on = threading.Event(), threading.Event()
    read_now = h.rss.rss_and_peak

    def stalled_read(hold_gil: bool = True) -> tuple[int | None, int | None]:
        if not hold_gil:  # the sender thread: it stalls just before its read
            about_to_read.set()
            go_on.wait(5)
        return read_now(hold_gil)

    h.rss.rss_and_peak = stalled_read  # type: ignore[method-assign]
    sender = threading.Thread(target=later.run)
    sender.start()
    assert about_to_read.wait(5)
    next_cell = threading.Thread(
        target=h.recorder.pre_run_cell, args=(types.SimpleNamespace(cell_id="c2", store_history=True),)
    )
    next_cell.start()
    next_cell.join(0.2)  # it must wait for the sender, not reset VmHWM under it
    go_on.set()
    sender.join(5)
    next_cell.join(5)
    first = h.recorder.history()[0]
    assert (first["host"]["rss_peak_bytes"], first["host"]["peak_exact"]) == (800 * MB, True)
    assert h.rss.resets == 1  # the next cell's reset, after the read


def test_a_subshell_cell_that_ends_while_the_next_cell_stamps_the_waiting_ones_breaks_neither() -> None:
    """A kernel subshell's cell ends on its own thread just as the notebook's next cell gives the
    cells still waiting their end figures: the start is still read, and no error goes out."""
    h, later = deferred_harness()
    h.run_hooks(lambda: h.rss.set(300 * MB), cell_id="a")  # waits for its end figures
    subshell = types.SimpleNamespace(cell_id="s", store_history=True, raw_cell="y = 1")
    starts = threading.Thread(target=h.recorder.pre_run_cell, args=(subshell,))
    starts.start()
    starts.join(5)

    def subshell_cell_ends() -> None:
        h.recorder.post_run_cell(
            types.SimpleNamespace(info=subshell, execution_count=9, error_in_exec=None, error_before_exec=None)
        )

    class Waiting(EndedCell):
        """The waiting cell; the first look at it lets the subshell's thread run its post_run_cell."""

        @property
        def host_read(self) -> bool:
            if not self.__dict__.get("looked"):
                self.__dict__["looked"] = True
                ends = threading.Thread(target=subshell_cell_ends)
                ends.start()
                ends.join(5)
            return self.__dict__["host_read"]

        @host_read.setter
        def host_read(self, value: bool) -> None:
            self.__dict__["host_read"] = value

    (waiting,) = h.recorder._ended
    forced = Waiting.__new__(Waiting)
    for name in EndedCell.__slots__:
        setattr(forced, name, getattr(waiting, name))
    h.recorder._ended[0] = forced
    h.run_hooks(lambda: h.rss.set(400 * MB), cell_id="b")
    later.run()
    assert h.errors_sent() == [] and h.recorder.last_error is None
    records = {r["cell_id"]: r["host"] for r in h.recorder.history()}
    assert sorted(known(cell_id) for cell_id in records) == ["a", "b", "s"]
    assert records["a"]["rss_after_bytes"] == 300 * MB
    assert (records["b"]["rss_before_bytes"], records["b"]["rss_peak_bytes"]) == (300 * MB, 400 * MB)


def test_records_of_cells_that_ended_before_the_sender_ran_go_out_in_one_message() -> None:
    h, later = deferred_harness()
    for _ in range(3):  # a "Run All": the sender thread is still waiting out its round
        h.cell()
    assert h.sent == [] and len(later.calls) == 1  # one round queued, the later cells joined it
    later.run()
    cells = [m for m in h.sent if m["type"] == "cells"]
    assert len(cells) == 1 and [r["record_id"] for r in cells[0]["records"]] == [1, 2, 3]
    h.cell()  # a lone cell later: its own message
    later.run()
    assert [[r["record_id"] for r in m["records"]] for m in h.sent if m["type"] == "cells"] == [[1, 2, 3], [4]]


def test_torch_counters_after_a_cell_are_read_by_the_sender_thread_not_the_hook(cuda: FakeTorch) -> None:
    h, later = deferred_harness(torch=cuda)
    info = types.SimpleNamespace(cell_id="c1", store_history=True)
    h.recorder.pre_run_cell(info)
    assert stats_reads(cuda) == [("memory_stats_as_nested_dict", 0), ("memory_stats_as_nested_dict", 1)]
    set_allocator(cuda, 0, 3 * GB, 4 * GB)
    set_allocator(cuda, 0, 1536 * MB, 4 * GB)
    cuda.calls.clear()
    h.recorder.post_run_cell(
        types.SimpleNamespace(info=info, execution_count=1, error_in_exec=None, error_before_exec=None)
    )
    assert cuda.calls == []  # post_run_cell leaves torch alone
    later.run()  # the sender thread: one reading per device, then the record
    assert stats_reads(cuda) == [("memory_stats_as_nested_dict", 0), ("memory_stats_as_nested_dict", 1)]
    (gpu,) = h.cells_sent()[-1]["gpus"]
    assert (gpu["allocated_before_bytes"], gpu["allocated_after_bytes"], gpu["allocated_peak_bytes"]) == (
        1 * GB,
        1536 * MB,
        3 * GB,
    )
    assert gpu["peak_exact"] is True


def test_the_next_cell_reads_torch_once_for_the_last_cells_end_and_its_own_start(cuda: FakeTorch) -> None:
    h, later = deferred_harness(torch=cuda)

    def cell() -> None:
        set_allocator(cuda, 0, 3 * GB, 4 * GB)
        set_allocator(cuda, 0, 2 * GB, 4 * GB)

    h.run_hooks(cell)
    cuda.calls.clear()

    def second_body():
        # one reading per device, then the resets: the first cell's peak was read before them
        assert [c[0] for c in cuda.calls if c[0] != "device_count"] == (
            ["memory_stats_as_nested_dict"] * 2 + ["reset_peak_memory_stats"] * 2
        )
        set_allocator(cuda, 0, 2560 * MB, 4 * GB)

    h.run_hooks(second_body)
    first, second = h.recorder.history()
    (g1,), (g2,) = first["gpus"], second["gpus"]
    assert (g1["allocated_after_bytes"], g1["allocated_peak_bytes"], g1["peak_exact"]) == (2 * GB, 3 * GB, True)
    assert (g2["allocated_before_bytes"], g2["allocated_peak_bytes"], g2["peak_exact"]) == (2 * GB, 2560 * MB, True)
    later.run()
    assert [r["record_id"] for r in h.cells_sent()] == [1, 2]


def test_a_history_request_finishes_waiting_records() -> None:
    h, later = deferred_harness(listeners=False)
    h.cell(lambda: h.rss.set(700 * MB))
    (record,) = h.recorder.history()
    assert record["host"]["rss_peak_bytes"] == 700 * MB
    later.run()  # the sender thread, later: nothing left to do, and nobody to send to
    assert h.sent == [] and len(h.recorder.history()) == 1


def test_without_a_listener_the_sender_thread_still_reads_the_end_of_the_cell() -> None:
    h, later = deferred_harness(listeners=False)
    h.cell(lambda: h.rss.set(700 * MB))
    assert len(later.calls) == 1
    later.run()
    h.rss.set(5 * GB)  # much later, the user loads something between cells
    (record,) = h.recorder.history()
    assert record["host"]["rss_after_bytes"] == 700 * MB and h.sent == []


def test_no_listener_no_send_but_history_kept() -> None:
    h = Harness(listeners=False)
    h.cell()
    assert h.sent == [] and len(h.recorder.history()) == 1


def test_on_the_kernels_loop_the_round_is_handed_over_from_its_next_step() -> None:
    # The hook returns first (the kernel then sends the reply and the idle
    # status without giving the loop back); the loop's next step wakes the sender.
    h, later = deferred_harness()

    async def cell_then_next_step() -> None:
        h.recorder.reply_loop = asyncio.get_running_loop()
        h.run_hooks(lambda: h.rss.set(300 * MB))
        assert later.calls == []  # not from the hook
        await asyncio.sleep(0)
        assert len(later.calls) == 1
        h.run_hooks()  # joins the round handed over, which has not run yet
        await asyncio.sleep(0)
        assert len(later.calls) == 1

    asyncio.run(cell_then_next_step())
    later.run()
    assert [r["record_id"] for r in h.cells_sent()] == [1, 2]


def test_off_the_kernels_loop_or_inside_a_running_cell_the_round_is_handed_over_at_once() -> None:
    h, later = deferred_harness()
    h.recorder.reply_loop = asyncio.new_event_loop()  # the kernel's loop, not running in this thread
    try:
        h.run_hooks()  # e.g. a kernel subshell's thread, with a loop of its own or none
        assert len(later.calls) == 1
        later.run()

        async def outer_cell() -> None:
            h.recorder.reply_loop = asyncio.get_running_loop()
            h.recorder.pre_run_cell(outer := types.SimpleNamespace(cell_id="outer", store_history=True))
            h.run_hooks(error=ValueError("inner"), store_history=False)  # ends inside the running cell
            assert len(later.calls) == 1  # at once: the loop waits for the running cell
            h.recorder.post_run_cell(
                types.SimpleNamespace(info=outer, execution_count=9, error_in_exec=None, error_before_exec=None)
            )

        asyncio.run(outer_cell())
    finally:
        h.recorder.reply_loop = None
    assert h.recorder.last_error is None


def test_a_closed_loop_hands_the_round_over_at_once() -> None:
    h, later = deferred_harness()
    loop = asyncio.new_event_loop()
    loop.close()
    with unittest.mock.patch("jupyterlab_vram_helper.cells.cell_accounting._running_loop", return_value=loop):
        h.recorder.reply_loop = loop
        h.run_hooks()
    assert len(later.calls) == 1 and h.recorder.last_error is None
