"""The poller: a message after a reading that changed something and never otherwise, clusters that go
away or stop answering stated in status and message, and a reading that never waits past its deadline."""

from __future__ import annotations

import logging
import time
from typing import Any

from cluster_fakes import FakeClient, FakeRay, Shell, dask_modules

from jupyterlab_vram_helper.cluster.cluster_poller import ClusterPoller
from jupyterlab_vram_helper.config import SamplerConfig


def poller(shell: Shell, modules: dict[str, Any], config: SamplerConfig | None = None) -> tuple[ClusterPoller, list]:
    sent: list[Any] = []
    settings = config or SamplerConfig(cluster_interval_s=1.0)
    return ClusterPoller(lambda: shell, lambda: settings, sent.append, modules=modules), sent


def test_a_message_goes_out_after_a_change_only() -> None:
    client = FakeClient()
    p, sent = poller(Shell(client=client), dask_modules())
    assert p.read_once() is True
    (state,) = sent[-1]["clusters"]
    assert (state["status"], state["found_by"], state["variable"], len(state["workers"])) == (
        "ok",
        "namespace",
        "client",
        64,
    )
    assert state["name"] == "tcp://10.0.0.1:8786" and state["version"] == "2026.8.0" and sent[-1]["seq"] == 1
    assert p.read_once() is False  # nothing changed
    first = next(iter(client.answer["workers"].values()))
    first["metrics"]["memory"] += 512 << 10  # below the 1 MiB threshold
    assert p.read_once() is False
    first["metrics"]["memory"] += 2 << 20
    assert p.read_once() is True and sent[-1]["seq"] == 2


def test_a_worker_that_goes_is_an_event_with_its_last_figures() -> None:
    client = FakeClient()
    p, sent = poller(Shell(client=client), dask_modules())
    p.read_once()
    gone = sorted(client.answer["workers"])[0]
    before = client.answer["workers"].pop(gone)
    assert p.read_once() is True
    (event,) = sent[-1]["events"]
    assert (event["kind"], event["worker"], event["engine"], event["id"]) == ("left", gone, "dask", 1)
    assert event["last"]["memory_bytes"] == before["metrics"]["memory"]
    assert sent[-1]["clusters"][0]["totals"]["workers"] == 63


def test_the_nanny_s_words_explain_a_restart_and_pause_resume_and_spilling_are_seen() -> None:
    client = FakeClient()
    p, sent = poller(Shell(client=client), dask_modules())
    p.read_once()
    worker = sorted(client.answer["workers"])[0]
    nanny = logging.getLogger("distributed.nanny.memory")
    nanny.addHandler(p.events.logs)
    try:
        nanny.warning(f"Worker {worker} (pid=4242) exceeded 95% memory budget. Restarting...")
    finally:
        nanny.removeHandler(p.events.logs)
    info = client.answer["workers"][sorted(client.answer["workers"])[1]]
    info["status"] = "paused"
    info["metrics"]["spilled_bytes"]["disk"] = 10
    client.answer["workers"].pop(worker)
    p.read_once()
    kinds = {(e["kind"], e["worker"]) for e in sent[-1]["events"]}
    second = sorted(client.answer["workers"])[0]
    assert kinds == {("memory_restart", worker), ("paused", second), ("spilling", second)}
    restart = next(e for e in sent[-1]["events"] if e["kind"] == "memory_restart")
    assert restart["pid"] == 4242 and "exceeded 95% memory budget" in restart["engine_message"]
    assert restart["last"] is not None  # no "left" for the same worker: the restart explains it
    info["status"] = "running"
    info["metrics"]["spilled_bytes"]["disk"] = 20  # still spilling: no second event
    p.read_once()
    assert [e["kind"] for e in sent[-1]["events"]][-1] == "resumed"
    assert sum(e["kind"] == "spilling" for e in sent[-1]["events"]) == 1


def test_a_scheduler_that_does_not_answer_costs_the_reading_its_deadline_only() -> None:
    client = FakeClient()
    p, sent = poller(Shell(client=client), dask_modules())
    p.read_once()
    client.hang.set()
    started = time.monotonic()
    p.read_once()
    took = time.monotonic() - started
    (state,) = sent[-1]["clusters"]
    assert state["status"] == "timeout" and "did not answer within 1 s" in state["message"]
    assert len(state["workers"]) == 64 and state["read_at"] is not None  # the last figures, kept
    assert took < 3.0
    # The hung call is still out: no second call is stacked on it.
    calls = client.calls
    p.read_once()
    assert client.calls == calls and "still waiting" in sent[-1]["clusters"][0]["message"]
    client.release.set()
    client.hang.clear()
    time.sleep(0.1)
    p.read_once()
    assert sent[-1]["clusters"][0]["status"] == "ok"


