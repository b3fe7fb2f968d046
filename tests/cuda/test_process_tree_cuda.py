"""The kernel's child processes on a real card: a spawned child's GPU memory in the kernel's
process tree against NVML's own per-process figure, Stop giving it back, an out-of-memory
error that the child causes naming it, a spawn pool whose worker holds CUDA memory listed and
released, and DataLoader workers with pinned memory attributed.

Each test starts its children from the notebook's kernel, as a user's cell would, and
reads the tree from the helper's samples; NVML and nvidia-smi are read from this test
process, which never initialises CUDA.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from gpu_helpers import GiB, MiB, Nvml, open_helper, reply_of
from kernel_harness import CellSession, Kernel, snapshot_sample

# Each fills a share of the card, and reads device-wide figures: one at a time.
pytestmark = [pytest.mark.cuda, pytest.mark.kernel, pytest.mark.gpu_exclusive]

# A spawned child (no CUDA state inherited) that holds `nbytes` on cuda:0 until its
# parent goes, and says when it holds them. A spawned child imports its target by name,
# and a function defined in a notebook cell has none it can import: the target is
# written to a module of its own first, as a notebook user does.
CHILD_MODULE = """
def hold_on_gpu(nbytes, ready):
    import time
    import torch
    block = torch.empty(nbytes, dtype=torch.uint8, device="cuda:0")
    torch.cuda.synchronize()
    ready.set()
    time.sleep(3600)
"""
CHILD = (
    "import multiprocessing as mp, pathlib, sys, tempfile\n"
    "folder = tempfile.mkdtemp()\n"
    "pathlib.Path(folder, 'vram_gpu_child.py').write_text({module!r})\n"
    "sys.path.insert(0, folder)\n"
    "import vram_gpu_child\n"
    "ctx = mp.get_context('spawn')\n"
    "ready = ctx.Event()\n"
    "child = ctx.Process(target=vram_gpu_child.hold_on_gpu, args=({nbytes}, ready), daemon=True)\n"
    "child.start()\n"
    "assert ready.wait(180), 'the child did not allocate in time'\n"
)


def child_cell(nbytes: int) -> str:
    """The cell that starts the child holding ``nbytes`` on cuda:0."""
    return CHILD.format(module=CHILD_MODULE, nbytes=nbytes)


def the_child(session: CellSession, pid: int, tries: int = 40) -> dict[str, Any]:
    """The child's entry in the tree once its GPU figure is there (the driver lists it late)."""
    entry: dict[str, Any] | None = None
    for n in range(tries):
        sample = snapshot_sample(session.k, session.comm_id, f"child-{pid}-{n}", timeout=60)
        tree = sample["processes"] or {"processes": []}
        entry = next((p for p in tree["processes"] if p["pid"] == pid), None)
        if entry is not None and any(g["index"] == 0 and g["used_bytes"] for g in entry["gpus"]):
            return entry
        time.sleep(0.5)
    raise AssertionError(f"the child (pid {pid}) has no GPU figure in the kernel's tree: {entry}")


@pytest.fixture
def session(kernel: Kernel, bootstrap: str) -> CellSession:
    return CellSession(kernel, open_helper(kernel, bootstrap, interval_s=0.2))


def test_a_spawned_childs_gpu_memory_is_the_drivers_and_stop_returns_it(
    session: CellSession, nvml: Nvml, figures: Callable[..., None]
) -> None:
    made = session.run(child_cell(2 * GiB), timeout=300, record_timeout=60)
    assert made["reply"]["status"] == "ok", made["reply"]
    pid = session.k.eval("child.pid")
    entry = the_child(session, pid)
    ours = next(g["used_bytes"] for g in entry["gpus"] if g["index"] == 0)
    driver = nvml.process_bytes(pid)
    figures(child_pid=pid, tree_gpu_bytes=ours, nvml_process_bytes=driver, role=entry["role"])
    assert driver is not None, f"NVML does not list the child (pid {pid})"
    assert abs(ours - driver) <= 64 * MiB
    assert ours >= 2 * GiB
    assert entry["role"] in ("mp_process", "other"), entry["role"]

    result = reply_of(
        session.k,
        session.comm_id,
        {"type": "stop_process", "request_id": "stop-child", "pid": pid, "start_time": entry["start_time"]},
    )
    figures(outcome=result["outcome"], signals=result["signals"], waited_s=result["waited_s"])
    assert result["outcome"] in ("terminated", "killed"), result
    deadline = time.monotonic() + 30
    while nvml.process_bytes(pid) is not None and time.monotonic() < deadline:
        time.sleep(0.5)
    figures(nvml_process_bytes_after=nvml.process_bytes(pid))
    assert nvml.process_bytes(pid) is None, "the driver still lists the stopped child"


