"""Per-cell accounting wired into the runtime, channel and sender: records broadcast to every comm
and answered to a history request, and a sender that could not take a round is asked again at the
next cell (when records go out: test_cell_rounds.py)."""

from __future__ import annotations

import threading
import types

from cell_harness import _no_nvml, deferred_harness
from fakes import FakeCommManager, wait_until

from jupyterlab_vram_helper.comm.background_sender import SENDER_THREAD_NAME
from jupyterlab_vram_helper.runtime import Runtime
from jupyterlab_vram_helper.sampling.readers.nvml import NvmlReader
from jupyterlab_vram_helper.sampling.sample import SampleSource


class FakeEvents:
    def __init__(self) -> None:
        self.callbacks: dict = {}

    def register(self, event, cb) -> None:
        self.callbacks.setdefault(event, []).append(cb)

    def unregister(self, event, cb) -> None:
        self.callbacks[event].remove(cb)

    def trigger(self, event, *args) -> None:
        for cb in self.callbacks.get(event, []):
            cb(*args)


def test_records_broadcast_to_every_comm_and_history_request() -> None:
    manager = FakeCommManager()
    shell = types.SimpleNamespace(events=FakeEvents(), execution_count=1)
    rt = Runtime(source=SampleSource(nvml=NvmlReader(load=_no_nvml)), comm_manager=manager, shell=shell)
    rt.install()
    try:
        a = manager.open({"type": "open", "protocol": 1, "config": {"interval_s": 60, "heartbeat_s": 600}})
        b = manager.open({"type": "open", "protocol": 1})
        info = types.SimpleNamespace(cell_id="nb-cell", store_history=True)
        shell.events.trigger("pre_run_cell", info)
        shell.events.trigger(
            "post_run_cell",
            types.SimpleNamespace(info=info, execution_count=1, error_in_exec=None, error_before_exec=None),
        )
        wait_until(lambda: "cells" in a.types() and "cells" in b.types())
        (record_a,) = [m for m in a.sent if m["type"] == "cells"][0]["records"]
        (record_b,) = [m for m in b.sent if m["type"] == "cells"][0]["records"]
        assert record_a == record_b and record_a["cell_id"] == "nb-cell"
        assert SENDER_THREAD_NAME in [t.name for t in threading.enumerate()]

        b.deliver({"type": "history", "request_id": "h"})
        reply = b.sent[-1]
        assert {k: v for k, v in reply.items() if k != "result"} == {
            "type": "reply",
            "request_id": "h",
            "request_type": "history",
        }
        assert reply["result"]["records"] == [record_a]
        # Every sample sent so far, to either comm, is in the timeline.
        sent = {m["seq"]: m for m in a.sent + b.sent if m["type"] == "sample"}
        timeline = reply["result"]["timeline"]
        assert timeline["times"] == [sent[seq]["time"] for seq in sorted(sent)]
        assert timeline["rss_bytes"] == [sent[seq]["host"]["rss_bytes"] for seq in sorted(sent)]
    finally:
        rt.uninstall()
    assert shell.events.callbacks == {"pre_run_cell": [], "post_run_cell": []}
    assert SENDER_THREAD_NAME not in [t.name for t in threading.enumerate()]


def test_a_sender_that_could_not_take_a_round_is_asked_again_at_the_next_cell() -> None:
    # The sender's thread could not start (a cgroup's pids.max): that cell's
    # hook reports it, and the next cell queues a round again.
    h, later = deferred_harness()
    refusals = [RuntimeError("can't start new thread")]

    def call_soon(call) -> None:
        if refusals:
            raise refusals.pop()
        later(call)

    h.recorder._call_soon = call_soon
    h.run_hooks(cell_id="refused")
    assert later.calls == [] and "can't start new thread" in h.errors_sent()[-1]["message"]
    h.run_hooks(cell_id="next")
    later.run()
    assert [r["cell_id"] for r in h.cells_sent()] == ["refused", "next"]
