"""release_engine with fakes: what each engine lists, the steps a release runs, refusals, no reference kept."""

from __future__ import annotations

import gc
import sys
import types
import weakref
from typing import Any

import pytest

from jupyterlab_vram_helper.cleanup import release_steps
from jupyterlab_vram_helper.cleanup.releasables import find_releasables, releasable, tree_processes
from jupyterlab_vram_helper.cleanup.release_engine import EngineRelease
from jupyterlab_vram_helper.protocol import RequestError, parse_request

MB = 1 << 20


def entry(pid: int, role: str, ppid: int = 1, host: int = 10 * MB, gpus: list | None = None) -> dict[str, Any]:
    """A process of a sample's tree, as process_tree.py writes it."""
    return {
        "pid": pid,
        "start_time": pid * 10,
        "ppid": ppid,
        "role": role,
        "host": {"host_bytes": host},
        "gpus": gpus or [],
    }


def figures(processes: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "processes": {"processes": processes, "totals": None},
        "host": {"available_bytes": 1 << 30},
        "gpus": [],
    }


class FakeRay(types.ModuleType):
    """The two calls the release makes of Ray."""

    def __init__(self) -> None:
        super().__init__("ray")
        self.initialized = True
        self.calls: list[str] = []

    def is_initialized(self) -> bool:
        return self.initialized

    def shutdown(self) -> None:
        self.calls.append("shutdown")
        self.initialized = False


@pytest.fixture
def fake_ray(monkeypatch: pytest.MonkeyPatch) -> FakeRay:
    ray = FakeRay()
    monkeypatch.setitem(sys.modules, "ray", ray)
    return ray


def engine(shell: Any, tree: dict[str, Any], root: str) -> Any:
    """The request's answerer, over a fixed reading of the figures."""
    return EngineRelease(lambda: shell, lambda: tree, root=root)


def shell_with(**names: Any) -> Any:
    return types.SimpleNamespace(user_ns=dict(names), user_ns_hidden={}, displayhook=None)


def test_ray_is_listed_with_its_processes_by_role_and_released_with_shutdown(fake_ray: FakeRay) -> None:
    # As a local ray.init() lays them out: its node processes (GCS, dashboard, monitors) and the
    # raylet are the kernel's children; the agents and the workers are the raylet's.
    tree = figures(
        [
            entry(48, "ray_node"),
            entry(50, "raylet", host=20 * MB),
            entry(51, "ray_node", ppid=50),
            entry(52, "ray_worker", ppid=50),
            entry(60, "other"),
        ]
    )
    shell = shell_with()
    release = engine(shell, tree, "/nonexistent")
    listed = release.answer("list", None, None, 1.0)
    assert listed["released"] is None
    (ray,) = listed["releasables"]
    assert (ray["kind"], ray["name"], ray["host_bytes"]) == ("ray", "ray", 50 * MB)
    assert [p["pid"] for p in ray["processes"]] == [48, 50, 51, 52]
    result = release.answer("release", "ray", "ray", 1.0)
    assert fake_ray.calls == ["shutdown"]
    released = result["released"]
    assert released["outcome"] == "released", released
    assert released["steps"] == [{"action": "ray.shutdown()", "ok": True, "error": None}]
    assert [p["pid"] for p in released["processes"]] == [48, 50, 51, 52]
    assert result["releasables"] == []


def test_ray_not_initialised_is_not_listed(fake_ray: FakeRay) -> None:
    fake_ray.initialized = False
    assert find_releasables({}) == []


def test_a_failing_step_is_a_partial_release_with_its_error_in_words(fake_ray: FakeRay) -> None:
    def boom() -> None:
        raise TimeoutError("the raylet did not answer")

    fake_ray.shutdown = boom  # type: ignore[method-assign]
    shell = shell_with()
    result = engine(shell, figures([]), "/nonexistent").answer("release", "ray", "ray", 1.0)
    released = result["released"]
    assert released["outcome"] == "partial"
    assert released["steps"][0]["error"] == "TimeoutError: the raylet did not answer"
    assert "ray.shutdown() failed" in released["reason"]


def test_an_unknown_name_is_refused_and_nothing_runs(fake_ray: FakeRay) -> None:
    shell = shell_with()
    result = engine(shell, figures([]), "/nonexistent").answer("release", "mp_pool", "nope", 1.0)
    released = result["released"]
    assert (released["outcome"], released["steps"]) == ("refused", [])
    assert "nothing was done" in released["reason"]
    assert fake_ray.calls == []


class LLM:
    """A stand-in for vllm.LLM: an engine whose shutdown ends its engine-core process."""

    def __init__(self, log: list[str]) -> None:
        self.llm_engine = types.SimpleNamespace(shutdown=lambda: log.append("engine shutdown"))


