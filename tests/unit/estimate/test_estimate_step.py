"""The estimate on real CPU PyTorch: a hand-computed breakdown, state left as it was, refusals with
their reason, the real-step fallback with consent, batch scaling, the evaluation step and the variants."""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest
import torch
import torch.nn as nn

from jupyterlab_vram_helper.estimate.batch_scaling import fake_batch, sample_batch_size
from jupyterlab_vram_helper.estimate.step_tracing import StepOptions, StepSetup, trace_optimizer, trace_step, whole_step
from jupyterlab_vram_helper.estimate.storage_counter import rounded
from jupyterlab_vram_helper.estimate.training_step import estimate_training_step as estimate_typed

pytestmark = pytest.mark.usefixtures("real_torch")


def estimate_training_step(*args: Any, **kwargs: Any) -> Any:
    """The entry point, its result read as plain JSON-like data."""
    return estimate_typed(*args, **kwargs)


def linear_stack() -> tuple[nn.Module, torch.optim.Optimizer, tuple[torch.Tensor, torch.Tensor]]:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 10))
    return model, torch.optim.Adam(model.parameters()), (torch.randn(32, 512), torch.randint(0, 10, (32,)))


def test_the_linear_stack_with_adam_breaks_down_as_computed_by_hand() -> None:
    model, opt, batch = linear_stack()
    setup = StepSetup(torch, model, batch, opt, nn.CrossEntropyLoss(), "cpu", 32, False)
    traced = whole_step(trace_step(setup, 32, StepOptions(), []), trace_optimizer(setup))
    params = sum(rounded(n * 4) for n in (512 * 1024, 1024, 1024 * 10, 10))
    assert params == 2142720
    steps = 4 * rounded(4)  # one float32 step counter per parameter
    assert traced.breakdown["parameters"] == params
    assert traced.breakdown["gradients"] == params
    assert traced.breakdown["optimizer_state"] == 2 * params + steps
    assert traced.breakdown["inputs"] == rounded(32 * 512 * 4) + rounded(32 * 8)
    assert traced.peak == sum(traced.breakdown.values())


def test_state_is_unchanged_bit_for_bit_after_an_estimate() -> None:
    model = nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.Dropout(0.5), nn.Linear(16, 2))
    opt = torch.optim.Adam(model.parameters())
    x = torch.randn(4, 8)
    model(x).sum().backward()
    opt.step()
    model.eval()
    model[1].train()
    before = clones(model, opt)
    result = estimate_training_step(model, x, opt, batch_sizes=[2, 4, 8])
    assert result["status"] == "estimated" and result["state_unchanged"] is True
    assert_same(before, clones(model, opt))


def clones(model: nn.Module, opt: torch.optim.Optimizer) -> dict:
    state = [v.clone() for s in opt.state.values() for v in s.values() if isinstance(v, torch.Tensor)]
    return {
        "params": [p.detach().clone() for p in model.parameters()],
        "buffers": [b.clone() for b in model.buffers()],
        "grads": [p.grad.clone() for p in model.parameters() if p.grad is not None],
        "state": state,
        "rng": torch.get_rng_state().clone(),
        "flags": [m.training for m in model.modules()],
    }


def assert_same(a: dict, b: dict) -> None:
    assert a["flags"] == b["flags"]
    for key in ("params", "buffers", "grads", "state"):
        assert len(a[key]) == len(b[key]) and all(torch.equal(x, y) for x, y in zip(a[key], b[key], strict=True))
    assert torch.equal(a["rng"], b["rng"])


