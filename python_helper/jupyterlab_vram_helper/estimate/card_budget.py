"""Reads what the card leaves for the training step: its memory less what others take and the margin.

Everything here reads; nothing creates a CUDA context. PyTorch's figures are
read only once ``torch.cuda.is_initialized()`` is true, always with an
explicit device index (see sampling/readers/torch_cuda.py). Before that, the
card's total comes from NVML, as the sampler read it, and the kernel's own
CUDA context is an estimate, which the card says.

The step's own figures count the model's parameters, gradients and
optimizer state, so the part of them already on the card is taken out of
"other allocated" rather than counted twice.

Where PyTorch's per-process memory fraction caps this kernel's allocator
(``torch.cuda.set_per_process_memory_fraction``), the cap is the card this
kernel has: an allocation past it fails with an out-of-memory error whatever
the card has free. A planned card (the request's ``card_bytes``) stands in
for the kernel's own: it has no allocations yet, and its context is the
estimate.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the message shapes, for annotations only (protocol_types.py)
    from ..protocol_types import EstimateCard

# What a CUDA context with cuBLAS and cuDNN loaded takes, where it cannot be measured yet.
ESTIMATED_CONTEXT_BYTES = 512 * 1024 * 1024


def cuda_initialized(torch: Any) -> bool:
    """Whether PyTorch has initialised CUDA in this process (any failure to ask is a no)."""
    try:
        return bool(torch.cuda.is_initialized())
    except Exception:
        return False


def has_context(torch: Any, index: int) -> bool:
    """Whether device ``index`` has a CUDA context already; asking creates none."""
    check = getattr(getattr(torch, "_C", None), "_cuda_hasPrimaryContext", None)
    try:
        return bool(check(index)) if check is not None else False
    except Exception:
        return False


def visible_devices(torch: Any, gpus: list[Any] | None) -> int:
    """How many CUDA devices this kernel sees; ``device_count`` creates no context."""
    if gpus:
        return len(gpus)
    try:
        return int(torch.cuda.device_count())
    except Exception:
        return 0


def planned_card(total: int, margin: float) -> EstimateCard:
    """A card of ``total`` bytes that the user plans for: nothing allocated on it yet, its context estimated."""
    return _card(None, None, total, 0, ESTIMATED_CONTEXT_BYTES, False, margin)


def _card(
    index: int | None, name: str | None, total: int, other: int, overhead: int, measured: bool, margin: float
) -> EstimateCard:
    """The card's entry: what is left for the step once the others, the overhead and the margin are taken."""
    margin_bytes = round(margin * total)
    return {
        "index": index,
        "planned": index is None,
        "name": name,
        "total_bytes": total,
        "other_allocated_bytes": other,
        "overhead_bytes": overhead,
        "overhead_measured": measured,
        "margin_bytes": margin_bytes,
        "free_for_step_bytes": max(0, total - other - overhead - margin_bytes),
    }


def card_budget(
    torch: Any, index: int, margin: float, model_bytes: int, gpus: list[Any] | None, notes: list[str]
) -> EstimateCard | None:
    """The card ``index`` and what it leaves for the step; None when no such CUDA device is visible.

    ``model_bytes`` is what the model's parameters, gradients and optimizer
    state hold on that card now; ``gpus`` is the sampler's reading of the
    devices (its ``gpus`` list), or None where there is no sampler. A
    per-process memory fraction that caps the kernel is said in ``notes``.
    """
    if index >= visible_devices(torch, gpus):
        return None
    nvml = _nvml_of(gpus, index)
    if cuda_initialized(torch) and has_context(torch, index):
        total, name, allocated, overhead = _measured(torch, index, nvml)
        total, overhead = _capped(torch, index, total, allocated, overhead, notes)
        measured = True
    else:
        total, name = _nvml_total(nvml, gpus, index)
        allocated, overhead, measured = 0, ESTIMATED_CONTEXT_BYTES + _used(nvml), False
    if total is None:
        return None
    return _card(index, name, total, max(0, allocated - model_bytes), overhead, measured, margin)


def _measured(torch: Any, index: int, nvml: dict[str, Any] | None) -> tuple[int | None, str | None, int, int]:
    """Total, name, PyTorch's allocated bytes and the overhead, with CUDA initialised."""
    allocated = int(torch.cuda.memory_allocated(index))
    reserved = int(torch.cuda.memory_reserved(index))
    props = torch.cuda.get_device_properties(index)
    total = int(props.total_memory)
    if nvml is not None and nvml.get("process_used_bytes") is not None:
        own = int(nvml["process_used_bytes"])
        others = max(0, int(nvml.get("used_bytes") or own) - own)
        # The context and library workspaces, the cached blocks, and the other processes.
        overhead = max(0, own - reserved) + (reserved - allocated) + others
    else:
        # The driver's free figure counts every process's use of the card,
        # this one's context included; what is not PyTorch's allocation is overhead.
        free, total = (int(v) for v in torch.cuda.mem_get_info(index))
        overhead = max(0, total - free - allocated)
    return total, str(props.name), allocated, overhead


def _capped(
    torch: Any, index: int, total: int | None, allocated: int, overhead: int, notes: list[str]
) -> tuple[int | None, int]:
    """The total and overhead under PyTorch's per-process memory fraction, where one below 1 is set.

    The fraction caps what the allocator reserves, not the CUDA context: under
    the cap, what stands between the step and it is PyTorch's own cached blocks.
    """
    read = getattr(torch.cuda, "get_per_process_memory_fraction", None)
    try:
        fraction = float(read(index)) if read is not None else 1.0
    except Exception:
        fraction = 1.0
    if total is None or not 0 < fraction < 1:
        return total, overhead
    cap = int(fraction * total)
    reserved = int(torch.cuda.memory_reserved(index))
    notes.append(
        f"PyTorch's per-process memory fraction ({fraction:g}) caps this kernel at {cap / 2**30:.1f} GiB "
        f"of the card's {total / 2**30:.1f} GiB: the step is fitted to the cap."
    )
    return cap, max(0, reserved - allocated)


def _nvml_of(gpus: list[Any] | None, index: int) -> dict[str, Any] | None:
    for gpu in gpus or ():
        if gpu.get("index") == index:
            return gpu.get("nvml")
    return None


def _nvml_total(nvml: dict[str, Any] | None, gpus: Iterable[Any] | None, index: int) -> tuple[int | None, str | None]:
    name = next((g.get("name") for g in gpus or () if g.get("index") == index), None)
    if nvml is not None and nvml.get("total_bytes"):
        return int(nvml["total_bytes"]), name
    total = next((g.get("total_bytes") for g in gpus or () if g.get("index") == index), None)
    return (int(total) if total else None), name


def _used(nvml: dict[str, Any] | None) -> int:
    # Before this kernel has a context, what the card has in use is other processes'.
    return int(nvml.get("used_bytes") or 0) if nvml is not None else 0
