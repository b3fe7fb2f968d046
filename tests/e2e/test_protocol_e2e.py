"""The protocol end to end, against a real ipykernel bootstrapped like the frontend does."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest
from kernel_harness import (
    Kernel,
    attach_helper,
    live_helper_kernel,
    open_helper_comm,
    snapshot_sample,
)

pytestmark = pytest.mark.kernel

FAST = {"interval_s": 0.5, "heartbeat_s": 0.5}
MB = 1 << 20


class Watched:
    """A kernel with the helper bootstrapped and one comm open."""

    def __init__(self, kernel: Kernel, comm_id: str):
        self.k = kernel
        self.comm_id = comm_id
        self.user_cells: list[str] = []  # msg_ids of cells we ran on purpose

    def run(self, code: str, **kw):
        reply = self.k.execute(code, **kw)
        self.user_cells.append(reply["_msg_id"])
        return reply

    def request(self, data):
        return self.k.request(self.comm_id, data)


@pytest.fixture(scope="module")
def watched(bootstrap: str) -> Iterator[Watched]:
    with live_helper_kernel(bootstrap, FAST) as (kernel, comm_id):
        yield Watched(kernel, comm_id)


def test_hello_then_initial_sample(watched: Watched) -> None:
    data = watched.k.comm_data(watched.comm_id)
    assert data[0]["type"] == "hello", data[:2]
    hello = data[0]
    assert hello["protocol"] == 1
    assert hello["helper_version"] == "0.1.0"
    assert hello["pid"] == watched.k.eval("__import__('os').getpid()")
    assert hello["python"] == watched.k.eval("'%d.%d.%d' % __import__('sys').version_info[:3]")
    assert hello["config"] == {
        "interval_s": 0.5,
        "change_threshold_bytes": MB,
        "heartbeat_s": 0.5,
        "reset_peak_per_cell": True,
        "watch_cluster": True,
        "cluster_interval_s": 2.0,
    }
    assert hello["torch"] is None  # nobody imported torch yet
    assert isinstance(hello["nvml"]["available"], bool)
    assert hello["nvml"]["available"] or hello["nvml"]["error"]
    initial = data[1]
    assert initial["type"] == "sample" and initial["reason"] == "initial"
    assert initial["host"]["rss_bytes"] > 10 * MB
    assert 0 < initial["host"]["available_bytes"] <= initial["host"]["total_bytes"]
    assert initial["torch"] == {"imported": False, "cuda_initialized": False}


def test_samples_arrive_while_a_cell_runs(watched: Watched) -> None:
    k = watched.k
    reply = watched.run("import time; time.sleep(3)")
    assert reply["status"] == "ok"
    busy, idle = k.status_times(reply["_msg_id"])
    assert idle - busy >= 3
    during = [m for m in k.samples(watched.comm_id) if busy < _date(m) < idle]
    # interval 0.5 s and heartbeat 0.5 s: about 6 samples; ask for 2.
    assert len(during) >= 2, [(_date(m) - busy, m["content"]["data"]["reason"]) for m in during]


def test_seq_increases_by_one(watched: Watched) -> None:
    seqs = [d["seq"] for d in watched.k.comm_data(watched.comm_id, "sample")]
    assert len(seqs) >= 2
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))


def test_rss_follows_a_200mb_cpu_tensor(watched: Watched) -> None:
    k = watched.k
    watched.run("import torch, gc")
    base = _snapshot(watched)["host"]["rss_bytes"]
    start = len(k.comm_data(watched.comm_id))
    watched.run("x = torch.ones(50_000_000)")  # 200 MB of float32
    high = k.wait_for(
        watched.comm_id,
        lambda d: d.get("type") == "sample" and d["host"]["rss_bytes"] > base + 150 * MB,
        start=start,
    )
    assert high["torch"]["imported"] is True
    start = len(k.comm_data(watched.comm_id))
    watched.run("del x; gc.collect()")
    low = k.wait_for(
        watched.comm_id,
        lambda d: d.get("type") == "sample" and d["host"]["rss_bytes"] < high["host"]["rss_bytes"] - 150 * MB,
        start=start,
    )
    assert low["reason"] in ("change", "heartbeat")


BAD_REQUESTS = [
    ("not a dict", "malformed", "JSON object", None),
    ([1, 2], "malformed", "got array", None),
    ({"request_id": "r1"}, "malformed", "missing field 'type'", "r1"),
    ({"type": 7, "request_id": "r2"}, "malformed", "'type' must be a string", "r2"),
    ({"type": "explode", "request_id": "r3"}, "unknown_type", "'explode'", "r3"),
    ({"type": "ping"}, "malformed", "missing field 'request_id'", None),
    ({"type": "ping", "request_id": 5}, "malformed", "'request_id' must be a string", None),
    ({"type": "configure", "request_id": "r4"}, "malformed", "missing field 'config'", "r4"),
    ({"type": "configure", "request_id": "r5", "config": []}, "invalid_config", "config must be an object", "r5"),
    ({"type": "configure", "request_id": "r6", "config": {"interval_s": "fast"}}, "invalid_config", "interval_s", "r6"),
    ({"type": "configure", "request_id": "r7", "config": {"interval_s": 1e308}}, "invalid_config", "interval_s", "r7"),
    ({"type": "configure", "request_id": "r8", "config": {"interval_s": 0.01}}, "invalid_config", "interval_s", "r8"),
    ({"type": "configure", "request_id": "r9", "config": {"interval_s": True}}, "invalid_config", "interval_s", "r9"),
    (
        {"type": "configure", "request_id": "r10", "config": {"change_threshold_bytes": -1}},
        "invalid_config",
        "change_threshold_bytes",
        "r10",
    ),
    (
        {"type": "configure", "request_id": "r11", "config": {"change_threshold_bytes": 10**400}},
        "invalid_config",
        "change_threshold_bytes",
        "r11",
    ),
    (
        {"type": "configure", "request_id": "r12", "config": {"heartbeat_s": 0.1}},
        "invalid_config",
        "heartbeat_s",
        "r12",
    ),
    (
        {"type": "configure", "request_id": "r13", "config": {"heartbeat_s": 10**6}},
        "invalid_config",
        "heartbeat_s",
        "r13",
    ),
    ({"type": "configure", "request_id": "r14", "config": {"colour": "red"}}, "invalid_config", "'colour'", "r14"),
    (
        {"type": "configure", "request_id": "r15", "config": {"reset_peak_per_cell": 1}},
        "invalid_config",
        "reset_peak_per_cell",
        "r15",
    ),
]


@pytest.mark.parametrize("data,code,needle,request_id", BAD_REQUESTS, ids=[str(i) for i in range(len(BAD_REQUESTS))])
def test_bad_requests_get_errors(watched: Watched, data, code, needle, request_id) -> None:
    answer = (
        watched.request(data)
        if isinstance(data, dict) and isinstance(data.get("request_id"), str)
        else _send_raw(watched, data)
    )
    assert answer["type"] == "error"
    assert answer["code"] == code
    assert needle in answer["message"]
    assert answer["request_id"] == request_id


def test_kernel_still_works_and_config_unchanged_after_bad_requests(watched: Watched) -> None:
    reply = watched.request({"type": "configure", "request_id": "c", "config": {}})
    assert reply["result"]["config"] == {
        "interval_s": 0.5,
        "change_threshold_bytes": MB,
        "heartbeat_s": 0.5,
        "reset_peak_per_cell": True,
        "watch_cluster": True,
        "cluster_interval_s": 2.0,
    }
    reply = watched.run("1+1")
    assert reply["status"] == "ok"
    results = [
        m
        for m in watched.k.iopub
        if m["msg_type"] == "execute_result" and m["parent_header"].get("msg_id") == reply["_msg_id"]
    ]
    assert results[0]["content"]["data"]["text/plain"] == "2"


def test_requests(watched: Watched) -> None:
    assert watched.request({"type": "ping", "request_id": "p"}) == {
        "type": "reply",
        "request_id": "p",
        "request_type": "ping",
        "result": {},
    }
    before = len(watched.k.comm_data(watched.comm_id))
    reply = watched.request({"type": "snapshot", "request_id": "s"})
    snap = [d for d in watched.k.comm_data(watched.comm_id)[before:] if d.get("reason") == "snapshot"]
    assert reply["result"] == {"seq": snap[0]["seq"]}
    reply = watched.request({"type": "configure", "request_id": "c", "config": {"change_threshold_bytes": 2 * MB}})
    assert reply["result"]["config"]["change_threshold_bytes"] == 2 * MB
    watched.request({"type": "configure", "request_id": "c2", "config": {"change_threshold_bytes": MB}})


@pytest.mark.parametrize(
    "data,code",
    [
        ("garbage", "malformed"),
        (42, "malformed"),
        ({}, "malformed"),
        ({"type": "close"}, "malformed"),
        ({"type": "open", "protocol": 99}, "malformed"),
        ({"type": "open", "protocol": 1, "config": {"interval_s": -1}}, "invalid_config"),
        ({"type": "open", "protocol": 1, "config": "fast"}, "invalid_config"),
    ],
)
def test_garbage_comm_open_gets_hello_and_an_error(watched: Watched, data, code) -> None:
    k = watched.k
    comm_id = k.open_comm(data)
    k.wait_for(comm_id, lambda d: d.get("reason") == "initial")
    got = k.comm_data(comm_id)
    assert [d["type"] for d in got[:3]] == ["hello", "error", "sample"]
    assert got[1]["code"] == code and got[1]["request_id"] is None
    assert got[0]["config"]["interval_s"] == 0.5  # a bad open changed nothing
    k.close_comm(comm_id)


def test_broadcast_to_two_comms_then_idle_when_all_closed(watched: Watched) -> None:
    k = watched.k
    second = open_helper_comm(k)
    t0 = time.time()
    while time.time() - t0 < 1.5:
        k.pump(0.1)
    first_new = [m for m in k.samples(watched.comm_id) if k.arrival[m["header"]["msg_id"]] > t0]
    second_new = [m for m in k.samples(second) if k.arrival[m["header"]["msg_id"]] > t0]
    assert first_new and second_new
    # A broadcast is one sample: the same seq reaches both comms.
    first_seqs = {m["content"]["data"]["seq"] for m in first_new}
    second_seqs = {m["content"]["data"]["seq"] for m in second_new}
    assert first_seqs & second_seqs
    k.close_comm(second)
    k.close_comm(watched.comm_id)
    k.execute("pass", silent=True, store_history=False)  # the closes have been handled
    k.pump(0.6)
    t1 = time.time()
    while time.time() - t1 < 1.5:
        k.pump(0.1)
    late = [m for m in k.iopub if m["msg_type"] == "comm_msg" and k.arrival[m["header"]["msg_id"]] > t1]
    assert late == []
    # Reopen for any later test in this module.
    watched.comm_id = open_helper_comm(k)


def test_a_comm_opened_later_gets_the_timeline_of_what_was_sent(bootstrap: str) -> None:
    # A reloaded page opens a new comm: its chart starts with what the kernel went through.
    with live_helper_kernel(bootstrap, FAST) as (k, first):
        k.execute("held = bytearray(b'\\x01') * (100 * 2**20)")
        k.wait_for(first, lambda d: d.get("type") == "sample" and d["host"]["rss_bytes"] > 100 * MB)
        k.close_comm(first)
        k.execute("pass", silent=True, store_history=False)  # the close has been handled
        t0 = time.time()
        while time.time() - t0 < 1.2:  # the sampler finds no comm and stops reading
            k.pump(0.1)
        seen = [m["content"]["data"] for m in k.samples(first)]
        second = open_helper_comm(k)
        timeline = k.request(second, {"type": "history", "request_id": "t"})["result"]["timeline"]
        rows = list(zip(timeline["times"], timeline["rss_bytes"], strict=True))
        assert [(s["time"], s["host"]["rss_bytes"]) for s in seen] == rows[: len(seen)]
        gap_time, gap_rss = rows[len(seen)]
        assert gap_rss is None and gap_time >= seen[-1]["time"]  # unwatched: a gap, not a line
        initial = next(m["content"]["data"] for m in k.samples(second))
        assert rows[len(seen) + 1 :] == [(initial["time"], initial["host"]["rss_bytes"])]
        assert timeline["times"] == sorted(timeline["times"])


def test_a_comm_a_reloaded_page_left_open_is_closed_by_its_replacement(bootstrap: str) -> None:
    # The kernel cannot tell a comm whose page went away from a live one; the page that
    # comes back in the same tab names it, and the helper stops sending to it.
    with live_helper_kernel(bootstrap, FAST) as (k, left_open):
        second_tab = open_helper_comm(k)
        replacement = open_helper_comm(k, replaces=[left_open])
        closes = [m for m in k.iopub if m["msg_type"] == "comm_close"]
        assert [m["content"]["comm_id"] for m in closes] == [left_open]
        t0 = time.time()
        while time.time() - t0 < 1.5:  # three heartbeats at 0.5 s
            k.pump(0.1)
        late = {
            c: [m for m in k.samples(c) if k.arrival[m["header"]["msg_id"]] > t0]
            for c in (left_open, second_tab, replacement)
        }
        assert late[left_open] == [] and late[second_tab] and late[replacement]
        assert k.eval("len(__import__('jupyterlab_vram_helper').get_runtime().channel.targets())") == 2


def test_every_message_the_comm_got_matches_the_schema(watched: Watched) -> None:
    # The messages of the comm that the kernel harness still holds, with a cell's
    # records and a history reply (its records and timeline) among them.
    path = Path(__file__).resolve().parents[2] / "protocol" / "protocol.schema.json"
    schema = json.loads(path.read_text(encoding="utf-8"))
    validator = jsonschema.Draft7Validator(schema)
    start = len(watched.k.comm_data(watched.comm_id))
    watched.run("schema_check = list(range(1000))")
    watched.k.wait_for(watched.comm_id, lambda d: d.get("type") == "cells", start=start)
    history = watched.request({"type": "history", "request_id": "schema-h"})
    assert history["type"] == "reply" and history["result"]["records"]
    # A reply's result is any object to the root: its shape is checked by its definition.
    results = jsonschema.Draft7Validator({**schema, "oneOf": [{"$ref": "#/definitions/HistoryResult"}]})
    assert [(list(e.absolute_path), e.message) for e in results.iter_errors(history["result"])] == []
    data = watched.k.comm_data(watched.comm_id)
    assert {"sample", "cells", "reply"} <= {d["type"] for d in data}
    errors = [(d["type"], list(e.absolute_path), e.message) for d in data for e in validator.iter_errors(d)]
    assert errors == []


def test_helper_printed_nothing(watched: Watched) -> None:
    stray = [
        (m["msg_type"], m["content"])
        for m in watched.k.output_messages()
        if m["parent_header"].get("msg_id") not in watched.user_cells
    ]
    assert stray == []
    # and the user's cells printed nothing either (no warning from the helper)
    assert [m for m in watched.k.iopub if m["msg_type"] in ("stream", "error")] == []


# --- fresh kernels -------------------------------------------------------------


def test_bootstrap_twice_one_thread_one_target(kernel: Kernel, bootstrap: str) -> None:
    kernel.bootstrap(bootstrap)
    kernel.bootstrap(bootstrap)
    threads = kernel.eval(
        "[t.name for t in __import__('threading').enumerate() if t.name == 'jupyterlab-vram-sampler']"
    )
    assert threads == ["jupyterlab-vram-sampler"]
    targets = kernel.eval("[n for n in get_ipython().kernel.comm_manager.targets if 'vram' in n]")
    assert targets == ["jupyterlab-vram"]
    comm_id = open_helper_comm(kernel)
    kernel.pump(0.5)
    assert len(kernel.comm_data(comm_id, "hello")) == 1
    assert len([d for d in kernel.comm_data(comm_id) if d.get("reason") == "initial"]) == 1


def test_bootstrap_leaves_the_user_namespace_alone(kernel: Kernel, bootstrap: str) -> None:
    kernel.execute("a = 1")
    kernel.execute("40 + 2")
    probe = (
        "(sorted(k for k in globals() if not k.startswith('_i')), len(Out), repr(_), "
        "get_ipython().execution_count, sorted(get_ipython().user_ns_hidden) == "
        "sorted(set(get_ipython().user_ns_hidden)))"
    )
    before = kernel.eval(probe)
    reply = kernel.bootstrap(bootstrap)
    after = kernel.eval(probe)
    assert after == before
    assert before[2] == "42" and before[1] == 1
    bootstrap_output = [m for m in kernel.output_messages() if m["parent_header"].get("msg_id") == reply["_msg_id"]]
    assert bootstrap_output == []
    assert kernel.eval("'_i3' in globals()") is False  # no input history entry either


def test_a_warning_on_the_helpers_thread_stays_out_of_the_running_cell(kernel: Kernel, bootstrap: str) -> None:
    # A torch whose cuda.is_initialized() warns, as a deprecation would: the
    # sampler calls it on its own thread while the user's cell runs, and
    # ipykernel sends that thread's stderr to the running cell.
    kernel.execute(
        "import sys, types, warnings\n"
        "class _Cuda:\n"
        "    def is_initialized(self):\n"
        "        warnings.warn('is_initialized is deprecated', FutureWarning)\n"
        "        return False\n"
        "fake_torch = types.ModuleType('torch'); fake_torch.cuda = _Cuda(); fake_torch.__version__ = '0-fake'\n"
    )
    attach_helper(kernel, bootstrap, {"interval_s": 0.1, "heartbeat_s": 0.1})
    cell = kernel.execute(
        "sys.modules['torch'] = fake_torch\n"
        "import time; time.sleep(1.5)\n"
        "del sys.modules['torch']\n"
        "warnings.warn('the user\\'s own warning')"
    )
    kernel.pump(0.5)
    printed = [
        m["content"].get("text", "")
        for m in kernel.output_messages()
        if m["parent_header"].get("msg_id") == cell["_msg_id"]
    ]
    text = "".join(printed)
    assert "is_initialized is deprecated" not in text
    assert "the user's own warning" in text  # the user's warnings are shown as before
    assert kernel.eval("sys.modules.get('torch') is None")


def test_a_minute_of_sampling_never_imports_torch(kernel: Kernel, bootstrap: str) -> None:
    comm_id = attach_helper(kernel, bootstrap, {"interval_s": 0.1, "heartbeat_s": 0.1})
    assert kernel.eval("'torch' in __import__('sys').modules") is False
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        kernel.pump(0.5)
    samples = kernel.comm_data(comm_id, "sample")
    assert len(samples) > 300  # ~600 at 10 Hz; the sampler really ran all along
    heavy = kernel.eval(
        "[m for m in ('torch', 'tensorflow', 'jax', 'numpy', 'pandas') if m in __import__('sys').modules]"
    )
    assert heavy == []
    assert kernel.output_messages() == []


def _date(msg) -> float:
    from kernel_harness import _parse_date

    return _parse_date(msg["header"]["date"])


def _snapshot(watched: Watched):
    k = watched.k
    return snapshot_sample(k, watched.comm_id, f"snap-{len(k.comm_data(watched.comm_id))}")


def _send_raw(watched: Watched, data):
    k = watched.k
    start = len(k.comm_data(watched.comm_id))
    k.send_comm(watched.comm_id, data)
    return k.wait_for(watched.comm_id, lambda d: d.get("type") == "error", start=start)
