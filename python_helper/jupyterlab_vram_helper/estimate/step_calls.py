"""Calls the model and the loss with a batch, as a training loop over that batch would.

The convention follows the batch's shape: a tensor is the model's input; an
(input, target) pair gives ``model(input)`` and ``loss(output, target)``; a
dict gives ``model(**batch)``; another tuple or list gives ``model(*batch)``.
Without a named loss, the output's own ``loss`` (a tensor attribute, or a
dict entry) is the loss, as Hugging Face models return it, and otherwise the
sum of the output's floating-point tensors, which the notes say.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from .batch_scaling import tensor_leaves

NOTE_SUM_LOSS = (
    "No loss was named and the output carries none, so the loss was taken as the sum of the output; "
    "a real loss adds only its own small temporaries."
)


class ForwardCall(NamedTuple):
    """The positional and keyword arguments of the model's call, and the target kept for the loss."""

    args: tuple
    kwargs: dict[str, Any]
    target: Any


def forward_call(batch: Any, tensor_type: type) -> ForwardCall:
    """How the model is called with ``batch``, and what is left over for the loss."""
    if isinstance(batch, tensor_type):
        return ForwardCall((batch,), {}, None)
    if isinstance(batch, dict):
        return ForwardCall((), dict(batch), None)
    if isinstance(batch, (tuple, list)) and len(batch) == 2:
        return ForwardCall((batch[0],), {}, batch[1])
    if isinstance(batch, (tuple, list)):
        return ForwardCall(tuple(batch), {}, None)
    return ForwardCall((batch,), {}, None)


def loss_value(torch: Any, output: Any, target: Any, loss: Callable[..., Any] | None, notes: list[str]) -> Any:
    """The scalar that the step calls ``backward()`` on."""
    if loss is not None:
        return loss(output, target) if target is not None else loss(output)
    own = _own_loss(output, torch.Tensor)
    if own is not None:
        return own
    if NOTE_SUM_LOSS not in notes:
        notes.append(NOTE_SUM_LOSS)
    leaves = [t for t in tensor_leaves(_plain(output, torch.Tensor), torch.Tensor) if t.is_floating_point()]
    if not leaves:
        raise TypeError("the model's output has no floating-point tensor to take as the loss")
    total = leaves[0].sum()
    for leaf in leaves[1:]:
        total = total + leaf.sum()
    return total


def _own_loss(output: Any, tensor_type: type) -> Any:
    # A model output dataclass is a dict subclass in Hugging Face's library,
    # and an attribute elsewhere; either way only a tensor counts.
    found = output.get("loss") if isinstance(output, dict) else getattr(output, "loss", None)
    return found if isinstance(found, tensor_type) else None


def _plain(output: Any, tensor_type: type) -> Any:
    # An output object that is neither a tensor nor a collection (a
    # dataclass) is looked into through its attributes.
    if isinstance(output, (tensor_type, tuple, list, dict)) or not hasattr(output, "__dict__"):
        return output
    return dict(vars(output))
