"""The reference models of the estimate's GPU check, on the CPU: each makes the
same batch for the same size, and runs a training step and an evaluation step,
so that a broken entry is found here and not in a rare GPU session."""

from __future__ import annotations

from typing import Any

import pytest

torch: Any = pytest.importorskip("torch")
pytestmark = pytest.mark.usefixtures("real_torch")

from estimate_reference_models import (  # noqa: E402 (they import torch, which may be missing)
    REFERENCE_MODELS,
    ReferenceModel,
    evaluation_step,
    training_step,
)


def test_the_set_has_the_eight_kinds_each_with_three_growing_batch_sizes() -> None:
    names = [r.name for r in REFERENCE_MODELS]
    assert names == ["mlp", "resnet", "transformer_encoder", "vit", "lstm", "unet", "recommender", "gpt_amp"]
    assert all(list(r.batch_sizes) == sorted(set(r.batch_sizes)) and len(r.batch_sizes) == 3 for r in REFERENCE_MODELS)
    assert [r.name for r in REFERENCE_MODELS if r.amp] == ["gpt_amp"]


@pytest.mark.parametrize("ref", REFERENCE_MODELS, ids=lambda r: r.name)
def test_a_reference_model_makes_repeatable_batches_and_its_steps_run_on_the_cpu(ref: ReferenceModel) -> None:
    model, optimizer, loss_fn, make_batch = built = ref.build("cpu")
    first = next(model.parameters())
    inputs, target = make_batch(1, "cpu")
    assert inputs.shape[0] == target.shape[0] == 1
    assert torch.equal(inputs, make_batch(1, "cpu")[0])  # a batch depends on its size alone
    before = first.detach().clone()
    training_step(built, (inputs, target), ref.amp)
    assert not torch.equal(before, first)  # the optimizer stepped
    assert optimizer.state  # and made its state, which the estimate counts
    evaluation_step(built, (inputs, target), ref.amp)
    assert model.training
