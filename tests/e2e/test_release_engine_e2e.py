"""release_engine end to end: real pools, DataLoader workers, a Dask LocalCluster and a local Ray runtime
started in a real kernel, listed, released and gone; a real DataLoader worker killed, explained with its figures."""

from __future__ import annotations

import importlib.util
import itertools
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kernel_harness import CellSession, live_helper_kernel, snapshot_sample
from process_harness import CONFIG, MB, hold_code, run, session_fixture  # noqa: F401 (the session fixture)

pytestmark = pytest.mark.kernel

_ids = itertools.count()
# A worker that holds 50 MB of its own.
HOLD = hold_code(50)


def release_engine(session: CellSession, timeout: float = 60, **fields: Any) -> dict[str, Any]:
    answer = session.k.request(
        session.comm_id, {"type": "release_engine", "request_id": f"r{next(_ids)}", **fields}, timeout=timeout
    )
    assert answer["type"] == "reply", answer
    return answer["result"]


def listed(session: CellSession, kind: str) -> list[dict[str, Any]]:
    return [r for r in release_engine(session, mode="list")["releasables"] if r["kind"] == kind]


def gone(pids: list[int]) -> bool:
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] != "Z":
                    return False
        except FileNotFoundError:
            continue
    return True


def test_a_fork_pool_is_listed_released_and_its_workers_are_gone(session: CellSession) -> None:
    run(
        session,
        HOLD + "import multiprocessing as mp\npool = mp.get_context('fork').Pool(2)\n"
        "pool.map(_hold, range(2)); time.sleep(1.2)",
    )
    (pool,) = listed(session, "mp_pool")
    pids = [p["pid"] for p in pool["processes"]]
    assert (pool["name"], len(pids)) == ("pool", 2) and pool["host_bytes"] >= 90 * MB
    result = release_engine(session, mode="release", kind="mp_pool", name="pool", timeout_s=10)
    released = result["released"]
    assert released["outcome"] == "released", released
    assert released["still_alive"] == [] and gone(pids)
    assert released["before"]["totals"]["processes_host_bytes"] >= 90 * MB
    assert (released["after"]["totals"] or {"processes_host_bytes": 0})["processes_host_bytes"] < 20 * MB
    assert result["releasables"] == []
    assert session.k.eval("pool._state") == "TERMINATE"


def test_a_dataloader_iterator_abandoned_mid_epoch_is_released(session: CellSession) -> None:
    run(
        session,
        "import time, torch\nfrom torch.utils.data import DataLoader\n"
        "loader = DataLoader(list(range(10_000)), batch_size=10, num_workers=2)\n"
        "it = iter(loader); next(it); time.sleep(1)",
        timeout=120,
    )
    (entry,) = listed(session, "dataloader_iter")
    pids = [p["pid"] for p in entry["processes"]]
    assert entry["name"] == "it" and len(pids) == 2
    assert all(p["role"] == "dataloader_worker" for p in entry["processes"])
    released = release_engine(session, mode="release", kind="dataloader_iter", name="it")["released"]
    assert released["outcome"] == "released", released
    assert [s["action"] for s in released["steps"]][:2] == ["it._shutdown_workers()", "del it"]
    assert gone(pids)
    assert session.k.eval("'it' in globals()") is False


