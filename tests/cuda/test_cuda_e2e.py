"""Ground truth on a real GPU: the helper's figures against torch.cuda, and no side effects.

Skipped where CUDA is unavailable. The probe runs in a subprocess so that the
test process itself never initialises CUDA.
"""

from __future__ import annotations

import subprocess
import sys
import time
from functools import lru_cache

import pytest

from kernel_harness import CellSession, Kernel, attach_helper, snapshot_sample

pytestmark = [pytest.mark.cuda, pytest.mark.kernel]


@lru_cache(maxsize=None)
def _cuda_probe() -> str:
    code = "import torch, sys; sys.stdout.write('yes' if torch.cuda.is_available() else 'no')"
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    except Exception as exc:  # pragma: no cover - depends on the machine
        return f"probe failed: {exc}"
    if out.returncode != 0:
        return f"torch not importable: {out.stderr.strip().splitlines()[-1:] or out.returncode}"
    return out.stdout.strip()


@pytest.fixture(autouse=True)
def needs_cuda() -> None:
    result = _cuda_probe()
    if result != "yes":
        pytest.skip(f"needs a CUDA GPU and a CUDA build of torch (torch.cuda.is_available() -> {result})")


def _open(kernel: Kernel, bootstrap: str) -> str:
    return attach_helper(kernel, bootstrap, {"interval_s": 0.1, "heartbeat_s": 0.1}, timeout=60)


def test_sample_equals_torch_cuda_figures(kernel: Kernel, bootstrap: str) -> None:
    comm_id = _open(kernel, bootstrap)
    reply = kernel.execute(
        "import torch\n"
        "a = torch.empty(256 * 2**20, dtype=torch.uint8, device='cuda:0')\n"
        "b = torch.empty(100 * 2**20 + 3, dtype=torch.uint8, device='cuda:0')\n"
        "del a\n",
        timeout=300,
    )
    assert reply["status"] == "ok", reply
    sample = snapshot_sample(kernel, comm_id, "s1", timeout=60)
    truth = kernel.eval(
        "(torch.cuda.memory_allocated(0), torch.cuda.memory_reserved(0), torch.cuda.max_memory_allocated(0),"
        " torch.cuda.get_device_properties(0).total_memory, torch.cuda.device_count())"
    )
    assert sample["torch"] == {"imported": True, "cuda_initialized": True}
    assert len(sample["gpus"]) == truth[4]
    g = sample["gpus"][0]
    assert (g["torch"]["allocated_bytes"], g["torch"]["reserved_bytes"], g["torch"]["peak_allocated_bytes"]) == truth[:3]
    assert g["total_bytes"] == truth[3]
    assert g["torch"]["peak_allocated_bytes"] >= 356 * 2**20
    if g["nvml"] is not None:
        # the CUDA context plus the reserved pool, attributed to the kernel
        used = g["nvml"]["process_used_bytes"]
        assert used is None or used >= truth[1]
    # the sampler's own samples agree too (no snapshot needed)
    kernel.execute("c = torch.empty(64 * 2**20, dtype=torch.uint8, device='cuda:0')")
    expected = kernel.eval("torch.cuda.memory_allocated(0)")
    kernel.wait_for(
        comm_id,
        lambda d: d.get("type") == "sample" and d["gpus"] and (d["gpus"][0]["torch"] or {}).get("allocated_bytes") == expected,
        timeout=30,
    )
    assert kernel.output_messages() == []


