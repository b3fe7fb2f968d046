"""The remedies the estimate weighs against the plain step: bfloat16 autocast, checkpointing, accumulation.

Each variant is the plain training step changed in one way, traced like it
(or, for gradient accumulation, replayed from the plain step's own trace),
and fitted to the batch size like it, so that the user sees how much larger
a batch each remedy lets fit before choosing one.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:  # the message shapes, for annotations only (protocol_types.py)
    from ..protocol_types import EstimateVariant

VARIANTS = ("plain", "amp_bf16", "checkpointing", "grad_accumulation")
# A container must hold at least this many blocks for checkpointing them to be worth it.
MIN_BLOCKS = 2


class Blocks(NamedTuple):
    """The repeated blocks that activation checkpointing wraps, and where they are."""

    path: str
    modules: list[Any]


def repeated_blocks(torch: Any, model: Any) -> Blocks | None:
    """The model's largest ``nn.ModuleList`` or ``nn.Sequential`` of at least two blocks; None without one."""
    containers = (torch.nn.ModuleList, torch.nn.Sequential)
    best: Blocks | None = None
    for path, module in model.named_modules():
        if not isinstance(module, containers):
            continue
        children = list(module.children())
        if len(children) >= MIN_BLOCKS and (best is None or len(children) > len(best.modules)):
            best = Blocks(path, children)
    return best


def checkpoint_reason(blocks: Blocks) -> str:
    """What the checkpointing variant assumed, in words."""
    where = blocks.path or "the model"
    return f"checkpointed the {len(blocks.modules)} blocks of {where}"


@contextlib.contextmanager
def checkpointed(torch: Any, blocks: Blocks) -> Iterator[None]:
    """Run each block's forward under ``torch.utils.checkpoint`` while the context lasts.

    The wrapper is an instance attribute that shadows the class's forward,
    and it is taken away afterwards (an instance's own forward, where the user
    set one, is put back).
    """
    checkpoint = torch.utils.checkpoint.checkpoint
    saved = [(block, block.__dict__.get("forward", _ABSENT)) for block in blocks.modules]
    try:
        for block, _ in saved:
            # The recomputation needs no RNG state of its own on fake tensors,
            # and preserving it would read and set the user's generators.
            wrapped = functools.partial(checkpoint, block.forward, use_reentrant=False, preserve_rng_state=False)
            block.__dict__["forward"] = wrapped
        yield
    finally:
        for block, own in saved:
            if own is _ABSENT:
                block.__dict__.pop("forward", None)
            else:
                block.__dict__["forward"] = own


_ABSENT = object()


def amp_reason(torch: Any, model: Any) -> str | None:
    """Why bfloat16 autocast does not apply to ``model`` (its parameters are half precision already), or None."""
    halves = {torch.float16, torch.bfloat16}
    dtypes = {p.dtype for p in model.parameters()}
    if dtypes and dtypes <= halves:
        return "the model's parameters are in half precision already"
    return None


def variant(
    name: str,
    line: Any,
    largest: int | None,
    peak: int | None,
    reason: str | None = None,
    steps: int | None = None,
) -> EstimateVariant:
    """A variant's entry of the result, fitted by ``line`` (a peak_fit.Line)."""
    return {
        "variant": name,
        "applicable": True,
        "reason": reason,
        "fixed_bytes": max(0, round(line.fixed)),
        "per_sample_bytes": max(0, round(line.per_sample)),
        "largest_batch_size": largest,
        "peak_at_largest_bytes": peak,
        "accumulation_steps": steps,
    }


def not_applicable(name: str, reason: str) -> EstimateVariant:
    """A variant that could not be estimated for this model, and why."""
    return {
        "variant": name,
        "applicable": False,
        "reason": reason,
        "fixed_bytes": None,
        "per_sample_bytes": None,
        "largest_batch_size": None,
        "peak_at_largest_bytes": None,
        "accumulation_steps": None,
    }


def accumulation_steps(sample_size: int, largest: int | None) -> int | None:
    """The micro-batches of ``largest`` samples each that make up the sample's batch size."""
    if largest is None:
        return None
    return max(1, -(-sample_size // largest))


def around_forward(torch: Any, blocks: Blocks) -> Callable[[], Any]:
    """The context that the checkpointing variant's trace runs its forward pass in."""
    return lambda: checkpointed(torch, blocks)
