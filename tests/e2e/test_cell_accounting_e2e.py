"""Per-cell memory accounting end to end: a real ipykernel, real CPU torch.

The helper is bootstrapped the way the frontend does it and a comm is open;
cells are executed through jupyter_client and the `cell` messages checked.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from kernel_harness import CellSession as Session
from kernel_harness import forget_last_error, live_helper_kernel, open_helper_comm
from kernel_harness import run_silently as _silently

pytestmark = pytest.mark.kernel

MB = 1 << 20
TENSOR_BYTES = 200_000_000  # torch.ones(50_000_000) in float32
FAST = {"interval_s": 0.2, "heartbeat_s": 1.0}


@pytest.fixture(scope="module")
def session(bootstrap: str) -> Iterator[Session]:
    with live_helper_kernel(bootstrap, FAST) as (kernel, comm_id):
        s = Session(kernel, comm_id)
        s.run("import gc, sys, weakref, torch")
        yield s


def _within(value: int, expected: int, tolerance: float = 0.10) -> bool:
    return abs(value - expected) <= tolerance * expected


def test_a_200mb_tensor_and_its_release(session: Session) -> None:
    made = session.run("x = torch.ones(50_000_000)", cell_id="cell-alloc")
    reply, record = made["reply"], made["record"]
    assert reply["status"] == "ok"
    assert record["status"] == "ok" and record["error"] is None
    assert record["cell_id"] == "cell-alloc"
    assert record["execution_count"] == reply["execution_count"]
    host = record["host"]
    delta = host["rss_after_bytes"] - host["rss_before_bytes"]
    assert _within(delta, TENSOR_BYTES), delta
    assert host["rss_peak_bytes"] >= host["rss_after_bytes"]
    assert host["peak_exact"] is True and record["peak_exact"] is True  # VmHWM reset works here
    assert record["gpus"] == []  # CPU torch: CUDA never initialised
    assert 0 <= record["duration_s"] < 30
    assert abs(record["started"] - time.time()) < 60

    session.run("w = weakref.ref(x)")
    freed = session.run("del x; gc.collect()")["record"]
    drop = freed["host"]["rss_before_bytes"] - freed["host"]["rss_after_bytes"]
    assert _within(drop, TENSOR_BYTES), drop
    assert freed["host"]["rss_peak_bytes"] >= freed["host"]["rss_before_bytes"]
    # The helper measured that tensor twice and holds no reference to it.
    assert session.k.eval("w() is None") is True


def test_transient_peak_is_seen_in_the_cell(session: Session) -> None:
    record = session.run("y = torch.ones(25_000_000); del y")["record"]  # 100 MB, freed in the cell
    host = record["host"]
    assert abs(host["rss_after_bytes"] - host["rss_before_bytes"]) < 20 * MB
    assert _within(host["rss_peak_bytes"] - host["rss_before_bytes"], 100_000_000, 0.15)
    assert host["peak_exact"] is True


def test_a_request_queued_behind_a_cell_frees_after_the_cells_figures(session: Session) -> None:
    # "Free memory" clicked while a cell runs goes out as the cell ends and
    # runs within the sender's window: what it frees is not the cell's.
    session.run("class Cycle: pass")
    before = len(session.records())
    cell = session.k.submit("c = Cycle(); c.me = c; c.t = torch.ones(50_000_000); del c", cell_id="cell-cycle")
    session.k.send_comm(session.comm_id, {"type": "free_memory", "request_id": "free-behind", "actions": ["gc"]})
    assert session.k.wait_reply(cell)["status"] == "ok"
    reply = session.k.wait_for(session.comm_id, lambda d: d.get("request_id") == "free-behind")
    assert reply["type"] == "reply", reply
    record = session.next_record(before)
    assert record["cell_id"] == "cell-cycle"
    held = record["host"]["rss_after_bytes"] - record["host"]["rss_before_bytes"]
    assert _within(held, TENSOR_BYTES), held  # the cycle still held the tensor when the cell ended
    freed = record["host"]["rss_after_bytes"] - session.run("pass")["record"]["host"]["rss_before_bytes"]
    assert _within(freed, TENSOR_BYTES), freed  # the request freed it after


def test_empty_and_blank_cells_make_no_record(session: Session) -> None:
    before = len(session.records())
    for code in ("", "   \n\t", "\n"):
        assert session.k.execute(code)["status"] == "ok"
    session.run("pass")  # a record after them proves the hooks still work
    records = session.records()[before:]
    assert len(records) == 1 and records[0]["status"] == "ok"


def test_silent_execution_makes_no_record(session: Session) -> None:
    before = len(session.records())
    session.k.execute("silent_value = 1", silent=True)
    session.k.eval("silent_value")
    session.settle(0.5)
    assert len(session.records()) == before


def test_a_cell_that_raises(session: Session) -> None:
    made = session.run("raise ValueError('boom ' * 400)")
    reply, record = made["reply"], made["record"]
    assert reply["status"] == "error"
    assert record["status"] == "error"
    assert record["execution_count"] == reply["execution_count"]
    error = record["error"]
    assert error["type"] == "ValueError"
    assert error["message_head"].startswith("boom boom") and len(error["message_head"]) == 1000
    assert error["out_of_memory"] is False


@pytest.mark.parametrize(
    "code,type_name",
    [
        ("raise MemoryError()", "MemoryError"),
        (
            "raise RuntimeError('CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.11 "
            "GiB')",
            "RuntimeError",
        ),
        ("raise torch.OutOfMemoryError('CUDA out of memory. Tried to allocate 20.00 MiB.')", "OutOfMemoryError"),
        ("torch.empty(2**62, dtype=torch.uint8)", None),  # the real CPU allocator failing
    ],
)
def test_out_of_memory_is_recognised(session: Session, code: str, type_name: str | None) -> None:
    record = session.run(code)["record"]
    assert record["status"] == "error"
    if type_name is not None:
        assert record["error"]["type"] == type_name
    assert record["error"]["out_of_memory"] is True, record["error"]


def test_a_syntax_error_is_an_error_before_execution(session: Session) -> None:
    record = session.run("def broken(:\n    pass")["record"]
    assert record["status"] == "error"
    assert record["error"]["type"] == "SyntaxError"


def test_the_result_of_a_cell_is_not_kept_alive(session: Session) -> None:
    session.run("shown = torch.ones(1000); shown_ref = weakref.ref(shown); shown")  # an Out[] value
    # IPython's output cache holds it (Out, _, _N, and their copies in
    # user_ns_hidden, which displayhook.flush() leaves): clear those and the name.
    _silently(
        session,
        "get_ipython().displayhook.flush(); del shown\n"
        "hidden = get_ipython().user_ns_hidden\n"
        "for key in [k for k in hidden if k in ('_', '__', '___') or k[:1] == '_' and k[1:].isdigit()]:\n"
        "    del hidden[key]\n"
        "del hidden",
    )
    assert session.k.eval("(gc.collect(), shown_ref() is None)[1]") is True


def test_the_exception_of_a_failed_cell_is_not_kept_alive(session: Session) -> None:
    session.run(
        "def fails():\n"
        "    big = torch.ones(1000)\n"
        "    globals()['w_failed'] = weakref.ref(big)\n"
        "    raise ValueError('holds big in its frame')\n"
        "fails()"
    )
    assert session.k.eval("w_failed() is not None") is True  # IPython holds it, for %debug
    # Once IPython's references to the traceback (and so the frame) are
    # cleared nothing may be left: the helper read the error's name and
    # dropped it.
    forget_last_error(session)
    assert session.k.eval("(gc.collect(), w_failed() is None)[1]") is True


def test_an_interrupted_cell(session: Session) -> None:
    before = len(session.records())
    msg_id = session.k.submit("import time; time.sleep(20)")
    record_pending = time.monotonic()
    time.sleep(1.0)  # let the sleep start
    session.k.km.interrupt_kernel()
    reply = session.k.wait_reply(msg_id, timeout=30)
    assert reply["status"] == "error" and reply["ename"] == "KeyboardInterrupt"
    record = session.next_record(before)
    assert record["status"] == "interrupted"
    assert record["error"]["type"] == "KeyboardInterrupt"
    assert record["error"]["out_of_memory"] is False
    assert 0.5 < record["duration_s"] < time.monotonic() - record_pending
    # the kernel and the hooks carry on
    assert session.run("1 + 1")["record"]["status"] == "ok"


def test_an_interrupted_cell_that_awaits(session: Session) -> None:
    # ipykernel 7 runs a cell that awaits as a task: an interrupt cancels it.
    before = len(session.records())
    msg_id = session.k.submit("import asyncio\nawait asyncio.sleep(20)")
    time.sleep(1.0)
    session.k.km.interrupt_kernel()
    session.k.wait_reply(msg_id, timeout=30)
    record = session.next_record(before)
    assert record["status"] == "interrupted", record
    assert session.run("1 + 1")["record"]["status"] == "ok"


def test_a_capture_cell_has_one_record_and_a_failure_it_swallowed_has_its_own(session: Session) -> None:
    # %%capture runs its body through run_cell, numbered by IPython as the next cell,
    # with no cell id: no second row of its own ("[n+1] console"), the cell's record covers it.
    before = len(session.records())
    made = session.run("%%capture\nimport numpy as np\nheld = np.ones(10_000_000)\n", cell_id="c-capture")
    count = made["reply"]["execution_count"]
    session.run("1 + 1", cell_id="c-after")
    records = session.records()[before:]
    assert [(r["cell_id"], r["execution_count"]) for r in records] == [("c-capture", count), ("c-after", count + 1)]
    assert records[0]["host"]["rss_after_bytes"] - records[0]["host"]["rss_before_bytes"] > 60_000_000
    # An error the capture swallowed: the cell ends ok, the failure is the cell's too.
    before = len(session.records())
    made = session.run("%%capture\nraise MemoryError('the body fails')\n", cell_id="c-capture-fails")
    assert made["reply"]["status"] == "ok"
    session.run("1 + 1", cell_id="c-after2")
    count = made["reply"]["execution_count"]
    records = session.records()[before:]
    assert [(r["cell_id"], r["execution_count"], r["status"]) for r in records] == [
        ("c-capture-fails", count, "error"),
        ("c-capture-fails", count, "ok"),
        ("c-after2", count + 1, "ok"),
    ]
    assert records[0]["error"]["type"] == "MemoryError"


def test_a_subshell_cell_that_ends_after_the_notebooks_cell_keeps_its_record(session: Session) -> None:
    # ipykernel 7's subshells (JupyterLab's "New Subshell Console for Notebook")
    # run their cells on a thread of their own, beside the notebook's cell.
    k = session.k
    k.kc.control_channel.send(k.kc.session.msg("create_subshell_request", {}))
    reply = k.kc.get_control_msg(timeout=10)
    if reply["content"].get("status") != "ok":
        pytest.skip(f"this ipykernel has no subshells: {reply['content']}")
    subshell = reply["content"]["subshell_id"]
    before = len(session.records())
    main = k.submit("import time\nheld_a = bytearray(100 * 2**20)\ntime.sleep(1)", cell_id="main-cell")
    time.sleep(0.5)
    content = {
        "code": "import time\nheld_b = bytearray(50 * 2**20)\ntime.sleep(2)",
        "silent": False,
        "store_history": True,
        "user_expressions": {},
        "allow_stdin": False,
        "stop_on_error": True,
    }
    message = k.kc.session.msg("execute_request", content, metadata={"cellId": "subshell-cell"})
    message["header"]["subshell_id"] = subshell
    k.kc.shell_channel.send(message)
    k.wait_reply(main, timeout=30)
    deadline = time.monotonic() + 30
    while len(session.records()) < before + 2 and time.monotonic() < deadline:
        k.pump(0.1)
    records = {r["cell_id"]: r for r in session.records()[before:]}
    assert sorted(records) == ["main-cell", "subshell-cell"], records
    assert records["subshell-cell"]["status"] == "ok"
    assert records["subshell-cell"]["duration_s"] > 1.5


def test_run_of_a_script(session: Session, tmp_path) -> None:
    script = tmp_path / "allocate.py"
    script.write_text("import torch\nscript_tensor = torch.ones(25_000_000)\nprint('script done')\n")
    before = len(session.records())
    made = session.run(f"%run {script}")
    assert made["reply"]["status"] == "ok"
    records = session.records()[before:]
    assert len(records) == 1  # %run is one cell, not one per statement
    host = made["record"]["host"]
    assert _within(host["rss_after_bytes"] - host["rss_before_bytes"], 100_000_000), host
    session.run("del script_tensor; gc.collect()")


def test_a_console_cell_has_no_cell_id(session: Session) -> None:
    record = session.run("console_value = 2")["record"]  # no metadata.cellId, as from a console
    assert record["cell_id"] is None
    assert record["status"] == "ok"
    assert isinstance(record["execution_count"], int)


def test_records_reach_every_comm_and_history_returns_them(session: Session) -> None:
    k = session.k
    second = open_helper_comm(k)
    try:
        record = session.run("two_frontends = 1", cell_id="cell-two")["record"]
        seen_by_second = k.wait_for(
            second,
            lambda d: d.get("type") == "cells" and any(r["record_id"] == record["record_id"] for r in d["records"]),
        )
        assert record in seen_by_second["records"]

        history = k.request(second, {"type": "history", "request_id": "h1"})
        assert history["type"] == "reply" and history["request_type"] == "history"
        records = history["result"]["records"]
        assert records == session.records()  # every record so far, oldest first
        ids = [r["record_id"] for r in records]
        assert ids == sorted(ids) and len(set(ids)) == len(ids)
    finally:
        k.close_comm(second)


def test_approximate_peaks_when_reset_is_off(session: Session) -> None:
    k = session.k
    reply = k.request(
        session.comm_id, {"type": "configure", "request_id": "off", "config": {"reset_peak_per_cell": False}}
    )
    assert reply["result"]["config"]["reset_peak_per_cell"] is False
    try:
        # 100 MB, freed in the cell: a new high-water mark, so the counter
        # rose during the cell and the peak is exact without a reset.
        high = session.run("a = torch.ones(25_000_000); del a")["record"]["host"]
        assert high["peak_exact"] is True
        assert _within(high["rss_peak_bytes"] - high["rss_before_bytes"], 100_000_000, 0.15)
        session.run("import resource, time; maxrss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss")
        # 50 MB, freed in the cell: below that mark, so the peak can only be
        # sampled (the sampler reads every 0.2 s; the cell lasts 0.6 s).
        record = session.run("z = torch.ones(12_500_000); time.sleep(0.6); del z")["record"]
        host = record["host"]
        assert host["peak_exact"] is False and record["peak_exact"] is False
        assert host["rss_peak_bytes"] >= max(host["rss_before_bytes"], host["rss_after_bytes"])
        assert host["rss_peak_bytes"] - host["rss_before_bytes"] > 40 * MB
        # The process-wide peak a user may be measuring was left alone.
        assert k.eval("resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >= maxrss_kib") is True
    finally:
        k.request(session.comm_id, {"type": "configure", "request_id": "on", "config": {"reset_peak_per_cell": True}})


HAND_OFF_TIMES = r"""
def _watch_hand_offs():
    import sys, time
    from jupyterlab_vram_helper import runtime
    sender = runtime.current().cell_sender
    times = sys.modules.setdefault("__hand_off_times__", [])
    call_soon = sender.call_soon
    def timed(call):
        times.append(time.time())
        return call_soon(call)
    sender.call_soon = timed
    runtime.current().cells._call_soon = timed
_watch_hand_offs()
del _watch_hand_offs
"""


def test_a_lone_cells_record_is_handed_to_the_sender_after_its_idle_status(session: Session) -> None:
    # The wake-up of the sender's thread is kept off the cell's critical
    # path: the kernel's loop hands the round over once the reply and the
    # idle status have gone out.
    assert session.k.eval("__import__('jupyterlab_vram_helper').runtime.current().cells.reply_loop is not None")
    _silently(session, HAND_OFF_TIMES)
    session.settle(0.3)  # the previous cells' rounds are over
    made = session.run("lone = 1")
    _, idle = session.k.status_times(made["reply"]["_msg_id"])
    hand_offs = session.k.eval("__import__('sys').modules['__hand_off_times__']")
    assert len(hand_offs) == 1, hand_offs
    assert hand_offs[0] >= idle, (hand_offs[0], idle)
    assert made["record"]["execution_count"] == made["reply"]["execution_count"]


def test_hooks_printed_nothing(session: Session) -> None:
    texts = [m["content"].get("text", "") for m in session.k.iopub if m["msg_type"] == "stream"]
    assert not any("Error in callback" in t or "jupyterlab-vram" in t for t in texts), texts
    assert [d for d in session.k.comm_data(session.comm_id, "error")] == []