def test_monitoring_creates_no_cuda_context(kernel: Kernel, bootstrap: str) -> None:
    kernel.execute("import torch")
    pid = kernel.eval("__import__('os').getpid()")
    comm_id = _open(kernel, bootstrap)
    hello = kernel.comm_data(comm_id, "hello")[0]
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        kernel.pump(0.2)
    snapshot_sample(kernel, comm_id, "s", timeout=60)
    assert kernel.eval("torch.cuda.is_initialized()") is False
    samples = kernel.comm_data(comm_id, "sample")
    assert all(s["torch"] == {"imported": True, "cuda_initialized": False} for s in samples)
    assert all(g["torch"] is None for s in samples for g in s["gpus"])
    if not hello["nvml"]["available"]:
        pytest.skip(f"NVML unavailable in the kernel: {hello['nvml']['error']}")
    # Devices come from NVML before CUDA init.
    assert hello["devices"] and all(d["total_bytes"] for d in hello["devices"])
    assert all(g["nvml"] is not None for g in samples[-1]["gpus"])
    pynvml = pytest.importorskip("pynvml")
    pynvml.nvmlInit()
    try:
        pids = set()
        for i in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(i)
            pids |= {p.pid for p in pynvml.nvmlDeviceGetComputeRunningProcesses(handle)}
    finally:
        pynvml.nvmlShutdown()
    assert pid not in pids
    assert all(g["nvml"]["process_used_bytes"] in (0, None) for g in samples[-1]["gpus"])


# --- per-cell accounting against torch.cuda ground truth ------------------------------------


def test_cell_peak_and_delta_equal_torch_cuda_to_the_byte(kernel: Kernel, bootstrap: str) -> None:
    cells = CellSession(kernel, _open(kernel, bootstrap))
    cells.run(
        "import torch\nkeep = torch.empty(64 * 2**20, dtype=torch.uint8, device='cuda:0')", timeout=300, record_timeout=30
    )
    # A cell with a transient peak below the earlier one: only a per-cell
    # reset shows it. The cell records its own ground truth.
    made = cells.run(
        "start_allocated = torch.cuda.memory_allocated(0)\n"
        "t = torch.empty(48 * 2**20 + 7, dtype=torch.uint8, device='cuda:0')\n"
        "u = torch.empty(16 * 2**20, dtype=torch.uint8, device='cuda:0')\n"
        "del t\n"
        "truth_peak = torch.cuda.max_memory_allocated(0)\n"
        "truth_delta = torch.cuda.memory_allocated(0) - start_allocated\n",
        record_timeout=30,
    )
    reply, record = made["reply"], made["record"]
    assert reply["status"] == "ok", reply
    truth_peak, truth_delta = kernel.eval("(truth_peak, truth_delta)")
    g = next(g for g in record["gpus"] if g["index"] == 0)
    assert g["peak_exact"] is True and record["peak_exact"] is True
    assert g["allocated_peak_bytes"] == truth_peak
    assert g["allocated_after_bytes"] - g["allocated_before_bytes"] == truth_delta
    assert g["allocated_after_bytes"] == kernel.eval("torch.cuda.memory_allocated(0)")
    assert g["reserved_after_bytes"] == kernel.eval("torch.cuda.memory_reserved(0)")
    assert kernel.output_messages() == []


def test_cell_peak_without_reset_leaves_the_users_counter_alone(kernel: Kernel, bootstrap: str) -> None:
    comm_id = _open(kernel, bootstrap)
    cells = CellSession(kernel, comm_id)
    kernel.request(comm_id, {"type": "configure", "request_id": "c", "config": {"reset_peak_per_cell": False}})
    cells.run(
        "import torch\nbig = torch.empty(256 * 2**20, dtype=torch.uint8, device='cuda:0'); del big",
        timeout=300,
        record_timeout=30,
    )
    user_peak = kernel.eval("torch.cuda.max_memory_allocated(0)")
    record = cells.run("small = torch.empty(8 * 2**20, dtype=torch.uint8, device='cuda:0')", record_timeout=30)["record"]
    assert kernel.eval("torch.cuda.max_memory_allocated(0)") == user_peak  # not reset
    g = next(g for g in record["gpus"] if g["index"] == 0)
    assert g["peak_exact"] is False
    assert g["allocated_peak_bytes"] >= g["allocated_after_bytes"] == kernel.eval("torch.cuda.memory_allocated(0)")


