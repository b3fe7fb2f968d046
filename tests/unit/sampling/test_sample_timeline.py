"""The samples kept for a frontend that comes later (sample_timeline.py), and the sampler's use of them."""

from __future__ import annotations

import json
import math
import sys
from typing import TYPE_CHECKING, cast

from fakes import FakeComm
from test_sampler import MB, Clock, ListOutlet, ScriptedSource

from jupyterlab_vram_helper.config import SamplerConfig
from jupyterlab_vram_helper.sampling.sample_timeline import SampleTimeline, timeline_columns
from jupyterlab_vram_helper.sampling.sampler import Sampler

if TYPE_CHECKING:
    from jupyterlab_vram_helper.protocol_types import HostFigures

GB = 1 << 30


def host(rss: int | None) -> HostFigures:
    """Host figures with the RSS alone: all of them the timeline keeps."""
    return cast("HostFigures", {"rss_bytes": rss})


def gpu(index, allocated=None, reserved=None, process=None, torch=True, nvml=True):
    return {
        "index": index,
        "name": f"GPU {index}",
        "total_bytes": 80 * GB,
        "torch": {"allocated_bytes": allocated, "reserved_bytes": reserved} if torch else None,
        "nvml": {"used_bytes": 1, "total_bytes": 80 * GB, "process_used_bytes": process} if nvml else None,
        "tensorflow": None,
    }


def test_columns_give_each_figure_back_exactly_with_null_where_unknown() -> None:
    timeline = SampleTimeline()
    big = 2**53 - 1  # the largest integer a double (and a JavaScript number) holds exactly
    timeline.add(1000.25, host(500 * MB), [gpu(0, 3 * GB + 1, 4 * GB, big)])
    timeline.add(1001.5, host(None), [gpu(0, None, 4 * GB, None, nvml=True)])
    timeline.add(1002.75, host(7), [gpu(0, torch=False, nvml=False)])
    columns = timeline_columns(timeline.rows())
    assert columns == {
        "times": [1000.25, 1001.5, 1002.75],
        "rss_bytes": [500 * MB, None, 7],
        "gpus": [
            {
                "index": 0,
                "allocated_bytes": [3 * GB + 1, None, None],
                "reserved_bytes": [4 * GB, 4 * GB, None],
                "process_used_bytes": [big, None, None],
            }
        ],
    }
    assert all(type(v) is int for v in columns["rss_bytes"] if v is not None)
    json.dumps(columns, allow_nan=False)  # no NaN reaches the wire


def test_a_gpu_that_appears_later_is_null_before_it() -> None:
    timeline = SampleTimeline()
    timeline.add(1.0, host(1), [])
    timeline.add(2.0, host(2), [gpu(3, 10, 20, 30), gpu(1, 11, 21, None)])
    columns = timeline_columns(timeline.rows())
    assert [g["index"] for g in columns["gpus"]] == [1, 3]
    assert columns["gpus"][1] == {
        "index": 3,
        "allocated_bytes": [None, 10],
        "reserved_bytes": [None, 20],
        "process_used_bytes": [None, 30],
    }


def test_it_keeps_the_newest_rows_within_its_capacity() -> None:
    timeline = SampleTimeline(capacity=3)
    for t in range(10):
        timeline.add(float(t), host(t), [])
    assert timeline_columns(timeline.rows())["times"] == [7.0, 8.0, 9.0]


def test_a_gap_is_kept_once_and_only_after_a_row() -> None:
    timeline = SampleTimeline()
    timeline.mark_gap(1.0)  # nothing before it: no gap
    timeline.add(2.0, host(5), [gpu(0, 1, 2, 3)])
    timeline.mark_gap(3.0)
    timeline.mark_gap(4.0)  # still the same unwatched stretch
    timeline.add(5.0, host(6), [gpu(0, 1, 2, 3)])
    columns = timeline_columns(timeline.rows())
    assert columns["times"] == [2.0, 3.0, 5.0]
    assert columns["rss_bytes"] == [5, None, 6]
    assert columns["gpus"][0]["allocated_bytes"] == [1, None, 1]


def test_a_full_timeline_with_one_gpu_stays_small() -> None:
    timeline = SampleTimeline()
    for t in range(5000):
        timeline.add(1e9 + t, host(10 * GB + t), [gpu(0, t, 2 * t, 3 * t)])
    rows = timeline.rows()
    assert len(rows) == 3600
    kept = sum(sys.getsizeof(row) for row in rows)
    assert kept < 300 * 1024, kept


def test_the_sampler_keeps_what_it_sends_and_a_gap_while_no_comm_is_open() -> None:
    clock, source, comm = Clock(), ScriptedSource(), FakeComm()
    outlet = ListOutlet(comm)
    s = Sampler(source, outlet, SamplerConfig(interval_s=1, heartbeat_s=60), clock=clock)
    s.emit([comm], "initial")
    for _ in range(3):  # flat figures: nothing sent, nothing kept
        clock.t += 1
        s.tick()
    source.rss += 10 * MB
    s.tick()
    outlet.comms.clear()
    assert s.tick() is None  # no comm: nothing read
    columns = s.timeline_columns()
    sent = [m for m in comm.sent if m["type"] == "sample"]
    assert len(sent) == 2
    assert columns["times"] == [m["time"] for m in sent] + [source.now()]
    assert columns["rss_bytes"][:2] == [m["host"]["rss_bytes"] for m in sent]
    assert columns["rss_bytes"][2] is None
    assert not any(math.isnan(t) for t in columns["times"])