def test_a_killed_dataloader_worker_is_explained_with_its_figures(session: CellSession) -> None:
    run(
        session,
        "import os, signal, time, torch\nfrom torch.utils.data import DataLoader\n"
        "class Slow(torch.utils.data.Dataset):\n"
        "    def __len__(self): return 10_000\n"
        "    def __getitem__(self, i): time.sleep(0.01); return i\n"
        "loader = DataLoader(Slow(), batch_size=4, num_workers=2)\n"
        "it = iter(loader); next(it); time.sleep(1.5)",
        timeout=120,
    )
    victim = session.k.eval("it._workers[0].pid")
    # The cell sleeps after the kill, so that torch's SIGCHLD handler raises "is killed by
    # signal: Killed" in it: iterating at once races the handler, and a busy machine can let
    # the data queue fail first with a bare "Connection reset by peer".
    result = session.run(
        f"os.kill({victim}, signal.SIGKILL)\ntime.sleep(10)\nfor _ in it: pass", record_timeout=60, timeout=60
    )
    assert result["reply"]["status"] == "error"
    # torch raises the SIGCHLD handler's "is killed by signal: Killed", or, where the data queue's
    # check comes first, "exited unexpectedly" raised from it: the diagnosis reads the chain.
    assert str(victim) in result["reply"]["evalue"], result["reply"]["evalue"]
    oom = result["record"]["oom"]
    assert oom is not None and oom["kind"] == "host"
    assert oom["causes"][0]["cause"] == "dataloader_workers"
    workers = oom["dataloader_workers"]
    assert workers["killed_pids"] == [victim] and workers["signal"] == "Killed"
    killed = next(w for w in workers["workers"] if w["pid"] == victim)
    assert killed["killed"] is True and killed["host_bytes"] > 0 and killed["read_at"] is not None
    assert workers["workers_host_bytes"] >= killed["host_bytes"]
    assert workers["snippet"] == "dataloader-worker-memory"
    run(session, "del it")


def test_a_host_out_of_memory_error_names_the_pool_workers_with_release(session: CellSession) -> None:
    run(
        session,
        HOLD + "import multiprocessing as mp\npool = mp.get_context('fork').Pool(2)\n"
        "pool.map(_hold, range(2)); time.sleep(1.2)",
    )
    pids = sorted(session.k.eval("[p.pid for p in pool._pool]"))
    # NumPy's MemoryError names the request; a bytearray of 64 PiB cannot be had.
    result = session.run("import numpy as np\nnp.empty(1 << 53, dtype=np.uint8)", record_timeout=60, timeout=60)
    assert result["reply"]["status"] == "error"
    oom = result["record"]["oom"]
    assert oom is not None and oom["kind"] == "host", oom
    children = [p for p in oom["other_processes"] if p.get("child_of_kernel")]
    assert sorted(p["pid"] for p in children) == pids, oom["other_processes"]
    assert all(p["remedies"] == ["release_engine", "stop_process"] for p in children)
    assert all(p["release"] == {"kind": "mp_pool", "name": "pool"} for p in children)
    assert all(p["used_bytes"] >= 40 * MB for p in children)
    run(session, "pool.terminate(); pool.join()")


@pytest.mark.skipif(importlib.util.find_spec("distributed") is None, reason="dask[distributed] is not installed")
def test_a_dask_local_cluster_is_released_and_memory_comes_back(session: CellSession) -> None:
    # A first cluster, started and closed before the figures are read: the kernel keeps what the
    # first one costs it for good (the modules it loads, the event loop's thread, the caches they
    # fill; about 5 MB on this VM), which no release can give back.
    run(
        session,
        "import time, gc\n"
        "from dask.distributed import LocalCluster, Client\n"
        "with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as c,"
        " Client(c):\n"
        "    pass\n"
        "gc.collect()",
        timeout=120,
    )
    before = snapshot_sample(session.k, session.comm_id, f"t{next(_ids)}")
    run(
        session,
        "cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)\n"
        "client = Client(cluster); time.sleep(1)",
        timeout=120,
    )
    (dask,) = listed(session, "dask")
    pids = [p["pid"] for p in dask["processes"] if p["role"] == "dask_worker"]
    assert dask["name"] == "client" and len(pids) == 2
    released = release_engine(session, mode="release", kind="dask", name="client", timeout_s=20)["released"]
    assert released["outcome"] == "released", released
    assert gone(pids)
    run(session, "gc.collect()")
    after = snapshot_sample(session.k, session.comm_id, f"t{next(_ids)}")

    # The spawn start method's resource tracker (role mp_helper) stays for the kernel's life, whatever
    # started it: it is multiprocessing's, not the cluster's, and is left out of both totals.
    def total(sample: dict[str, Any]) -> int:
        tree = sample["processes"]
        helpers = sum(p["host"]["host_bytes"] for p in tree["processes"] if p["role"] == "mp_helper")
        return ((tree["totals"] or {}).get("host_bytes") or sample["host"]["rss_bytes"]) - helpers

    assert abs(total(after) - total(before)) <= 0.05 * total(before), (total(before), total(after))
    assert session.k.eval("client.status") == "closed"