def test_an_oom_caused_by_the_childs_memory_names_the_child(
    session: CellSession, nvml: Nvml, figures: Callable[..., None]
) -> None:
    total = session.k.eval("__import__('torch').cuda.get_device_properties(0).total_memory")
    # The child takes all but 4 GiB; the kernel then asks for 8 GiB.
    made = session.run(child_cell(total - 4 * GiB), timeout=300, record_timeout=60)
    assert made["reply"]["status"] == "ok", made["reply"]
    pid = session.k.eval("child.pid")
    the_child(session, pid)
    failed = session.run(
        "import torch\nbig = torch.empty(8 * 2**30, dtype=torch.uint8, device='cuda:0')", timeout=300, record_timeout=60
    )
    assert failed["reply"]["status"] == "error"
    oom = failed["record"]["oom"]
    assert oom is not None and oom["kind"] == "cuda"
    named = [p for p in oom["other_processes"] if p["pid"] == pid]
    figures(causes=[c["cause"] for c in oom["causes"]], other_processes=oom["other_processes"])
    assert named and named[0].get("child_of_kernel") is True, oom["other_processes"]
    assert "stop_process" in (named[0].get("remedies") or [])
    assert "child_processes" in [c["cause"] for c in oom["causes"]]
    session.k.eval("child.kill() or True")


# A spawn pool whose one worker holds `nbytes` on cuda:0 between tasks (a module-level
# name of the worker's own); the target module is written first, as for CHILD.
POOL_MODULE = """
def hold_on_gpu(nbytes):
    import os
    import torch
    global block
    block = torch.empty(nbytes, dtype=torch.uint8, device="cuda:0")
    torch.cuda.synchronize()
    return os.getpid()
"""
POOL = (
    "import multiprocessing as mp, pathlib, sys, tempfile\n"
    "folder = tempfile.mkdtemp()\n"
    "pathlib.Path(folder, 'vram_gpu_pool.py').write_text({module!r})\n"
    "sys.path.insert(0, folder)\n"
    "import vram_gpu_pool\n"
    "gpu_pool = mp.get_context('spawn').Pool(1)\n"
    "worker_pid = gpu_pool.apply(vram_gpu_pool.hold_on_gpu, ({nbytes},))\n"
)


def test_a_pool_holding_gpu_memory_is_listed_and_released(
    session: CellSession, nvml: Nvml, figures: Callable[..., None]
) -> None:
    made = session.run(POOL.format(module=POOL_MODULE, nbytes=2 * GiB), timeout=300, record_timeout=60)
    assert made["reply"]["status"] == "ok", made["reply"]
    pid = session.k.eval("worker_pid")
    the_child(session, pid)
    listing = reply_of(session.k, session.comm_id, {"type": "release_engine", "request_id": "list", "mode": "list"})
    pools = [r for r in listing["releasables"] if r["kind"] == "mp_pool" and r["name"] == "gpu_pool"]
    assert pools, listing["releasables"]
    listed_gpu = sum(g["used_bytes"] or 0 for g in pools[0]["gpus"] if g["index"] == 0)
    figures(pool_gpu_bytes=listed_gpu, nvml_worker_bytes=nvml.process_bytes(pid))
    assert abs(listed_gpu - (nvml.process_bytes(pid) or 0)) <= 64 * MiB
    assert listed_gpu >= 2 * GiB

    result = reply_of(
        session.k,
        session.comm_id,
        {"type": "release_engine", "request_id": "release", "mode": "release", "kind": "mp_pool", "name": "gpu_pool"},
    )
    released = result["released"]
    before = next(g["used_bytes"] for g in released["before"]["gpus"] if g["index"] == 0)
    after = next(g["used_bytes"] for g in released["after"]["gpus"] if g["index"] == 0)
    figures(outcome=released["outcome"], gpu_used_before=before, gpu_used_after=after, waited_s=released["waited_s"])
    assert released["outcome"] == "released", released
    assert released["still_alive"] == []
    assert before - after >= 2 * GiB - 64 * MiB
    deadline = time.monotonic() + 30
    while nvml.process_bytes(pid) is not None and time.monotonic() < deadline:
        time.sleep(0.5)
    assert nvml.process_bytes(pid) is None, "the driver still lists the released worker"


def test_dataloader_workers_with_pinned_memory_are_attributed(
    session: CellSession, figures: Callable[..., None]
) -> None:
    made = session.run(
        "import torch\n"
        "from torch.utils.data import DataLoader, TensorDataset\n"
        "data = TensorDataset(torch.randn(4096, 256))\n"
        "loader = DataLoader(data, batch_size=64, num_workers=2, pin_memory=True, persistent_workers=True)\n"
        "batches = iter(loader)\n"
        "first = next(batches)\n",
        timeout=300,
        record_timeout=60,
    )
    assert made["reply"]["status"] == "ok", made["reply"]
    workers: list[dict[str, Any]] = []
    for n in range(20):
        tree = snapshot_sample(session.k, session.comm_id, f"loader-{n}", timeout=60)["processes"]
        workers = [p for p in (tree or {"processes": []})["processes"] if p["role"] == "dataloader_worker"]
        if len(workers) == 2:
            break
        time.sleep(0.5)
    figures(workers=[{"pid": w["pid"], "host": w["host"], "gpus": w["gpus"]} for w in workers])
    assert len(workers) == 2, workers
    assert all(w["host"]["host_bytes"] for w in workers)
    session.k.eval("loader._iterator._shutdown_workers() or True")
