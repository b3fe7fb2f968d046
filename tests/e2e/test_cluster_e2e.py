"""The cluster's memory end to end: a real Dask LocalCluster of process workers and a real local Ray
runtime started in a real kernel, found by the helper, each worker's figure checked against what the
worker itself reads from /proc, a worker pushed past its limit explained in the engine's words, gc
across the workers, and clusters that go away or stop answering stated without troubling the kernel."""

from __future__ import annotations

import importlib.util
import itertools
import os
import signal
import time
from collections.abc import Iterator
from typing import Any

import pytest
from kernel_harness import CellSession, live_helper_kernel
from process_harness import MB, run
from test_release_engine_e2e import ray_init, ray_session_fixture  # noqa: F401 (the ray_session fixture)

pytestmark = [
    pytest.mark.kernel,
    pytest.mark.skipif(importlib.util.find_spec("distributed") is None, reason="dask[distributed] is not installed"),
]

_ids = itertools.count()
# The cluster is read every second, the kernel sampled every half second.
CONFIG = {"interval_s": 0.5, "heartbeat_s": 2.0, "cluster_interval_s": 1}
START = "import gc, os, sys, time\nimport dask\nfrom dask.distributed import LocalCluster, Client\n"


@pytest.fixture(name="session")
def session_fixture(bootstrap: str) -> Iterator[CellSession]:
    with live_helper_kernel(bootstrap, CONFIG) as (kernel, comm_id):
        yield CellSession(kernel, comm_id)


def cluster_messages(session: CellSession) -> list[dict[str, Any]]:
    return session.k.comm_data(session.comm_id, "cluster")


def wait_cluster(session: CellSession, predicate: Any, timeout: float = 60) -> dict[str, Any]:
    """The first cluster message from now on whose (first) cluster satisfies ``predicate``."""
    start = len(session.k.comm_data(session.comm_id))
    # The latest message may already hold it (nothing changed since).
    latest = cluster_messages(session)
    if latest and latest[-1]["clusters"] and predicate(latest[-1]["clusters"][0]):
        return latest[-1]

    def matches(data: dict[str, Any]) -> bool:
        return data.get("type") == "cluster" and bool(data["clusters"]) and predicate(data["clusters"][0])

    return session.k.wait_for(session.comm_id, matches, timeout, start)


def action(session: CellSession, cluster: str, name: str, engine: str = "dask", timeout: float = 90) -> dict[str, Any]:
    answer = session.k.request(
        session.comm_id,
        {
            "type": "cluster_action",
            "request_id": f"a{next(_ids)}",
            "engine": engine,
            "cluster": cluster,
            "action": name,
        },
        timeout=timeout,
    )
    assert answer["type"] == "reply", answer
    return answer["result"]


def test_a_local_cluster_is_found_and_each_worker_matches_its_own_proc(session: CellSession) -> None:
    run(
        session,
        START + "cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, memory_limit='400MiB',"
        " dashboard_address=None)\nclient = Client(cluster)",
        timeout=120,
    )
    message = wait_cluster(session, lambda c: c["status"] == "ok" and len(c["workers"]) == 2)
    state = message["clusters"][0]
    assert (state["engine"], state["found_by"], state["variable"]) == ("dask", "namespace", "client")
    assert state["name"] == session.k.eval("client.scheduler.address")
    assert state["totals"]["workers"] == 2 and state["totals"]["memory_limit_bytes"] == 2 * 400 * MB
    # What each worker reads of itself (the test's own call, not the helper's).
    own = session.k.eval(
        "client.run(lambda: (os.getpid(), int(next(l for l in open('/proc/self/status')"
        " if l.startswith('VmRSS:')).split()[1]) * 1024))"
    )
    time.sleep(2.5)  # two heartbeats and two readings later
    state = wait_cluster(session, lambda c: c["status"] == "ok")["clusters"][0]
    for worker in state["workers"]:
        pid, rss = own[worker["id"]]
        assert worker["pid"] == pid and worker["local"] is True and worker["role"] == "dask_worker"
        assert worker["memory_source"] == "engine" and worker["status"] == "running"
        assert abs(worker["memory_bytes"] - rss) <= 0.05 * rss, (worker, rss)
    # A cell that runs while the cluster is attached carries the workers' memory around it.
    record = run(session, "client.submit(lambda: sum(range(10**6))).result(); time.sleep(1.5)")
    section = record["cluster"]
    assert section["clusters"] == [state["name"]]
    assert section["workers_before"] == 2 and section["workers_after"] == 2
    assert section["samples"] >= 2 and section["sample_spacing_s"] == 1
    assert section["sampled_max_bytes"] >= max(section["before_bytes"], section["after_bytes"])
    run(session, "client.close(); cluster.close()", timeout=60)


