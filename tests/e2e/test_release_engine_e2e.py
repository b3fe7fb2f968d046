"""release_engine end to end: real pools, DataLoader workers and a Dask LocalCluster started in a real kernel,
listed, released and gone; a real DataLoader worker killed, explained with its figures."""

from __future__ import annotations

import importlib.util
import itertools
from typing import Any

import pytest
from kernel_harness import CellSession, snapshot_sample
from process_harness import MB, hold_code, run, session_fixture  # noqa: F401 (the session fixture)

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


@pytest.mark.skipif(importlib.util.find_spec("distributed") is None, reason="dask[distributed] is not installed")
def test_a_dask_local_cluster_is_released_and_memory_comes_back(session: CellSession) -> None:
    # Every module the cluster loads is loaded first: the kernel keeps its modules after the release.
    run(
        session, "import time, gc, distributed.scheduler, distributed.nanny, distributed.deploy.local, dask.distributed"
    )
    before = snapshot_sample(session.k, session.comm_id, f"t{next(_ids)}")
    run(
        session,
        "from dask.distributed import LocalCluster, Client\n"
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