def test_unreachable_error_closed_and_gone_are_stated() -> None:
    client = FakeClient()
    shell = Shell(client=client)
    p, sent = poller(shell, dask_modules())
    p.read_once()
    client.error = OSError("Connection refused")
    p.read_once()
    assert sent[-1]["clusters"][0]["status"] == "unreachable"
    client.error = KeyError("workers")
    p.read_once()
    assert sent[-1]["clusters"][0]["status"] == "error" and "KeyError" in sent[-1]["clusters"][0]["message"]
    client.error = None
    client.status = "closed"
    p.read_once()
    assert sent[-1]["clusters"][0]["status"] == "closed"
    del shell.user_ns["client"]
    assert p.read_once() is True and sent[-1]["clusters"] == []


def test_an_older_distributed_is_read_through_scheduler_info() -> None:
    client = FakeClient()
    client.old_version = True
    p, sent = poller(Shell(client=client), dask_modules(version="2022.1.0"))
    p.read_once()
    assert sent[-1]["clusters"][0]["status"] == "ok" and len(sent[-1]["clusters"][0]["workers"]) == 64


def test_ray_lists_its_node_and_the_kernel_s_ray_processes_from_proc() -> None:
    from jupyterlab_vram_helper.cluster.local_figures import LocalFigures

    ray = FakeRay()
    tree = {
        10: {"pid": 10, "role": "raylet", "name": "raylet", "host": {"rss_bytes": 50}, "gpus": []},
        11: {"pid": 11, "role": "ray_worker", "name": "ray::IDLE", "host": {"rss_bytes": 70}, "gpus": []},
    }
    sent: list[Any] = []
    p = ClusterPoller(
        lambda: Shell(),
        lambda: SamplerConfig(),
        sent.append,
        local=lambda: LocalFigures(tree, {}),
        modules={"ray": ray},
    )
    p.read_once()
    (state,) = sent[-1]["clusters"]
    assert (state["engine"], state["name"], state["found_by"], state["actions"]) == (
        "ray",
        "10.0.0.2:6379",
        "initialized",
        [],
    )
    node, worker = state["workers"]
    assert (node["role"], node["memory_bytes"], node["memory_source"], node["local"]) == ("ray_node", 120, "proc", True)
    assert (worker["role"], worker["pid"], worker["memory_bytes"], worker["id"]) == (
        "ray_worker",
        11,
        70,
        f"{ray.node_id}:11",
    )
    assert state["totals"]["memory_bytes"] == 120 and state["totals"]["workers"] == 1 and state["unseen"]
    ray.initialized = False
    p.read_once()
    assert sent[-1]["clusters"] == []


def test_turning_watching_off_tells_the_comms_once() -> None:
    p, sent = poller(Shell(client=FakeClient()), dask_modules())
    p.read_once()
    p.stop(final=True)
    assert sent[-1]["clusters"] == [] and len(sent) == 2


def test_a_cell_s_worker_error_is_recorded_without_the_poller_s_lock_and_sent_at_the_next_reading() -> None:
    from jupyterlab_vram_helper.cluster.cluster_errors import WorkerError

    client = FakeClient()
    p, sent = poller(Shell(client=client), dask_modules())
    p.read_once()
    worker = sorted(client.answer["workers"])[0]
    found = WorkerError("dask", "killed_worker", worker, None, "KilledWorker", f"... was {worker}.")
    with p._lock:  # a reading in progress (a scheduler that does not answer) holds it
        started = time.monotonic()
        origin, memory = p.record_error(found)
        assert time.monotonic() - started < 0.5
    # No restart was heard for it: a worker death, not called out of memory.
    assert memory is False and origin["kind"] == "killed_worker" and origin["last"]["memory_limit_bytes"] > 0
    nanny = logging.getLogger("distributed.nanny.memory")
    nanny.addHandler(p.events.logs)
    try:
        nanny.warning(f"Worker {worker} (pid=4242) exceeded 95% memory budget. Restarting...")
    finally:
        nanny.removeHandler(p.events.logs)
    assert p.record_error(found)[1] is True  # the nanny's words came before the next reading
    p.read_once()
    assert [e["kind"] for e in sent[-1]["events"]] == ["killed_worker", "killed_worker", "memory_restart"]