def test_gc_across_the_workers_returns_a_cycle_s_memory(session: CellSession) -> None:
    run(
        session,
        START + "cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)\n"
        "client = Client(cluster)\n"
        "def _cycle():\n"
        "    import gc\n"
        "    gc.disable()\n"
        "    class Node: pass\n"
        "    node = Node(); node.me = node\n"
        "    node.data = bytearray(200 << 20); node.data[::4096] = b'\\x01' * len(range(0, len(node.data), 4096))\n"
        "    return 0\n",
        timeout=120,
    )
    name = wait_cluster(session, lambda c: c["status"] == "ok" and len(c["workers"]) == 2)["clusters"][0]["name"]
    holder = session.k.eval("list(client.run(_cycle, workers=[sorted(client.scheduler_info()['workers'])[0]]))[0]")
    result = action(session, name, "gc")
    assert result["done"] is True and result["message"] is None, result
    by_id = {w["id"]: w for w in result["workers"]}
    assert set(by_id) == set(session.k.eval("list(client.scheduler_info(n_workers=-1)['workers'])"))
    freed = by_id[holder]["host_before_bytes"] - by_id[holder]["host_after_bytes"]
    assert freed >= 150 * MB, by_id[holder]
    assert all(w["ok"] and w["torch"] is False and w["gpu_reserved_before_bytes"] is None for w in by_id.values())
    reading = action(session, name, "read_allocators")
    assert reading["done"] and all(w["allocator"]["cuda_initialized"] is False for w in reading["workers"])
    run(session, "client.run(gc.enable); client.close(); cluster.close()", timeout=60)


def test_a_worker_past_its_limit_is_explained_in_the_engine_s_words(session: CellSession) -> None:
    run(
        session,
        START + "dask.config.set({'distributed.scheduler.allowed-failures': 0})\n"
        "cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=True, memory_limit='300MiB',"
        " dashboard_address=None)\nclient = Client(cluster)",
        timeout=120,
    )
    state = wait_cluster(session, lambda c: c["status"] == "ok" and len(c["workers"]) == 1)["clusters"][0]
    (worker,) = state["workers"]
    result = session.run(
        "def _grow():\n"
        "    held = []\n"
        "    for _ in range(40):\n"
        "        block = bytearray(20 << 20); block[::4096] = b'\\x01' * len(range(0, len(block), 4096))\n"
        "        held.append(block); time.sleep(0.05)\n"
        "    time.sleep(30)\n"
        "client.submit(_grow).result()",
        record_timeout=120,
        timeout=120,
    )
    assert result["reply"]["status"] == "error" and result["reply"]["ename"] == "KilledWorker"
    # The error's event goes out at the poller's next reading, after the cell.
    message = session.k.wait_for(
        session.comm_id,
        lambda d: (
            d.get("type") == "cluster" and {"memory_restart", "killed_worker"} <= {e["kind"] for e in d["events"]}
        ),
        30,
    )
    restart = next(e for e in message["events"] if e["kind"] == "memory_restart")
    assert restart["worker"] == worker["id"] and restart["pid"] == worker["pid"]
    assert "exceeded 95% memory budget" in restart["engine_message"]
    assert restart["last"]["memory_limit_bytes"] == 300 * MB and restart["last"]["memory_bytes"] > 0
    # The out-of-memory assistant names the worker, with its figures, not the kernel's.
    oom = result["record"]["oom"]
    assert oom is not None and oom["kind"] == "host"
    assert result["record"]["error"] == {
        "type": "KilledWorker",
        "message_head": result["record"]["error"]["message_head"],
        "out_of_memory": True,
    }
    assert oom["cluster_worker"]["kind"] == "killed_worker" and oom["cluster_worker"]["worker"] == worker["id"]
    assert oom["cluster_worker"]["last"]["memory_limit_bytes"] == 300 * MB
    assert oom["total_bytes"] is None and oom["stale_holders"] == []
    killed = next(e for e in message["events"] if e["kind"] == "killed_worker")
    assert killed["id"] in result["record"]["cluster"]["events"]
    run(session, "client.close(); cluster.close()", timeout=60)


