"""cluster_action: the worker-side function, Dask's answers read per worker, Ray refused with its reason."""

from __future__ import annotations

import pickle
import subprocess
import sys
from typing import Any

import pytest
from cluster_fakes import FakeClient, FakeRay, Shell

from jupyterlab_vram_helper.cluster import cluster_actions
from jupyterlab_vram_helper.cluster.deadline_call import DeadlineCalls
from jupyterlab_vram_helper.cluster.worker_calls import worker_action
from jupyterlab_vram_helper.protocol import RequestError


@pytest.fixture(autouse=True)
def fake_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    from cluster_fakes import dask_modules

    for name, module in dask_modules().items():
        monkeypatch.setitem(sys.modules, name, module)


def args(action: str, cluster: str = "tcp://10.0.0.1:8786", engine: str = "dask") -> dict[str, Any]:
    return {"engine": engine, "cluster": cluster, "action": action, "timeout_s": 5.0}


def test_the_worker_function_reads_rss_and_leaves_torch_alone() -> None:
    result = worker_action()("gc")
    assert result["host_before_bytes"] > 0 and result["host_after_bytes"] > 0
    assert result["torch"] is False and result["gpu_reserved_before_bytes"] is None
    assert result["allocator"]["devices"] == [] and "torch" not in sys.modules


def test_the_worker_function_travels_by_value() -> None:
    cloudpickle = pytest.importorskip("cloudpickle")
    payload = cloudpickle.dumps(worker_action())
    # A Python without the helper on its path loads and runs it (as a Dask worker would).
    code = "import pickle, sys; print(pickle.loads(sys.stdin.buffer.read())('read_allocators')['torch'])"
    done = subprocess.run([sys.executable, "-I", "-c", code], input=payload, capture_output=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == b"False", done.stderr
    assert b"jupyterlab_vram_helper" not in payload
    with pytest.raises(pickle.PicklingError, match="attribute lookup jupyterlab_vram_worker_action on __main__"):
        pickle.dumps(worker_action())  # by reference it would need to be importable by name


def test_each_worker_s_answer_is_read_and_a_failed_one_named() -> None:
    client = FakeClient()
    kept: list[tuple[str, str]] = []
    ok = worker_action()("gc")
    first, second = sorted(client.answer["workers"])[:2]
    client.run_answer = {first: ok, second: RuntimeError("worker gone")}
    result = cluster_actions.answer(
        args("gc"), Shell(c=client).user_ns, DeadlineCalls(), lambda n, w, r: kept.append((n, w))
    )
    assert result["done"] is False and result["message"] == "It failed on 1 of 2 workers."
    good, bad = result["workers"]
    assert good["ok"] and good["host_before_bytes"] == ok["host_before_bytes"] and good["allocator"]["torch"] is False
    assert bad == {
        "id": second,
        "ok": False,
        "error": "RuntimeError: worker gone",
        "torch": None,
        "host_before_bytes": None,
        "host_after_bytes": None,
        "gpu_reserved_before_bytes": None,
        "gpu_reserved_after_bytes": None,
        "allocator": None,
    }
    assert kept == [("tcp://10.0.0.1:8786", first)]


def test_restart_goes_through_the_engine_and_an_unknown_cluster_is_refused() -> None:
    client = FakeClient()
    result = cluster_actions.answer(args("restart"), Shell(c=client).user_ns, DeadlineCalls())
    assert result["done"] is True and client.ran == [("restart", (5.0,))]
    with pytest.raises(RequestError, match="no dask cluster named 'tcp://nowhere:1' is attached"):
        cluster_actions.answer(args("gc", cluster="tcp://nowhere:1"), Shell(c=client).user_ns, DeadlineCalls())


def test_workers_that_do_not_answer_in_time_are_said_so() -> None:
    client = FakeClient()
    client.run = lambda *a, **k: __import__("time").sleep(3)  # type: ignore[method-assign]
    result = cluster_actions.answer(dict(args("gc"), timeout_s=1.0), Shell(c=client).user_ns, DeadlineCalls())
    assert result["done"] is False and result["message"] == "The workers did not answer within 1 s."


def test_ray_actions_say_what_they_cannot_reach(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", FakeRay())
    result = cluster_actions.answer(args("empty_cache", "10.0.0.2:6379", "ray"), {}, DeadlineCalls())
    assert result["done"] is False and result["workers"] == []
    assert "pooled worker process" in result["message"] and "actors" in result["message"]
