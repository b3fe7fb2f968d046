"""Measures real training steps, with the user's consent, where fake tensors cannot run the model.

Only when the request says ``real_step`` (the user agreed), the step runs
for real at two small batch sizes on the model's own device, and the peak is
extrapolated along the line through the two. Everything the step writes is
put back afterwards: parameters, buffers and optimizer state are copied to
the host first and copied back in place, the gradients the user had are
reattached, state the step created is removed, the RNG states and every
module's training flag are restored.

On CUDA the peak is PyTorch's ``max_memory_allocated``, which needs a reset
of its peak statistics (the notes say so); on the CPU the same storage
ledger as the fake trace counts the real step.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from .batch_scaling import sliced_batch, tensor_leaves
from .step_calls import forward_call, loss_value
from .step_tracing import ROLES, StepSetup, TracedPeak, training_flags
from .storage_counter import StorageLedger, counting_mode_class


def model_device(torch: Any, model: Any) -> Any:
    """The device of the model's first parameter (or buffer), the CPU for a model without either."""
    for tensor in list(model.parameters()) + list(model.buffers()):
        return tensor.device
    return torch.device("cpu")


@contextlib.contextmanager
def restored(torch: Any, model: Any, optimizer: Any) -> Iterator[list[bool]]:
    """Put back, on exit, everything a real step changes; the yielded list gets True when the values match."""
    tensors = list(model.parameters()) + [b for b in model.buffers() if b is not None]
    copies = [t.detach().to("cpu", copy=True) for t in tensors]
    grads = [(p, p.grad) for p in model.parameters()]
    state = _state_copies(torch, optimizer)
    rng = torch.get_rng_state()
    cuda_rng = torch.cuda.get_rng_state_all() if _cuda_initialized(torch) else None
    verdict: list[bool] = []
    try:
        for p, _ in grads:
            p.grad = None
        yield verdict
    finally:
        with torch.no_grad():
            for tensor, copy in zip(tensors, copies, strict=True):
                tensor.copy_(copy)
            for p, grad in grads:
                p.grad = grad
            _restore_state(optimizer, state)
        torch.set_rng_state(rng)
        if cuda_rng is not None:
            torch.cuda.set_rng_state_all(cuda_rng)
        verdict.append(all(torch.equal(t.detach().cpu(), c) for t, c in zip(tensors, copies, strict=True)))


def _state_copies(torch: Any, optimizer: Any) -> dict[Any, dict[str, Any]] | None:
    if optimizer is None:
        return None
    copies: dict[Any, dict[str, Any]] = {}
    for param, state in optimizer.state.items():
        copies[param] = {
            key: (value, value.detach().to("cpu", copy=True)) if isinstance(value, torch.Tensor) else (value, None)
            for key, value in state.items()
        }
    return copies


def _restore_state(optimizer: Any, copies: dict[Any, dict[str, Any]] | None) -> None:
    if optimizer is None or copies is None:
        return
    for param in [p for p in optimizer.state if p not in copies]:
        del optimizer.state[param]
    for param, saved in copies.items():
        state = optimizer.state[param]
        for key in [k for k in state if k not in saved]:
            del state[key]
        for key, (original, copy) in saved.items():
            if copy is not None:
                original.copy_(copy)
            state[key] = original


def _cuda_initialized(torch: Any) -> bool:
    try:
        return bool(torch.cuda.is_initialized())
    except Exception:
        return False


def measure_step(setup: StepSetup, size: int, train: bool, notes: list[str]) -> TracedPeak:
    """Run one real step of batch size ``size`` and return its peak; the caller restores the state."""
    torch = setup.torch
    device = model_device(torch, setup.model)
    batch = sliced_batch(torch, setup.batch, setup.sample_size, size)
    if device.type == "cuda":
        return _measure_cuda(setup, batch, device, train, notes)
    ledger = StorageLedger(device.type)
    roles = {
        "parameters": ledger.track_all(list(setup.model.parameters()) + list(setup.model.buffers())),
        "inputs": ledger.track_all(tensor_leaves(batch, torch.Tensor)),
        "optimizer_state": ledger.track_all(_state_tensors(torch, setup.optimizer)),
    }
    ledger.restart_peak()
    with training_flags(setup.model, train), counting_mode_class(torch)(ledger):
        _run(setup, batch, train, notes, ledger)
    roles["gradients"] = ledger.track_all(p.grad for p in setup.model.parameters() if p.grad is not None)
    roles["optimizer_state"] |= ledger.track_all(_state_tensors(torch, setup.optimizer))
    roles["activations"] = set()
    totals = dict.fromkeys(ROLES, 0)
    for serial, nbytes in ledger.at_peak().items():
        role = next((r for r in ROLES if serial in roles.get(r, ())), "temporaries")
        totals[role] += nbytes
    return TracedPeak(totals, ledger.live_bytes(roles["inputs"]), ledger.peak)


def _run(setup: StepSetup, batch: Any, train: bool, notes: list[str], ledger: StorageLedger | None) -> None:
    torch = setup.torch
    with contextlib.nullcontext() if train else torch.no_grad():
        call = forward_call(batch, torch.Tensor)
        output = setup.model(*call.args, **call.kwargs)
        loss = loss_value(torch, output, call.target, setup.loss, notes)
        if train:
            loss.backward()
    del output, loss, call
    if train and setup.optimizer is not None:
        setup.optimizer.step()


def _measure_cuda(setup: StepSetup, batch: Any, device: Any, train: bool, notes: list[str]) -> TracedPeak:
    torch = setup.torch
    index = device.index if device.index is not None else 0
    own = sum(t.untyped_storage().nbytes() for t in _state_tensors(torch, setup.optimizer))
    own += sum(p.untyped_storage().nbytes() for p in setup.model.parameters())
    before = int(torch.cuda.memory_allocated(index))
    torch.cuda.reset_peak_memory_stats(index)
    note = f"The fallback reset PyTorch's peak memory statistics of cuda:{index} to measure its steps."
    if note not in notes:
        notes.append(note)
    with training_flags(setup.model, train):
        _run(setup, batch, train, notes, None)
    peak = int(torch.cuda.max_memory_allocated(index)) - before + own
    totals = dict.fromkeys(ROLES, 0)
    totals["parameters"] = sum(p.untyped_storage().nbytes() for p in setup.model.parameters())
    totals["inputs"] = sum(t.untyped_storage().nbytes() for t in tensor_leaves(batch, torch.Tensor))
    totals["temporaries"] = max(0, peak - totals["parameters"] - totals["inputs"])
    return TracedPeak(totals, totals["inputs"], peak)


def _state_tensors(torch: Any, optimizer: Any) -> list[Any]:
    if optimizer is None:
        return []
    return [v for state in optimizer.state.values() for v in state.values() if isinstance(v, torch.Tensor)]