def test_a_closed_client_and_a_stopped_scheduler_are_stated_and_the_kernel_is_fine(
    session: CellSession, tmp_path: Any
) -> None:
    scheduler_file = tmp_path / "scheduler.json"
    run(
        session,
        START + "import subprocess\n"
        f"scheduler = subprocess.Popen([sys.executable, '-m', 'distributed.cli.dask_scheduler', '--port', '0',"
        f" '--dashboard-address', ':0', '--scheduler-file', {str(scheduler_file)!r}],"
        " stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        f"while not os.path.exists({str(scheduler_file)!r}): time.sleep(0.2)\n"
        f"time.sleep(0.5); client = Client(scheduler_file={str(scheduler_file)!r}, timeout=60)",
        timeout=120,
    )
    wait_cluster(session, lambda c: c["status"] == "ok")
    pid = session.k.eval("scheduler.pid")
    os.kill(pid, signal.SIGSTOP)
    try:
        stuck = wait_cluster(session, lambda c: c["status"] == "timeout", timeout=30)["clusters"][0]
        assert "did not answer" in stuck["message"]
        # The kernel answers at once, and nothing of the helper's reached the cell.
        before = len(session.k.output_messages())
        started = time.monotonic()
        reply = session.k.execute("1 + 1", timeout=10)
        assert reply["status"] == "ok" and time.monotonic() - started < 5
        assert [m for m in session.k.output_messages()[before:] if m["msg_type"] in ("stream", "error")] == []
    finally:
        os.kill(pid, signal.SIGCONT)
    wait_cluster(session, lambda c: c["status"] == "ok", timeout=60)
    run(session, "client.close()", timeout=60)
    closed = wait_cluster(session, lambda c: c["status"] == "closed")["clusters"][0]
    assert "closed" in closed["message"]
    run(session, "del client; scheduler.terminate(); scheduler.wait()", timeout=60)
    gone = session.k.wait_for(session.comm_id, lambda d: d.get("type") == "cluster" and d["clusters"] == [], 30)
    assert gone["clusters"] == []


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed")
def test_a_local_ray_runtime_is_listed_and_its_actions_say_what_they_cannot_reach(
    ray_session: tuple[CellSession, str],
) -> None:
    session, temp_dir = ray_session
    run(session, "import os, time, ray")
    ray_init(session, temp_dir)
    run(session, "@ray.remote\ndef _pid():\n    return os.getpid()\nworker_pid = ray.get(_pid.remote())", timeout=120)
    worker_pid = session.k.eval("worker_pid")

    def listed(cluster: dict[str, Any]) -> bool:
        return (
            cluster["engine"] == "ray"
            and cluster["status"] == "ok"
            and any(w["pid"] == worker_pid for w in cluster["workers"])
        )

    state = wait_cluster(session, listed, timeout=60)["clusters"][0]
    assert state["found_by"] == "initialized" and state["version"] == session.k.eval("ray.__version__")
    (node,) = [w for w in state["workers"] if w["role"] == "ray_node"]
    assert node["local"] is True and node["status"] == "alive" and node["memory_source"] == "proc"
    worker = next(w for w in state["workers"] if w["pid"] == worker_pid)
    assert worker["role"] == "ray_worker" and worker["memory_source"] == "proc" and worker["memory_bytes"] > 0
    assert state["totals"]["workers"] == 1 and state["totals"]["memory_bytes"] == node["memory_bytes"]
    assert any("state API" in line for line in state["unseen"])
    # An actor holding 100 MiB: its figure against what it reads of itself from /proc.
    run(
        session,
        "@ray.remote\nclass _Holder:\n"
        "    def __init__(self):\n"
        "        self.block = bytearray(100 << 20); self.block[::4096] = b'x' * (len(self.block) // 4096)\n"
        "    def own(self):\n"
        "        return os.getpid(), int(next(l for l in open('/proc/self/status')"
        " if l.startswith('VmRSS:')).split()[1]) * 1024\n"
        "holder = _Holder.remote(); holder_pid, holder_rss = ray.get(holder.own.remote()); read_at = time.time()",
        timeout=120,
    )
    holder_pid, holder_rss, read_at = session.k.eval("(holder_pid, holder_rss, read_at)")
    assert holder_rss > 100 << 20
    # The local workers' figures are the sampler's last process tree (read at most ~1 s before
    # the cluster reading): a reading 2 s after the actor's own is past its allocation.
    later = wait_cluster(
        session,
        lambda c: (
            c["status"] == "ok" and c["read_at"] > read_at + 2 and any(w["pid"] == holder_pid for w in c["workers"])
        ),
        timeout=60,
    )["clusters"][0]
    actor = next(w for w in later["workers"] if w["pid"] == holder_pid)
    assert actor["role"] == "ray_worker" and actor["local"] is True
    assert abs(actor["memory_bytes"] - holder_rss) <= 0.05 * holder_rss, (actor, holder_rss)
    result = action(session, state["name"], "gc", engine="ray")
    assert result["done"] is False and "pooled worker" in result["message"] and result["workers"] == []
    run(session, "ray.shutdown()", timeout=120)
    session.k.wait_for(session.comm_id, lambda d: d.get("type") == "cluster" and d["clusters"] == [], 30)