def test_vllm_engine_is_shut_down_deleted_and_its_distributed_state_destroyed(monkeypatch: pytest.MonkeyPatch) -> None:
    log: list[str] = []
    module = types.ModuleType("vllm.entrypoints.llm")
    LLM.__module__ = "vllm.entrypoints.llm"
    state = types.ModuleType("vllm.distributed.parallel_state")
    state.destroy_model_parallel = lambda: log.append("destroy_model_parallel")  # type: ignore[attr-defined]
    state.destroy_distributed_environment = lambda: log.append("destroy_distributed_environment")  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "vllm", types.ModuleType("vllm"))
    monkeypatch.setitem(sys.modules, "vllm.entrypoints.llm", module)
    monkeypatch.setitem(sys.modules, "vllm.distributed.parallel_state", state)
    shell = shell_with(llm=LLM(log))
    probe = weakref.ref(shell.user_ns["llm"])
    tree = figures([entry(70, "vllm_engine", gpus=[{"index": 0, "used_bytes": 900 * MB}])])
    release = engine(shell, tree, "/nonexistent")
    (listed,) = release.answer("list", None, None, 1.0)["releasables"]
    assert (listed["kind"], listed["name"], listed["gpus"]) == ("vllm", "llm", [{"index": 0, "used_bytes": 900 * MB}])
    released = release.answer("release", "vllm", "llm", 1.0)["released"]
    actions = [step["action"] for step in released["steps"]]
    assert actions[:3] == ["llm.llm_engine.shutdown()", "del llm", "gc.collect()"]
    assert log == ["engine shutdown", "destroy_model_parallel", "destroy_distributed_environment"]
    assert "llm" not in shell.user_ns
    gc.collect()
    assert probe() is None, "the helper kept a reference to the engine"


def test_a_live_fork_pool_is_listed_and_terminated() -> None:
    import multiprocessing as mp

    pool = mp.get_context("fork").Pool(1)
    try:
        pids = frozenset(p.pid for p in pool._pool)  # type: ignore[attr-defined]
        shell = shell_with(pool=pool)
        (found,) = find_releasables(shell.user_ns)
        assert (found.kind, found.name, found.pids) == ("mp_pool", "pool", pids)
        probe = weakref.ref(pool)
        del pool
        released = engine(shell, figures([]), "/proc").answer("release", "mp_pool", "pool", 5.0)["released"]
        assert released["steps"] == [{"action": "pool.terminate(); pool.join()", "ok": True, "error": None}]
        assert find_releasables(shell.user_ns) == [], "a terminated pool is not offered again"
        del shell
        gc.collect()
        assert probe() is None
    finally:
        for process in mp.active_children():
            process.terminate()


def test_a_pools_worker_that_ignores_sigterm_is_killed_after_the_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    killed: list[int] = []
    monkeypatch.setattr(release_steps.os, "kill", lambda pid, sig: killed.append(pid))
    monkeypatch.setattr(release_steps, "_alive", lambda root, process: True)

    class StuckPool:
        def terminate(self) -> None:
            import time

            time.sleep(1)

        def join(self) -> None:
            pass

    context = release_steps.ReleaseContext(None, {}, [{"pid": 4242, "start_time": 1}])
    steps = release_steps.release("mp_pool", "pool", [StuckPool()], context, 0.1)
    assert steps[0]["ok"] is False and str(steps[0]["error"]).startswith("TimeoutError")
    assert steps[1] == {"action": "SIGKILL 4242", "ok": True, "error": None}
    assert killed == [4242]


def test_tree_processes_take_descendants_of_the_named_pids() -> None:
    from jupyterlab_vram_helper.cleanup.releasables import Found

    found = Found("dask", "client", "Dask client", frozenset({5}), frozenset())
    tree = {"processes": [entry(5, "dask_nanny"), entry(6, "dask_worker", ppid=5), entry(7, "other")]}
    assert [e["pid"] for e in tree_processes(found, tree)] == [5, 6]
    assert releasable(found, tree)["host_bytes"] == 20 * MB


@pytest.mark.parametrize(
    "fields",
    [
        {},
        {"mode": "stop"},
        {"mode": "release"},
        {"mode": "release", "kind": "ray"},
        {"mode": "release", "kind": "ray", "name": ""},
        {"mode": "list", "timeout_s": 0},
        {"mode": "list", "timeout_s": True},
    ],
)
def test_malformed_requests_are_refused(fields: dict[str, Any]) -> None:
    with pytest.raises(RequestError) as info:
        parse_request({"type": "release_engine", "request_id": "r", **fields})
    assert info.value.code == "malformed"


def test_a_list_request_needs_no_kind_or_name() -> None:
    request = parse_request({"type": "release_engine", "request_id": "r", "mode": "list"})
    assert request.args == {"mode": "list", "kind": None, "name": None, "timeout_s": 10.0}