# -- Ray ------------------------------------------------------------------------------

# Every Python process of Ray imports jsonschema, whose format checkers import rfc3987_syntax
# where it is installed (jupyter_events' jsonschema[format-nongpl] brings it): that import
# builds some 35 Earley parsers, 3.3 s of CPU on the 2-core VM, in each of the five Python
# processes ray.init() starts at once, and in the kernel and each worker. The dashboard agent
# then took 8 s (idle machine) to more than 15 s (busy) to write its port files, and the
# raylet, which waits a fixed 15 s for them (ray-project/ray#65983), died: ray.init() "timed
# out". This module, first on the PYTHONPATH of the kernel and so of every Ray process, makes
# that import fail, as jsonschema allows (it then checks no "iri" format; Ray checks no format).
# ray.init() then takes 8 s on the idle VM, 11 to 13 s at a load average of 6.
_NO_RFC3987_SYNTAX = 'raise ImportError("left out by the Ray tests: its import takes seconds of CPU")\n'
# Ray's roles in the tree (sampling/processes/roles.py).
_RAY_ROLES = {"raylet", "ray_worker", "ray_node"}
# A worker that holds 80 MB of its own, every page written.
_HELD = "_held = bytearray(80 << 20); _held[::4096] = b'\\x01' * len(range(0, len(_held), 4096))"


@pytest.fixture(name="ray_session")
def ray_session_fixture(bootstrap: str, tmp_path: Path) -> Iterator[tuple[CellSession, str]]:
    """A live helper kernel for Ray, and the temp dir its runtime keeps its sockets and logs in."""
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "rfc3987_syntax.py").write_text(_NO_RFC3987_SYNTAX)
    python_path = os.pathsep.join(filter(None, [str(shim), os.environ.get("PYTHONPATH")]))
    # Ray's own, not /tmp/ray that any other Ray of the machine shares; short, as its sockets'
    # paths must fit 107 bytes.
    temp_dir = tempfile.mkdtemp(prefix="ray-")
    env = {"PYTHONPATH": python_path, "RAY_USAGE_STATS_ENABLED": "0"}
    try:
        with live_helper_kernel(bootstrap, CONFIG, env) as (kernel, comm_id):
            yield CellSession(kernel, comm_id), temp_dir
    finally:
        shutil.rmtree(temp_dir, ignore_errors=True)


def ray_init(session: CellSession, temp_dir: str) -> None:
    # One CPU, no dashboard UI, the workers' output kept out of the cell, a 100 MB object store
    # (the default is 30 % of RAM in /dev/shm).
    run(
        session,
        f"ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False, object_store_memory=100 << 20,"
        f" _temp_dir={temp_dir!r})",
        timeout=120,
    )