def test_cell_that_initialises_cuda_counts_from_zero(kernel: Kernel, bootstrap: str) -> None:
    cells = CellSession(kernel, _open(kernel, bootstrap))
    cells.run("import torch", record_timeout=30)
    record = cells.run(
        "x = torch.empty(32 * 2**20, dtype=torch.uint8, device='cuda:0')\n"
        "truth_peak = torch.cuda.max_memory_allocated(0)",
        timeout=300,
        record_timeout=30,
    )["record"]
    g = next(g for g in record["gpus"] if g["index"] == 0)
    assert g["allocated_before_bytes"] == 0 and g["reserved_before_bytes"] == 0
    assert g["allocated_peak_bytes"] == kernel.eval("truth_peak") and g["peak_exact"] is True


def test_a_real_cuda_oom_is_recognised(kernel: Kernel, bootstrap: str) -> None:
    cells = CellSession(kernel, _open(kernel, bootstrap))
    cells.run("import torch; torch.zeros(1, device='cuda:0')", timeout=300, record_timeout=30)
    made = cells.run("too_big = torch.empty(2**50, dtype=torch.uint8, device='cuda:0')", record_timeout=30)
    reply, record = made["reply"], made["record"]
    assert reply["status"] == "error"
    assert record["status"] == "error"
    assert record["error"]["type"] == "OutOfMemoryError" and record["error"]["out_of_memory"] is True
    assert "CUDA out of memory" in record["error"]["message_head"]


# --- issue #4: cleanup on a real GPU ---------------------------------------------------------


def _reply(kernel: Kernel, comm_id: str, data: dict) -> dict:
    answer = kernel.request(comm_id, data, timeout=120)
    assert answer["type"] == "reply", answer
    return answer["result"]


def test_empty_cache_returns_reserved_memory(kernel: Kernel, bootstrap: str) -> None:
    comm_id = _open(kernel, bootstrap)
    reply = kernel.execute(
        "import torch\n"
        "a = torch.empty(512 * 2**20, dtype=torch.uint8, device='cuda:0')\n"
        "del a\n",
        timeout=300,
    )
    assert reply["status"] == "ok", reply
    reserved = kernel.eval("torch.cuda.memory_reserved(0)")
    assert reserved >= 512 * 2**20
    result = _reply(kernel, comm_id, {"type": "free_memory", "request_id": "e1", "actions": ["empty_cache"]})
    assert result["empty_cache"] == "done"
    before, after = result["before"]["gpus"][0], result["after"]["gpus"][0]
    assert before["reserved_bytes"] == reserved
    assert after["reserved_bytes"] == kernel.eval("torch.cuda.memory_reserved(0)") < 2**20
    if before["nvml_used_bytes"] is not None:
        # NVML sees the same memory go back to the driver (other processes may move it a little)
        assert before["nvml_used_bytes"] - after["nvml_used_bytes"] >= 0.9 * 512 * 2**20


def test_deleting_a_cuda_tensor_drops_allocated_by_its_size(kernel: Kernel, bootstrap: str) -> None:
    comm_id = _open(kernel, bootstrap)
    size = 256 * 2**20
    reply = kernel.execute(f"import torch, weakref\ng = torch.empty({size}, dtype=torch.uint8, device='cuda:0')\nw = weakref.ref(g)")
    assert reply["status"] == "ok", reply
    listing = _reply(kernel, comm_id, {"type": "inspect", "request_id": "i1"})
    [entry] = [e for e in listing["entries"] if e["name"] == "g"]
    assert entry["bytes_by_device"] == {"cuda:0": size}
    assert entry["summary"] == f"uint8[{size}] cuda:0"
    result = _reply(kernel, comm_id, {"type": "delete", "request_id": "d1", "listing_id": listing["listing_id"],
                                      "names": ["g"], "hidden": [], "free": ["gc", "empty_cache"]})
    assert result["deleted"] == ["g"] and result["still_alive"] == []
    before, after = result["before"]["gpus"][0], result["after"]["gpus"][0]
    assert before["allocated_bytes"] - after["allocated_bytes"] == size
    assert before["reserved_bytes"] - after["reserved_bytes"] >= size
    assert kernel.eval("w() is None") is True


