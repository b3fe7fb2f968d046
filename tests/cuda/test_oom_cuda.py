"""Real out-of-memory errors, provoked on the card, and how they are
classified: too big for the card, held by the notebook's names, holes in the
cache, or held by another process (named by its pid)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from gpu_helpers import GiB, MemoryHolder, MiB, open_helper
from kernel_harness import CellSession, Kernel

# Each fills the card: one at a time.
pytestmark = [pytest.mark.cuda, pytest.mark.kernel, pytest.mark.gpu_exclusive]


def _causes(oom: dict) -> list:
    return [c["cause"] for c in oom["causes"]]


def test_a_request_larger_than_the_card_is_too_big(kernel: Kernel, bootstrap: str, figures: Callable[..., Any]) -> None:
    cells = CellSession(kernel, open_helper(kernel, bootstrap))
    cells.run("import torch; torch.zeros(1, device='cuda:0')", timeout=300, record_timeout=30)
    made = cells.run("too_big = torch.empty(2**50, dtype=torch.uint8, device='cuda:0')", record_timeout=30)
    reply, record = made["reply"], made["record"]
    assert reply["status"] == "error"
    assert record["error"]["type"] == "OutOfMemoryError" and record["error"]["out_of_memory"] is True
    assert "CUDA out of memory" in record["error"]["message_head"]
    oom = record["oom"]
    figures(requested_bytes=oom["requested_bytes"], total_bytes=oom["total_bytes"], causes=_causes(oom))
    assert oom["requested_bytes"] == 2**50
    assert _causes(oom)[0] == "too_big"


def test_filling_the_card_blames_the_names_that_hold_it(
    kernel: Kernel, bootstrap: str, figures: Callable[..., Any]
) -> None:
    cells = CellSession(kernel, open_helper(kernel, bootstrap))
    cells.run("import torch, pynvml; torch.zeros(1, device='cuda:0')", timeout=300, record_timeout=30)
    made = cells.run(
        "chunks = []\nwhile True:\n    chunks.append(torch.empty(2**30, dtype=torch.uint8, device='cuda:0'))",
        timeout=300,
        record_timeout=120,
    )
    reply = made["reply"]
    assert reply["status"] == "error" and reply["ename"] == "OutOfMemoryError"
    oom = made["record"]["oom"]
    allocated, total, n_chunks = kernel.eval(
        "(torch.cuda.memory_allocated(0), torch.cuda.get_device_properties(0).total_memory, len(chunks))"
    )
    in_use = {h["label"]: h["bytes"] for h in oom.get("in_use_holders") or []}
    figures(
        requested_bytes=oom["requested_bytes"],
        allocated_bytes=oom["allocated_bytes"],
        torch_allocated_bytes=allocated,
        free_bytes=oom["free_bytes"],
        stale_bytes=oom["stale_bytes"],
        causes=_causes(oom),
        in_use_holders=in_use,
    )
    assert oom["kind"] == "cuda" and oom["device_index"] == 0
    assert oom["requested_bytes"] == GiB  # "Tried to allocate 1024.00 MiB"
    assert abs(oom["total_bytes"] - total) < 0.01 * total
    assert abs(oom["allocated_bytes"] - allocated) < 0.01 * allocated  # nothing was freed since
    assert n_chunks * GiB <= allocated
    assert oom["free_bytes"] < GiB
    # The failing cell itself fills `chunks`: what holds the card is its own work, not a stale
    # name (deleting it is no fix for that cell), so it is named as in use, with its bytes.
    causes = _causes(oom)
    assert "too_big" not in causes and "stale_references" not in causes, causes
    assert in_use.get("chunks", 0) >= n_chunks * GiB, in_use
    # The next cell does not use `chunks`: now it is a stale name, and it is blamed.
    later = cells.run("more = torch.empty(2**30, dtype=torch.uint8, device='cuda:0')", timeout=300, record_timeout=120)
    assert later["reply"]["status"] == "error" and later["reply"]["ename"] == "OutOfMemoryError"
    stale = later["record"]["oom"]
    figures(next_cell_causes=_causes(stale), next_cell_stale_bytes=stale["stale_bytes"])
    assert _causes(stale)[0] == "stale_references", stale["causes"]
    assert {h["label"] for h in stale["stale_holders"]} >= {"chunks"}
    assert stale["stale_bytes"] >= n_chunks * GiB
    kernel.execute("del chunks; torch.cuda.empty_cache()")


def test_holes_in_cached_segments_are_fragmentation(
    kernel: Kernel, bootstrap: str, figures: Callable[..., Any]
) -> None:
    cells = CellSession(kernel, open_helper(kernel, bootstrap))
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
    figures(
        requested_bytes=oom["requested_bytes"],
        reserved_unallocated_bytes=oom["reserved_unallocated_bytes"],
        torch_holes_bytes=holes,
        stale_bytes=oom["stale_bytes"],
        causes=_causes(oom),
        expandable_segments_on=oom.get("expandable_segments_on"),
    )
    assert oom["requested_bytes"] == GiB
    # The kit's kernels run without PYTORCH_CUDA_ALLOC_CONF: off, or unknown to a torch without the getter.
    assert oom.get("expandable_segments_on") is not True
    assert oom["reserved_unallocated_bytes"] >= GiB
    assert abs(oom["reserved_unallocated_bytes"] - holes) < 0.02 * holes
    assert _causes(oom)[0] == "fragmentation", oom["causes"]
    kernel.execute("del parts, filler; torch.cuda.empty_cache()")


def test_memory_held_by_another_process_names_its_pid(
    kernel: Kernel, bootstrap: str, figures: Callable[..., Any]
) -> None:
    cells = CellSession(kernel, open_helper(kernel, bootstrap))
    cells.run("import torch; torch.zeros(1, device='cuda:0')", timeout=300, record_timeout=30)
    free = kernel.eval("torch.cuda.mem_get_info(0)[0]")
    holder = MemoryHolder(free - 6 * GiB)  # leaves this kernel about 6 GiB
    try:
        made = cells.run(
            "x = torch.empty(8 * 2**30, dtype=torch.uint8, device='cuda:0')", timeout=300, record_timeout=120
        )
        assert made["reply"]["status"] == "error"
        oom = made["record"]["oom"]
        listed = {p["pid"]: p["used_bytes"] for p in oom["other_processes"]}
        figures(
            requested_bytes=oom["requested_bytes"],
            free_bytes=oom["free_bytes"],
            holder_pid=holder.pid,
            other_processes=oom["other_processes"],
            other_processes_bytes=oom["other_processes_bytes"],
            causes=_causes(oom),
        )
        assert holder.pid in listed, oom["other_processes"]
        assert listed[holder.pid] >= free - 6 * GiB
        # 8 GiB cannot fit while the other process runs (too big for now), and would once it stops.
        assert _causes(oom) == ["too_big", "other_processes"], oom["causes"]
        assert oom["other_processes_bytes"] >= free - 6 * GiB - 16 * MiB
    finally:
        holder.close()