def alive_with(text: str) -> list[int]:
    """The live processes of the machine whose command line has ``text`` in it."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and not gone([int(entry.name)]):
            try:
                with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                    if text.encode() in f.read():
                        found.append(int(entry.name))
            except OSError:
                continue
    return found


def tree_total(sample: dict[str, Any]) -> int:
    """The kernel and its processes (the kernel's RSS alone when it has none)."""
    return (sample["processes"]["totals"] or {}).get("host_bytes") or sample["host"]["rss_bytes"]


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed")
def test_a_ray_runtime_is_listed_released_and_its_processes_and_memory_are_gone(
    ray_session: tuple[CellSession, str],
) -> None:
    session, temp_dir = ray_session
    run(session, "import gc, os, time, ray")
    ray_init(session, temp_dir)
    run(
        session,
        "@ray.remote\nclass Holder:\n"
        f"    def __init__(self):\n        {_HELD.replace('_held', 'self.held')}\n"
        "    def pid(self):\n        return os.getpid()\n"
        "holder = Holder.remote(); actor_pid = ray.get(holder.pid.remote()); time.sleep(1.2)",
    )
    actor_pid = session.k.eval("actor_pid")

    # The tree: every process is Ray's, with a Ray role (its autoscaler's monitor is no worker's child).
    tree = snapshot_sample(session.k, session.comm_id, f"t{next(_ids)}")["processes"]["processes"]
    roles = {p["pid"]: p["role"] for p in tree}
    assert set(roles.values()) <= _RAY_ROLES, roles
    assert list(roles.values()).count("raylet") == 1 and roles[actor_pid] == "ray_worker"
    assert "gcs_server" in {p["name"] for p in tree if p["role"] == "ray_node"}

    # The listing: the runtime holds all of them, and their memory.
    (entry,) = listed(session, "ray")
    pids = [p["pid"] for p in entry["processes"]]
    assert entry["name"] == "ray" and set(pids) == set(roles), (entry, roles)
    # Read again for the listing: within 10 % of the snapshot's, the actor's 80 MB among it.
    held = {p["pid"]: p["host"]["host_bytes"] or 0 for p in tree}
    assert held[actor_pid] >= 80 * MB
    assert abs(entry["host_bytes"] - sum(held.values())) <= 0.1 * sum(held.values()), (entry, held)
    result = release_engine(session, mode="release", kind="ray", name="ray", timeout_s=20)
    released = result["released"]
    assert released["outcome"] == "released", released
    assert released["steps"] == [{"action": "ray.shutdown()", "ok": True, "error": None}]
    assert released["still_alive"] == [] and result["releasables"] == []
    assert released["before"]["totals"]["processes_host_bytes"] >= 80 * MB
    assert released["after"]["totals"] is None  # no process left in the tree
    # The process table: none of them lives on (zombies aside), nor anything of this runtime.
    assert gone(pids) and alive_with(temp_dir) == []
    assert session.k.eval("ray.is_initialized()") is False

    # The memory. Ray's first runtime leaves about 20 MB in the kernel for good (modules it
    # imports as it starts, the pages of its native library, its core worker's heap: 102 MB
    # after `import ray`, 124 MB after the release, here), which no release gives back; a second
    # runtime in the same kernel leaves nothing more. So the kernel alone is read now, and a
    # second runtime, with a task's worker holding the memory this time, must give it all back.
    run(session, "del holder; gc.collect()")
    before = snapshot_sample(session.k, session.comm_id, f"t{next(_ids)}")
    assert before["processes"]["totals"] is None  # the kernel alone
    ray_init(session, temp_dir)
    run(
        session,
        f"@ray.remote\ndef hold():\n    global _held\n    {_HELD}\n    return os.getpid()\n"
        "task_pid = ray.get(hold.remote()); time.sleep(1.2)",
    )
    (entry,) = listed(session, "ray")
    pids = [p["pid"] for p in entry["processes"]]
    assert session.k.eval("task_pid") in pids and entry["host_bytes"] >= 80 * MB
    released = release_engine(session, mode="release", kind="ray", name="ray", timeout_s=20)["released"]
    assert released["outcome"] == "released", released
    assert released["still_alive"] == [] and gone(pids) and alive_with(temp_dir) == []
    run(session, "gc.collect()")
    after = snapshot_sample(session.k, session.comm_id, f"t{next(_ids)}")
    assert abs(tree_total(after) - tree_total(before)) <= 0.05 * tree_total(before), (before, after)