def test_free_memory_does_not_initialise_cuda(kernel: Kernel, bootstrap: str) -> None:
    comm_id = _open(kernel, bootstrap)
    kernel.execute("import torch")
    result = _reply(kernel, comm_id, {"type": "free_memory", "request_id": "n1", "actions": ["gc", "empty_cache"]})
    assert result["empty_cache"] == "skipped_cuda_not_initialized"
    _reply(kernel, comm_id, {"type": "inspect", "request_id": "n2"})
    assert kernel.eval("torch.cuda.is_initialized()") is False


# --- issue #6: the out-of-memory diagnosis on a real GPU --------------------------------------

GiB = 1 << 30


def test_filling_the_card_gives_the_allocators_numbers_and_blames_the_names(kernel: Kernel, bootstrap: str) -> None:
    cells = CellSession(kernel, _open(kernel, bootstrap))
    cells.run("import torch, pynvml; torch.zeros(1, device='cuda:0')", timeout=300, record_timeout=30)
    made = cells.run(
        "chunks = []\n"
        "while True:\n"
        "    chunks.append(torch.empty(2**30, dtype=torch.uint8, device='cuda:0'))",
        timeout=300,
        record_timeout=120,
    )
    reply = made["reply"]
    assert reply["status"] == "error" and reply["ename"] == "OutOfMemoryError"
    oom = made["record"]["oom"]
    truth = kernel.eval(
        "(torch.cuda.memory_allocated(0), torch.cuda.get_device_properties(0).total_memory, len(chunks))"
    )
    allocated, total, n_chunks = truth
    assert oom["kind"] == "cuda" and oom["device_index"] == 0
    assert oom["requested_bytes"] == GiB  # "Tried to allocate 1024.00 MiB"
    assert abs(oom["total_bytes"] - total) < 0.01 * total
    assert abs(oom["allocated_bytes"] - allocated) < 0.01 * allocated  # nothing was freed since
    assert n_chunks * GiB <= allocated
    assert oom["free_bytes"] < GiB
    causes = [c["cause"] for c in oom["causes"]]
    assert "too_big" not in causes and causes[0] == "stale_references", causes
    assert {h["label"] for h in oom["stale_holders"]} >= {"chunks"}
    kernel.execute("del chunks; torch.cuda.empty_cache()")


def test_holes_in_a_cached_segment_are_classified_as_fragmentation(kernel: Kernel, bootstrap: str) -> None:
    cells = CellSession(kernel, _open(kernel, bootstrap))
    setup = cells.run(
        "import torch\n"
        "MiB = 2**20\n"
        "free, _ = torch.cuda.mem_get_info(0)\n"
        "piece = 512 * MiB\n"
        "n = int(free * 0.5) // piece // 2 * 2\n"
        # one cached segment of n pieces, then split into n tensors
        "torch.empty(n * piece, dtype=torch.uint8, device='cuda:0'); \n"
        "parts = [torch.empty(piece, dtype=torch.uint8, device='cuda:0') for _ in range(n)]\n"
        # the rest of the card, in new segments
        "filler = []\n"
        "try:\n"
        "    while True:\n"
        "        filler.append(torch.empty(64 * MiB, dtype=torch.uint8, device='cuda:0'))\n"
        "except torch.OutOfMemoryError:\n"
        "    pass\n"
        # every other piece freed: n/2 holes of 512 MiB, none adjacent
        "del parts[::2]",
        timeout=600,
        record_timeout=120,
    )["reply"]
    assert setup["status"] == "ok", setup
    made = cells.run("torch.empty(1024 * MiB, dtype=torch.uint8, device='cuda:0')", timeout=300, record_timeout=120)
    assert made["reply"]["status"] == "error"
    oom = made["record"]["oom"]
    holes = kernel.eval("torch.cuda.memory_reserved(0) - torch.cuda.memory_allocated(0)")
    assert oom["requested_bytes"] == GiB
    assert oom["reserved_unallocated_bytes"] >= GiB
    assert abs(oom["reserved_unallocated_bytes"] - holes) < 0.02 * holes
    assert oom["causes"][0]["cause"] == "fragmentation", oom["causes"]
    kernel.execute("del parts, filler; torch.cuda.empty_cache()")
