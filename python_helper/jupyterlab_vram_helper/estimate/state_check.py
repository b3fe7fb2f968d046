"""Checks that an estimate left the user's model, optimizer, RNG and training flags as they were.

A fake trace must not touch any real tensor, so every parameter, buffer,
gradient and optimizer state tensor must keep its version counter (which
any in-place write bumps) and its data pointer, the RNG states their bytes,
and every module its training flag. The real-step fallback writes and then
puts everything back, so there the check compares values, bit for bit.
"""

from __future__ import annotations

from typing import Any


def user_tensors(torch: Any, model: Any, optimizer: Any) -> list[Any]:
    """The parameters, buffers, gradients and optimizer state tensors, in a fixed order."""
    found = list(model.parameters()) + [b for b in model.buffers() if b is not None]
    found += [p.grad for p in model.parameters() if p.grad is not None]
    if optimizer is not None:
        for group in optimizer.param_groups:
            found += [p for p in group["params"]]
            found += [p.grad for p in group["params"] if p.grad is not None]
        for state in optimizer.state.values():
            found += [v for v in state.values() if isinstance(v, torch.Tensor)]
    return found


def rng_bytes(torch: Any) -> list[bytes]:
    """The CPU generator's state, and each CUDA generator's where CUDA is initialised, as bytes."""
    # tolist() rather than numpy(), because a kernel may have torch without NumPy.
    states = [bytes(torch.get_rng_state().tolist())]
    try:
        initialised = bool(torch.cuda.is_initialized())
    except Exception:
        initialised = False
    if initialised:
        states += [bytes(s.tolist()) for s in torch.cuda.get_rng_state_all()]
    return states


class StateCheck:
    """A fingerprint of the user's training state, taken before an estimate and compared after."""

    def __init__(self, torch: Any, model: Any, optimizer: Any):
        self._torch = torch
        self._model = model
        self._optimizer = optimizer
        self._before = self._fingerprint()

    def _fingerprint(self) -> tuple:
        tensors = user_tensors(self._torch, self._model, self._optimizer)
        marks = tuple((id(t), t._version, t.data_ptr()) for t in tensors)
        flags = tuple(m.training for m in self._model.modules())
        state_keys = tuple(id(p) for p in self._optimizer.state) if self._optimizer is not None else ()
        return marks, flags, state_keys, rng_bytes(self._torch)

    def unchanged(self) -> bool:
        """Whether nothing of the fingerprint changed since it was taken."""
        return self._fingerprint() == self._before
