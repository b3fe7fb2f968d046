"""Tensors that keep an autograd graph alive, flagged by ``inspect``: a real ipykernel, real CPU torch."""

from __future__ import annotations

from typing import Any

import pytest
from kernel_harness import Kernel, attach_helper

pytestmark = pytest.mark.kernel

QUIET = {"interval_s": 30.0, "heartbeat_s": 60.0}


def inspect(kernel: Kernel, comm_id: str) -> dict[str, dict[str, Any]]:
    answer = kernel.request(comm_id, {"type": "inspect", "request_id": "i"}, timeout=60)
    assert answer["type"] == "reply", answer
    return {e["name"]: e for e in answer["result"]["entries"]}


def test_a_loss_history_is_flagged_and_item_values_are_not(kernel: Kernel, bootstrap: str) -> None:
    pytest.importorskip("torch")
    comm_id = attach_helper(kernel, bootstrap, QUIET)
    reply = kernel.execute(
        "import torch\n"
        "from torch import nn\n"
        "model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 1))\n"
        "opt = torch.optim.SGD(model.parameters(), lr=0.01)\n"
        "losses, values = [], []\n"
        "for step in range(5):\n"
        "    x = torch.randn(512, 64)\n"
        "    loss = model(x).pow(2).mean()\n"
        "    opt.zero_grad(); loss.backward(retain_graph=True); opt.step()\n"
        "    losses.append(loss)\n"  # the leak: each loss keeps its iteration's graph
        "    values.append(loss.item())\n"
        "with torch.no_grad():\n"
        "    evaluated = model(torch.randn(8, 64))\n"
        "detached = [l.detach() for l in losses]\n",
        timeout=120,
    )
    assert reply["status"] == "ok", reply
    start = len(kernel.output_messages())
    entries = inspect(kernel, comm_id)
    assert kernel.output_messages()[start:] == []

    graph = entries["losses"]["graph_holding"]
    assert graph is not None and graph["tensors"] == 5
    # each loss reaches its own mean/pow/linear/relu nodes, plus the parameters' AccumulateGrad nodes
    assert graph["graph_nodes"] >= 5 * 5 and graph["truncated"] is False
    # What the graphs saved for backward and no name holds: each iteration's ReLU
    # output (512x256 floats) and model output (512x1), and its input (512x64)
    # except the last, which `x` holds; the weights are the model's.
    kept = 5 * (512 * 256 + 512) * 4 + 4 * 512 * 64 * 4
    assert graph["bytes"] == kept and graph["packed_by_hooks"] == 0
    # ... counted on the list, which so comes first, and shared with `loss`
    assert entries["losses"]["total_bytes"] == kept + 5 * 4
    assert entries["losses"]["bytes_by_device"] == {"cpu": kept + 5 * 4}
    assert next(iter(entries)) == "losses"
    assert "losses" in entries["loss"]["shared_with"]
    assert entries["loss"]["graph_holding"]["tensors"] == 1
    # parameters, no_grad results and detached copies hold no graph
    assert entries["model"]["graph_holding"] is None
    assert entries["evaluated"]["graph_holding"] is None
    assert entries["detached"]["graph_holding"] is None
    assert "values" not in entries  # floats hold no memory

    # The fix: after .item() / .detach(), nothing is flagged.
    kernel.execute("losses = [l.item() for l in losses]\nloss = loss.detach()\n")
    entries = inspect(kernel, comm_id)
    assert "losses" not in entries
    assert entries["loss"]["graph_holding"] is None
