"""The cleanup buttons on a real GPU: empty_cache gives the cache back (NVML
agrees), deleting a CUDA tensor held by a name and by Out[N] drops allocated
by its size, and nothing here initialises CUDA where it was not."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from gpu_helpers import MiB, open_helper, reply_of
from kernel_harness import Kernel

pytestmark = [pytest.mark.cuda, pytest.mark.kernel]


@pytest.mark.gpu_exclusive  # compares NVML's device-wide used memory before and after
def test_empty_cache_returns_reserved_memory(kernel: Kernel, bootstrap: str, figures: Callable[..., Any]) -> None:
    comm_id = open_helper(kernel, bootstrap)
    reply = kernel.execute(
        "import torch\na = torch.empty(512 * 2**20, dtype=torch.uint8, device='cuda:0')\ndel a\n",
        timeout=300,
    )
    assert reply["status"] == "ok", reply
    reserved = kernel.eval("torch.cuda.memory_reserved(0)")
    assert reserved >= 512 * MiB
    result = reply_of(kernel, comm_id, {"type": "free_memory", "request_id": "e1", "actions": ["empty_cache"]})
    assert result["empty_cache"] == "done"
    before, after = result["before"]["gpus"][0], result["after"]["gpus"][0]
    figures(
        reserved_before_bytes=before["reserved_bytes"],
        reserved_after_bytes=after["reserved_bytes"],
        nvml_used_before_bytes=before["nvml_used_bytes"],
        nvml_used_after_bytes=after["nvml_used_bytes"],
    )
    assert before["reserved_bytes"] == reserved
    assert after["reserved_bytes"] == kernel.eval("torch.cuda.memory_reserved(0)") < MiB
    assert before["nvml_used_bytes"] is not None, "NVML figures missing on a machine with NVML"
    # NVML sees the same memory go back to the driver
    assert before["nvml_used_bytes"] - after["nvml_used_bytes"] >= 0.9 * 512 * MiB


def test_deleting_a_cuda_tensor_held_by_a_name_and_by_the_output_cache(
    kernel: Kernel, bootstrap: str, figures: Callable[..., Any]
) -> None:
    comm_id = open_helper(kernel, bootstrap)
    size = 256 * MiB
    reply = kernel.execute(
        f"import torch, weakref\ng = torch.empty({size}, dtype=torch.uint8, device='cuda:0')\nw = weakref.ref(g)",
        timeout=300,
    )
    assert reply["status"] == "ok", reply
    echoed = kernel.execute("g")  # now Out[n], _n and _ hold it too
    n = echoed["execution_count"]
    listing = reply_of(kernel, comm_id, {"type": "inspect", "request_id": "i1"})
    [entry] = [e for e in listing["entries"] if e["name"] == "g"]
    assert entry["bytes_by_device"] == {"cuda:0": size}
    assert entry["summary"] == f"uint8[{size}] cuda:0"
    assert f"Out[{n}]" in entry["output_cache_refs"], entry["output_cache_refs"]
    result = reply_of(
        kernel,
        comm_id,
        {
            "type": "delete",
            "request_id": "d1",
            "listing_id": listing["listing_id"],
            "names": ["g"],
            "hidden": [],
            "free": ["gc", "empty_cache"],
        },
    )
    assert result["deleted"] == ["g"] and result["still_alive"] == []
    before, after = result["before"]["gpus"][0], result["after"]["gpus"][0]
    figures(
        tensor_bytes=size,
        allocated_before_bytes=before["allocated_bytes"],
        allocated_after_bytes=after["allocated_bytes"],
        reserved_before_bytes=before["reserved_bytes"],
        reserved_after_bytes=after["reserved_bytes"],
    )
    assert before["allocated_bytes"] - after["allocated_bytes"] == size
    assert before["reserved_bytes"] - after["reserved_bytes"] >= size
    assert kernel.eval("w() is None") is True
    assert kernel.eval(f"{n} in Out") is False


def test_free_memory_and_inspect_do_not_initialise_cuda(kernel: Kernel, bootstrap: str) -> None:
    comm_id = open_helper(kernel, bootstrap)
    kernel.execute("import torch")
    result = reply_of(kernel, comm_id, {"type": "free_memory", "request_id": "n1", "actions": ["gc", "empty_cache"]})
    assert result["empty_cache"] == "skipped_cuda_not_initialized"
    reply_of(kernel, comm_id, {"type": "inspect", "request_id": "n2"})
    assert kernel.eval("torch.cuda.is_initialized()") is False


def test_a_loss_historys_graph_bytes_are_what_deleting_it_frees(
    kernel: Kernel, bootstrap: str, figures: Callable[..., Any]
) -> None:
    """The Holders tab's graph figure against the allocator: deleting a loss
    history (and the last loss) frees exactly what its graphs kept alive."""
    comm_id = open_helper(kernel, bootstrap)
    reply = kernel.execute(
        "import torch\n"
        "torch.manual_seed(0)\n"
        "model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 1)).cuda()\n"
        "losses = []\n"
        "for _ in range(4):\n"
        "    loss = model(torch.randn(2048, 1024, device='cuda')).pow(2).mean()\n"
        "    losses.append(loss)\n"  # no backward: every iteration's activations stay
        "torch.cuda.synchronize()\n",
        timeout=300,
    )
    assert reply["status"] == "ok", reply
    listing = reply_of(kernel, comm_id, {"type": "inspect", "request_id": "g1"})
    entries = {e["name"]: e for e in listing["entries"]}
    graph = entries["losses"]["graph_holding"]
    assert graph is not None and graph["tensors"] == 4 and graph["packed_by_hooks"] == 0
    assert listing["entries"][0]["name"] == "losses"  # sorted by what it really holds
    allocated_before = kernel.eval("torch.cuda.memory_allocated(0)")
    result = reply_of(
        kernel,
        comm_id,
        {
            "type": "delete",
            "request_id": "g2",
            "listing_id": listing["listing_id"],
            "names": ["losses", "loss"],
            "hidden": [],
            "free": ["gc"],
        },
    )
    assert sorted(result["deleted"]) == ["loss", "losses"] and result["still_alive"] == []
    allocated_after = kernel.eval("torch.cuda.memory_allocated(0)")
    held = entries["losses"]["bytes_by_device"]["cuda:0"] + entries["loss"]["bytes_by_device"].get("cuda:0", 0)
    figures(
        graph=graph, listed_bytes=held, allocated_before_bytes=allocated_before, allocated_after_bytes=allocated_after
    )
    # Each iteration saved its input (2048x1024), the ReLU's output (2048x4096)
    # and the model's output (2048x1) for backward: ~40 MiB an iteration.
    assert graph["bytes"] >= 4 * 2048 * (1024 + 4096 + 1) * 4
    # The caching allocator rounds each block up (to 512 bytes, small ones to a 2 MiB segment's block)
    assert abs((allocated_before - allocated_after) - held) <= 4 * 4 * 512
