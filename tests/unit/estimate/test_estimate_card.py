"""The card's budget read without creating a CUDA context (measured once CUDA is up, estimated before),
and the largest batch size named from it and confirmed by a trace."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
import torch
import torch.nn as nn

from jupyterlab_vram_helper.estimate import estimate_run
from jupyterlab_vram_helper.estimate.card_budget import ESTIMATED_CONTEXT_BYTES, card_budget, planned_card

pytestmark = pytest.mark.usefixtures("real_torch")
GB = 1 << 30


class FakeCuda:
    def __init__(self, initialised: bool) -> None:
        self.initialised = initialised
        self.calls: list[str] = []

    def is_initialized(self) -> bool:
        return self.initialised

    def device_count(self) -> int:
        return 1

    def memory_allocated(self, index: int) -> int:
        self.calls.append("memory_allocated")
        return 3 * GB

    def memory_reserved(self, index: int) -> int:
        return 4 * GB

    def get_device_properties(self, index: int) -> Any:
        self.calls.append("get_device_properties")
        return SimpleNamespace(total_memory=80 * GB, name="NVIDIA H100 80GB HBM3")


def fake_torch(initialised: bool) -> Any:
    context = SimpleNamespace(_cuda_hasPrimaryContext=lambda index: initialised)
    return SimpleNamespace(cuda=FakeCuda(initialised), _C=context)


GPUS: list[Any] = [
    {
        "index": 0,
        "name": "NVIDIA H100 80GB HBM3",
        "total_bytes": 80 * GB,
        "nvml": {"used_bytes": 7 * GB, "total_bytes": 80 * GB, "process_used_bytes": 5 * GB},
    }
]


def test_with_cuda_up_the_overhead_is_measured_and_the_models_own_bytes_are_not_counted_twice() -> None:
    card: Any = card_budget(fake_torch(True), 0, 0.1, 1 * GB, GPUS, [])
    assert card is not None
    # The context (5 - 4 GB), the cached blocks (4 - 3 GB) and another process's 2 GB.
    assert (card["overhead_bytes"], card["overhead_measured"]) == (4 * GB, True)
    assert card["other_allocated_bytes"] == 2 * GB
    assert card["free_for_step_bytes"] == 80 * GB - 2 * GB - 4 * GB - card["margin_bytes"]


def test_before_cuda_is_up_nothing_of_torch_cuda_is_read_and_the_context_is_an_estimate() -> None:
    torch_ = fake_torch(False)
    gpus = [{**GPUS[0], "nvml": {**GPUS[0]["nvml"], "used_bytes": 1 * GB, "process_used_bytes": 0}}]
    card = card_budget(torch_, 0, 0.0, 0, gpus, [])
    assert card is not None and torch_.cuda.calls == []
    assert (card["overhead_bytes"], card["overhead_measured"]) == (ESTIMATED_CONTEXT_BYTES + GB, False)
    assert card_budget(torch_, 1, 0.1, 0, gpus, []) is None


def test_a_per_process_memory_fraction_is_the_card_this_kernel_has() -> None:
    torch_ = fake_torch(True)
    torch_.cuda.get_per_process_memory_fraction = lambda index: 0.25
    notes: list[str] = []
    card: Any = card_budget(torch_, 0, 0.1, 1 * GB, GPUS, notes)
    # 20 of the 80 GB; under the cap only PyTorch's cached blocks (4 - 3 GB) stand
    # between the step and it, besides the 2 GB allocated besides the model.
    assert (card["total_bytes"], card["overhead_bytes"]) == (20 * GB, 1 * GB)
    assert card["margin_bytes"] == 2 * GB
    assert card["free_for_step_bytes"] == 20 * GB - 2 * GB - 1 * GB - 2 * GB
    assert notes == [
        "PyTorch's per-process memory fraction (0.25) caps this kernel at 20.0 GiB of the card's 80.0 GiB: "
        "the step is fitted to the cap."
    ]
    torch_.cuda.get_per_process_memory_fraction = lambda index: 1.0
    notes.clear()
    assert card_budget(torch_, 0, 0.1, 1 * GB, GPUS, notes)["total_bytes"] == 80 * GB  # type: ignore[index]
    assert notes == []


def test_a_planned_card_has_nothing_allocated_and_an_estimated_context() -> None:
    card = planned_card(24 * GB, 0.1)
    assert (card["index"], card["planned"], card["overhead_measured"]) == (None, True, False)
    assert card["free_for_step_bytes"] == 24 * GB - ESTIMATED_CONTEXT_BYTES - round(2.4 * GB)


def test_a_planned_card_is_fitted_without_a_gpu() -> None:
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 4))
    optimizer = torch.optim.Adam(model.parameters())
    batch = (torch.zeros(16, 64), torch.zeros(16, dtype=torch.long))
    shared: list[Any] = []
    result = estimate_run.run_estimate(
        model,
        batch,
        optimizer,
        nn.CrossEntropyLoss(),
        card_bytes=1 * GB,
        progress=lambda stage, done, total, partial=None: shared.append(partial) if partial else None,
    )
    card: Any = result["card"]
    assert card is not None and card["planned"] and card["total_bytes"] == 1 * GB
    largest = result["largest_batch_size"]
    assert largest is not None and largest > 16
    plain = result["variants"][0]
    assert plain["peak_at_largest_bytes"] is not None and plain["peak_at_largest_bytes"] <= card["free_for_step_bytes"]
    # The plain answer was shared before the remedies were traced: the same
    # verdict, with bfloat16 autocast and checkpointing still to come.
    (partial,) = shared
    assert partial["largest_batch_size"] == largest
    assert [v["variant"] for v in partial["variants"]] == ["plain", "grad_accumulation"]
    assert [v["variant"] for v in result["variants"]] == ["plain", "amp_bf16", "checkpointing", "grad_accumulation"]


def test_the_largest_batch_size_is_traced_and_fits(monkeypatch: pytest.MonkeyPatch) -> None:
    budget = 40 << 20
    card = {
        "index": 0,
        "planned": False,
        "name": "test card",
        "total_bytes": budget,
        "other_allocated_bytes": 0,
        "overhead_bytes": 0,
        "overhead_measured": True,
        "margin_bytes": 0,
        "free_for_step_bytes": budget,
    }
    monkeypatch.setattr(estimate_run, "card_budget", lambda *args: card)
    model = nn.Sequential(nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 256))
    result: Any = estimate_run.run_estimate(model, torch.randn(8, 256), torch.optim.Adam(model.parameters()))
    largest = result["largest_batch_size"]
    plain = result["variants"][0]
    assert largest is not None and plain["peak_at_largest_bytes"] <= budget
    # The traces made to confirm it are all within a few steps of the budget.
    assert plain["peak_at_largest_bytes"] > 0.8 * budget
    assert [row["fits"] for row in result["rows"]] == [row["train_peak_bytes"] <= budget for row in result["rows"]]
    accumulation = result["variants"][3]
    assert accumulation["accumulation_steps"] == max(1, -(-8 // accumulation["largest_batch_size"]))