def test_nothing_is_loaded_without_an_engine_and_watch_cluster_false_turns_it_off(session: CellSession) -> None:
    run(session, "import sys, threading, time\ntime.sleep(1.5)")
    loaded = session.k.eval(
        "sorted(m for m in sys.modules"
        " if m.startswith(('distributed', 'dask', 'ray', 'jupyterlab_vram_helper.cluster')))"
    )
    # Only the watch and the cells' bookkeeping are loaded at start; no engine, no poller.
    assert loaded == [
        "jupyterlab_vram_helper.cluster",
        "jupyterlab_vram_helper.cluster.cell_cluster",
        "jupyterlab_vram_helper.cluster.cluster_watch",
    ]
    assert session.k.eval("[t.name for t in threading.enumerate() if 'cluster' in t.name]") == []
    run(
        session,
        "from dask.distributed import LocalCluster, Client\n"
        "cluster = LocalCluster(n_workers=1, processes=False, dashboard_address=None)\nclient = Client(cluster)",
        timeout=120,
    )
    wait_cluster(session, lambda c: c["status"] == "ok" and len(c["workers"]) == 1)
    assert session.k.eval("[t.name for t in threading.enumerate() if t.name == 'jupyterlab-vram-cluster']") != []
    reply = session.k.request(
        session.comm_id, {"type": "configure", "request_id": "off", "config": {"watch_cluster": False}}
    )
    assert reply["result"]["config"]["watch_cluster"] is False
    session.k.wait_for(session.comm_id, lambda d: d.get("type") == "cluster" and d["clusters"] == [], 30)
    time.sleep(1.5)
    assert session.k.eval("[t.name for t in threading.enumerate() if t.name == 'jupyterlab-vram-cluster']") == []
    record = run(session, "client.submit(sum, [1, 2]).result()")
    assert "cluster" not in record
    run(session, "client.close(); cluster.close()", timeout=60)