class Nonzero(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.lin(x)
        return y[torch.nonzero(y > 0, as_tuple=True)]


class Branchy(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(256, 256)
        self.norm = nn.BatchNorm1d(256)
        self.drop = nn.Dropout(0.3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.sum() > 0:
            return self.drop(self.norm(self.lin(x)))
        return self.drop(self.norm(self.lin(-x)))


def test_an_op_without_fake_support_is_refused_with_the_op_and_the_line() -> None:
    result = estimate_training_step(Nonzero(), torch.randn(3, 4))
    assert result["status"] == "refused" and result["rows"] == []
    failure = result["failure"]
    assert failure["op"] == "aten.nonzero.default" and failure["phase"] == "forward"
    assert failure["filename"] == __file__ and "torch.nonzero" in failure["line"]


def test_data_dependent_control_flow_is_refused_with_its_line() -> None:
    result = estimate_training_step(Branchy(), torch.randn(3, 256))
    assert result["status"] == "refused"
    assert result["failure"]["line"] == "if x.sum() > 0:" and result["failure"]["filename"] == __file__


class Counting(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.calls = torch.zeros(1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        return self.lin(x)


def test_a_write_into_a_real_tensor_is_refused_and_nothing_is_written() -> None:
    model = Counting()
    result = estimate_training_step(model, torch.randn(3, 4))
    assert result["status"] == "refused" and result["failure"]["op"] == "aten.add_.Tensor"
    assert result["failure"]["line"] == "self.calls += 1"
    assert model.calls.item() == 0 and model.calls._version == 0


def test_with_consent_real_steps_are_measured_extrapolated_and_the_state_put_back() -> None:
    model = Branchy()
    opt = torch.optim.Adam(model.parameters())
    x = torch.randn(6, 256)
    model(x).sum().backward()
    opt.step()
    model.eval()
    before = clones(model, opt)
    result = estimate_training_step(model, x, opt, real_step=True, batch_sizes=[2, 4, 64])
    assert (result["status"], result["method"]) == ("measured", "real_steps")
    assert result["failure"] is not None and result["state_unchanged"] is True
    assert [r["traced"] for r in result["rows"]] == [True, True, False]
    assert any("extrapolated" in n for n in result["notes"])
    assert result["rows"][2]["train_peak_bytes"] >= result["rows"][1]["train_peak_bytes"] > 0
    assert_same(before, clones(model, opt))
    assert not model.training


def test_no_reference_to_the_users_objects_outlives_the_estimate() -> None:
    import gc
    import weakref

    model, opt, batch = linear_stack()
    refs: list[Any] = [weakref.ref(model), weakref.ref(opt), weakref.ref(batch[0])]
    estimate_training_step(model, batch, opt, nn.CrossEntropyLoss(), batch_sizes=[4, 8])
    estimate_training_step(Branchy(), torch.randn(3, 256), real_step=True)
    del model, opt, batch
    gc.collect()
    assert [r() for r in refs] == [None, None, None]


def test_a_batch_is_scaled_leaf_by_leaf() -> None:
    batch = {"x": torch.zeros(4, 3), "mask": torch.zeros(7), "pair": (torch.zeros(4, 2, dtype=torch.long), 5)}
    assert sample_batch_size(batch, torch.Tensor) == 4
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        scaled = fake_batch(torch, batch, 4, 9, "cpu")
    assert scaled["x"].shape == (9, 3) and scaled["mask"].shape == (7,)
    assert scaled["pair"][0].shape == (9, 2) and scaled["pair"][0].dtype == torch.long and scaled["pair"][1] == 5


def test_the_evaluation_step_is_lower_than_the_training_step() -> None:
    model, opt, batch = linear_stack()
    result = estimate_training_step(model, batch, opt, nn.CrossEntropyLoss(), batch_sizes=[32, 256])
    for row in result["rows"]:
        assert row["eval_peak_bytes"] < row["train_peak_bytes"]


def deep_stack(blocks: int = 4) -> nn.Module:
    return nn.Sequential(*[nn.Sequential(nn.Linear(256, 256), nn.GELU()) for _ in range(blocks)])


def test_amp_and_checkpointing_need_less_per_sample_than_the_plain_step() -> None:
    model = deep_stack()
    result = estimate_training_step(model, torch.randn(64, 256), torch.optim.SGD(model.parameters()))
    found = {v["variant"]: v for v in result["variants"]}
    assert list(found) == ["plain", "amp_bf16", "checkpointing", "grad_accumulation"]
    assert found["amp_bf16"]["per_sample_bytes"] < found["plain"]["per_sample_bytes"]
    assert found["checkpointing"]["per_sample_bytes"] < found["plain"]["per_sample_bytes"]
    assert found["checkpointing"]["reason"] == "checkpointed the 4 blocks of the model"
    assert found["grad_accumulation"]["fixed_bytes"] >= found["plain"]["fixed_bytes"]


def test_variants_that_do_not_apply_say_why() -> None:
    model = nn.Linear(8, 2).to(torch.bfloat16)
    result = estimate_training_step(model, torch.randn(4, 8, dtype=torch.bfloat16))
    found = {v["variant"]: v for v in result["variants"]}
    assert found["amp_bf16"]["applicable"] is False and "half precision" in found["amp_bf16"]["reason"]
    assert found["checkpointing"]["applicable"] is False and "ModuleList" in found["checkpointing"]["reason"]


def test_bad_objects_are_refused_with_a_clear_reason() -> None:
    assert "torch.nn.Module" in estimate_training_step(object(), torch.zeros(2))["notes"][0]
    result = estimate_training_step(nn.Linear(2, 2), [1, 2])
    assert result["status"] == "refused" and "no tensor" in result["notes"][0]


def test_a_kernel_without_torch_imported_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "torch")
    result = estimate_training_step(nn.Linear(2, 2), torch.zeros(2, 2))
    assert result["status"] == "refused" and "PyTorch is not imported in this kernel" in result["notes"][0]


class WithOwnLoss(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(100, 32)
        self.head = nn.Linear(32, 100)

    def forward(self, input_ids: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor) -> dict[str, Any]:
        logits = self.head(self.emb(input_ids) * mask)
        return {"logits": logits, "loss": nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten())}


def test_a_dict_batch_is_passed_as_keywords_and_the_outputs_own_loss_is_used() -> None:
    batch = {"input_ids": torch.zeros(4, 16, dtype=torch.long), "labels": torch.zeros(4, 16, dtype=torch.long)}
    batch["mask"] = torch.ones(16, 1)
    result = estimate_training_step(WithOwnLoss(), batch, batch_sizes=[4, 64])
    assert result["status"] == "estimated" and not any("sum of the output" in n for n in result["notes"])
    low, high = result["rows"]
    assert high["breakdown"]["inputs"] > low["breakdown"]["inputs"] > 0


def test_the_helpers_own_frames_are_skipped_as_the_bootstrap_names_them() -> None:
    """In a kernel the helper's modules are named ``<jupyterlab-vram>/...`` (kernel_bootstrap.py): a failure
    raised under them still names the user's line, never the helper's."""
    from jupyterlab_vram_helper.estimate import failure_frames

    helper_file = "<jupyterlab-vram>/jupyterlab_vram_helper/estimate/storage_counter.py"
    helper = compile("def dispatch(f, x):\n    return f(x)\n", helper_file, "exec")
    user = compile("def forward(x):\n    return dispatch(lambda t: t.boom(), x)\n", "<ipython-input-7>", "exec")
    namespace: dict[str, Any] = {}
    exec(helper, namespace)
    exec(user, namespace)
    try:
        namespace["forward"](object())
    except AttributeError as exc:
        error = exc
    dirs = (failure_frames._code_dir(helper_file, 2) + os.sep,)
    assert dirs == ("<jupyterlab-vram>/jupyterlab_vram_helper/",)
    filename, lineno, _ = failure_frames.user_frame(error, dirs)
    assert (filename, lineno) == ("<ipython-input-7>", 2)
