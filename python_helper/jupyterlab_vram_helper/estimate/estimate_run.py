"""Runs one estimate from the user's objects to the result: traces, fits, the card, the variants.

This is where the parts meet: the sample batch's size and the batch sizes
to predict, the plain training step and the evaluation step traced at two
sizes each and fitted, the card's budget and the largest batch size that
fits it (traced to confirm), the variants, and the check that the user's
state is as it was. When fake tensors cannot run the model, the answer is
the refusal with its reason, or, with the user's consent, real steps.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any, Protocol

from . import fallback_steps, peak_fit, variants
from .batch_scaling import BatchError, sample_batch_size
from .card_budget import card_budget, cuda_initialized, planned_card, visible_devices
from .failure_frames import describe_failure
from .state_check import StateCheck
from .step_tracing import (
    OptimizerPeak,
    StepFailed,
    StepOptions,
    StepSetup,
    TracedPeak,
    trace_optimizer,
    trace_step,
    whole_step,
)

if TYPE_CHECKING:  # the message shapes, for annotations only (protocol_types.py)
    from ..protocol_types import EstimateCard, EstimateMemoryResult, EstimateRow, EstimateVariant


class Progress(Protocol):
    """Told what runs now, how many steps are done of how many, and, once the plain step is fitted, its figures."""

    def __call__(self, stage: str, done: int, total: int, partial: EstimateMemoryResult | None = None) -> None: ...


NOTE_CPU_TRACE = (
    "CUDA is not initialised in this kernel, so the step was traced on fake CPU tensors (no CUDA context was "
    "created); the card's convolution and attention kernels may use other temporaries."
)
NOTE_EVAL = "The evaluation peak counts the parameters, the batch and the forward pass, not the optimizer's state."
NOT_TORCH = "PyTorch is not imported in this kernel: import torch and define the model first"


class Refused(Exception):
    """The estimate cannot be made, for the reason given (a bad object, PyTorch missing)."""


class EstimateRun:
    """One estimate: the setup, the notes gathered, the traces made and the progress told."""

    def __init__(self, setup: StepSetup, progress: Progress | None, total: int):
        self.setup = setup
        self.notes: list[str] = []
        self._progress = progress
        self.done = 0
        self.total = total
        self._optimizer_peak: OptimizerPeak | None = None
        # The traces made, by batch size and options, so that a size traced
        # for one purpose (the plain step's largest batch size) is not traced
        # again for another (gradient accumulation's, replayed from it).
        self._traced: dict[tuple[int, StepOptions], TracedPeak] = {}

    def tell(self, stage: str) -> None:
        """Tell the progress callback what runs now."""
        if self._progress is not None:
            self.total = max(self.total, self.done + 1)
            self._progress(stage, self.done, self.total)

    def share(self, partial: EstimateMemoryResult) -> None:
        """Hand the figures known so far to the progress callback, which sends them before the remedies are traced."""
        if self._progress is not None:
            self._progress("tracing the remedies", self.done, max(self.total, self.done + 1), partial)

    def finish(self) -> None:
        """Tell the progress callback that every step is done."""
        if self._progress is not None:
            self.total = max(1, self.done)
            self._progress("done", self.total, self.total)

    def trace(self, size: int, options: StepOptions, what: str = "training step") -> TracedPeak:
        """Trace one step, telling the progress before and counting it after (with the optimizer step when training).

        A size traced before with the same options is not traced again.
        """
        key = (size, options)
        if key not in self._traced:
            self._traced[key] = self._trace(size, options, what)
        return self._traced[key]

    def _trace(self, size: int, options: StepOptions, what: str) -> TracedPeak:
        optimizer = self.optimizer_step() if options.train else None
        self.tell(f"tracing the {what} at batch size {size}")
        try:
            passes = trace_step(self.setup, size, options, self.notes)
        finally:
            self.done += 1
        return whole_step(passes, optimizer) if optimizer is not None else passes

    def optimizer_step(self) -> OptimizerPeak:
        """The optimizer step's figures, traced at the first need."""
        if self._optimizer_peak is None:
            self.tell("tracing the optimizer step")
            try:
                self._optimizer_peak = trace_optimizer(self.setup)
            finally:
                self.done += 1
        return self._optimizer_peak


def default_sizes(sample: int) -> list[int]:
    """The batch sizes predicted when none were asked for: from a quarter to eight times the sample's."""
    return sorted({max(1, sample * k // 4) for k in (1, 2, 4, 8, 16, 32)})


def run_estimate(
    model: Any,
    batch: Any,
    optimizer: Any = None,
    loss: Any = None,
    *,
    batch_sizes: list[int] | None = None,
    margin: float = 0.1,
    device: int | None = None,
    real_step: bool = False,
    names: dict[str, str | None] | None = None,
    progress: Progress | None = None,
    gpus: list[Any] | None = None,
    card_bytes: int | None = None,
) -> EstimateMemoryResult:
    """The estimate_memory result for ``model`` on the sample ``batch``, with ``optimizer`` and ``loss``.

    The arguments are the request's (docs/protocol.md, ``estimate_memory``):
    ``card_bytes`` plans for a card of that size in place of the kernel's own;
    ``progress`` is told how far it is, and handed the answer before the
    remedies are traced; ``gpus`` is the sampler's reading of the devices
    (None without a sampler: PyTorch's own figures, once CUDA is initialised).
    """
    started = time.perf_counter()
    names = dict(names or {"model": None, "optimizer": None, "loss": None, "batch": None})
    try:
        torch = _torch()
        sample = _validate(torch, model, batch, optimizer, loss)
    except Refused as exc:
        return refused(names, [str(exc)], None, started)
    check = StateCheck(torch, model, optimizer)
    result = _estimate(
        torch,
        model,
        batch,
        optimizer,
        loss,
        sample,
        batch_sizes,
        _CardRequest(margin, device, card_bytes, gpus),
        real_step,
        names,
        progress,
    )
    result["state_unchanged"] = check.unchanged() if result["method"] != "real_steps" else result["state_unchanged"]
    result["elapsed_ms"] = round((time.perf_counter() - started) * 1000, 1)
    return result


def _torch() -> Any:
    torch = sys.modules.get("torch")
    if torch is None or not hasattr(torch, "nn"):
        raise Refused(NOT_TORCH)
    return torch


def _validate(torch: Any, model: Any, batch: Any, optimizer: Any, loss: Any) -> int:
    """Check each object's kind and return the sample's batch size."""
    if not isinstance(model, torch.nn.Module):
        raise Refused(f"the model must be a torch.nn.Module, got {type(model).__name__}")
    if optimizer is not None and not isinstance(optimizer, torch.optim.Optimizer):
        raise Refused(f"the optimizer must be a torch.optim.Optimizer, got {type(optimizer).__name__}")
    if loss is not None and not callable(loss):
        raise Refused(f"the loss must be callable, got {type(loss).__name__}")
    try:
        return sample_batch_size(batch, torch.Tensor)
    except BatchError as exc:
        raise Refused(f"the batch must be a tensor or a tuple, list or dict of tensors: {exc}") from None


def refused(names: dict[str, Any], notes: list[str], sample: int | None, started: float) -> EstimateMemoryResult:
    """A result that predicts nothing; ``notes`` say why."""
    return {
        "status": "refused",
        "method": "none",
        "traced_on": None,
        "names": names,
        "sample_batch_size": sample,
        "rows": [],
        "variants": [],
        "card": None,
        "largest_batch_size": None,
        "failure": None,
        "notes": notes,
        "state_unchanged": True,
        "elapsed_ms": round((time.perf_counter() - started) * 1000, 1),
    }


class _CardRequest:
    """What the request says of the card: the margin, the device, a planned card's size, and the sampler's GPUs."""

    def __init__(self, margin: float, device: int | None, card_bytes: int | None, gpus: list[Any] | None):
        self.margin = margin
        self.device = device
        self.card_bytes = card_bytes
        self.gpus = gpus

    def budget(self, torch: Any, index: int, model_bytes: int, notes: list[str]) -> EstimateCard | None:
        """The planned card, else the kernel's card ``index``, else None."""
        if self.card_bytes is not None:
            return planned_card(self.card_bytes, self.margin)
        return card_budget(torch, index, self.margin, model_bytes, self.gpus, notes)


def _device_index(torch: Any, model: Any, device: int | None) -> int:
    if device is not None:
        return device
    for tensor in model.parameters():
        if tensor.device.type == "cuda":
            return int(tensor.device.index or 0)
    return 0


def _estimate(
    torch: Any,
    model: Any,
    batch: Any,
    optimizer: Any,
    loss: Any,
    sample: int,
    batch_sizes: list[int] | None,
    card_request: _CardRequest,
    real_step: bool,
    names: dict[str, Any],
    progress: Progress | None,
) -> EstimateMemoryResult:
    started = time.perf_counter()
    index = _device_index(torch, model, card_request.device)
    on_cuda = cuda_initialized(torch)
    target_cuda = on_cuda or card_request.card_bytes is not None or visible_devices(torch, card_request.gpus) > index
    trace_device = f"cuda:{index}" if on_cuda else "cpu"
    setup = StepSetup(torch, model, batch, optimizer, loss, trace_device, sample, target_cuda)
    wanted = sorted(set(batch_sizes or default_sizes(sample)))
    run = EstimateRun(setup, progress, total=10)
    if not on_cuda:
        run.notes.append(NOTE_CPU_TRACE)
    sizes = peak_fit.two_sizes(wanted)
    try:
        plain = {size: run.trace(size, StepOptions()) for size in sizes}
    except StepFailed as failed:
        failure = describe_failure(torch, failed.phase, failed.error)
        if not real_step:
            result = refused(names, run.notes, sample, started)
            result["failure"] = failure
            result["notes"].append(
                "Fake tensors could not run the step; with the user's consent, one real step at two small batch "
                "sizes can be measured instead."
            )
            return result
        return _measured(run, failure, wanted, card_request, index, names, started)
    card = card_request.budget(torch, index, _model_bytes(torch, model, optimizer, index), run.notes)
    plain_model = peak_fit.fit_peaks(sizes, plain[sizes[0]], plain[sizes[1]])

    def result_of(
        found: dict[str, EstimateVariant], confirmed: dict[int, TracedPeak], evals: dict[int, TracedPeak] | None
    ) -> EstimateMemoryResult:
        rows = _rows(wanted, sizes, {**plain, **confirmed}, evals, card)
        return _result(on_cuda, names, sample, rows, found, card, run)

    found, confirmed = _plain_variants(run, sizes, plain, plain_model, card)
    # The answer to "will it fit?" is known now: it goes out before the
    # evaluation step and the remedies, which take as long again.
    run.share(result_of(_ordered(found), confirmed, None))
    evals = {size: run.trace(size, StepOptions(train=False), "evaluation step") for size in sizes}
    run.notes.append(NOTE_EVAL)
    found.update(_remedy_variants(run, sizes, card))
    estimated = result_of(_ordered(found), confirmed, evals)
    run.finish()
    return estimated


def _ordered(found: dict[str, EstimateVariant]) -> dict[str, EstimateVariant]:
    """The variants in the protocol's order: plain, amp_bf16, checkpointing, grad_accumulation."""
    return {name: found[name] for name in variants.VARIANTS if name in found}


def _result(
    on_cuda: bool,
    names: dict[str, Any],
    sample: int,
    rows: list[EstimateRow],
    found: dict[str, EstimateVariant],
    card: EstimateCard | None,
    run: EstimateRun,
) -> EstimateMemoryResult:
    return {
        "status": "estimated",
        "method": "fake_tensors",
        "traced_on": "cuda" if on_cuda else "cpu",
        "names": names,
        "sample_batch_size": sample,
        "rows": rows,
        "variants": list(found.values()),
        "card": card,
        "largest_batch_size": found["plain"]["largest_batch_size"],
        "failure": None,
        "notes": list(run.notes),
        "state_unchanged": True,
        "elapsed_ms": 0.0,
    }


def _model_bytes(torch: Any, model: Any, optimizer: Any, index: int) -> int:
    """What the model's parameters, buffers, gradients and optimizer state hold on cuda:``index`` now."""
    from .state_check import user_tensors

    seen: dict[int, int] = {}
    for tensor in user_tensors(torch, model, optimizer):
        if tensor.device.type == "cuda" and (tensor.device.index or 0) == index:
            storage = tensor.untyped_storage()
            seen[storage.data_ptr()] = storage.nbytes()
    return sum(seen.values())


def _budget(card: EstimateCard | None) -> int | None:
    return card["free_for_step_bytes"] if card is not None else None


def _plain_variants(
    run: EstimateRun, sizes: tuple[int, int], plain: dict[int, TracedPeak], model_fit: peak_fit.PeakModel, card: Any
) -> tuple[dict[str, EstimateVariant], dict[int, TracedPeak]]:
    """The plain step's entry and gradient accumulation's, replayed from the plain traces, and the plain step's
    confirmation traces (rows show them as traced)."""
    budget = _budget(card)
    found: dict[str, EstimateVariant] = {}
    size, peak, confirmed = _largest(run, model_fit, budget, StepOptions(), _known(plain))
    found["plain"] = variants.variant("plain", _reported(model_fit, sizes, size), size, peak)
    low, high = (plain[s].accumulating_step() for s in sizes)
    accumulating = peak_fit.fit_peaks(sizes, low, high)
    # Every plain trace gives gradient accumulation's peak at its size too.
    known = {s: t.accumulating_step().peak for s, t in {**plain, **confirmed}.items()}
    size, peak, _ = _largest(run, accumulating, budget, StepOptions(), known, True)
    steps = variants.accumulation_steps(run.setup.sample_size, size)
    found["grad_accumulation"] = variants.variant(
        "grad_accumulation",
        _reported(accumulating, sizes, size),
        size,
        peak,
        "each micro-batch runs with the gradients of the earlier ones live",
        steps,
    )
    return found, confirmed


def _remedy_variants(run: EstimateRun, sizes: tuple[int, int], card: Any) -> dict[str, EstimateVariant]:
    """The remedies that need traces of their own: bfloat16 autocast and activation checkpointing."""
    torch, model = run.setup.torch, run.setup.model
    budget = _budget(card)
    found: dict[str, EstimateVariant] = {}
    reason = variants.amp_reason(torch, model)
    found["amp_bf16"] = (
        variants.not_applicable("amp_bf16", reason)
        if reason
        else _traced_variant(run, "amp_bf16", sizes, StepOptions(autocast=True), budget, None)
    )
    blocks = variants.repeated_blocks(torch, model)
    if blocks is None:
        found["checkpointing"] = variants.not_applicable(
            "checkpointing", "the model has no nn.ModuleList or nn.Sequential of two or more blocks to checkpoint"
        )
    else:
        options = StepOptions(around_forward=variants.around_forward(torch, blocks))
        reason = variants.checkpoint_reason(blocks)
        found["checkpointing"] = _traced_variant(run, "checkpointing", sizes, options, budget, reason)
    return found


def _reported(model_fit: peak_fit.PeakModel, sizes: tuple[int, int], largest: int | None) -> peak_fit.Line:
    """The line a variant reports: the one that makes the peak at its largest batch size, else at the larger traced."""
    return model_fit.dominant(max(sizes[1], largest or 0))


def _known(traced: dict[int, TracedPeak]) -> dict[int, int]:
    return {size: t.peak for size, t in traced.items()}


def _largest(
    run: EstimateRun,
    model_fit: peak_fit.PeakModel,
    budget: int | None,
    options: StepOptions,
    known: dict[int, int],
    accumulate: bool = False,
) -> tuple[int | None, int | None, dict[int, TracedPeak]]:
    if budget is None:
        return None, None, {}

    def trace(size: int) -> TracedPeak:
        return _peak_of(run, size, options, accumulate)

    return peak_fit.confirmed_largest(model_fit, budget, trace, known)


def _peak_of(run: EstimateRun, size: int, options: StepOptions, accumulate: bool) -> TracedPeak:
    traced = run.trace(size, options, "largest batch size")
    # With gradients kept, the step's peak is the replayed one.
    return traced.accumulating_step() if accumulate else traced


def _traced_variant(
    run: EstimateRun, name: str, sizes: tuple[int, int], options: StepOptions, budget: int | None, reason: str | None
) -> EstimateVariant:
    try:
        low, high = (run.trace(size, options, f"{name} step") for size in sizes)
        model_fit = peak_fit.fit_peaks(sizes, low, high)
        size, peak, _ = _largest(run, model_fit, budget, options, {sizes[0]: low.peak, sizes[1]: high.peak})
    except StepFailed as failed:
        return variants.not_applicable(name, f"fake tensors could not run it: {failed.error}")
    return variants.variant(name, _reported(model_fit, sizes, size), size, peak, reason)


def _rows(
    wanted: list[int],
    sizes: tuple[int, int],
    train: dict[int, TracedPeak],
    evals: dict[int, TracedPeak] | None,
    card: EstimateCard | None,
) -> list[EstimateRow]:
    """One row per wanted batch size: traced figures where there is a trace, else read off the lines.

    Without ``evals`` (the figures sent before the evaluation step is traced)
    the evaluation peaks are null.
    """
    low, high = sizes
    train_line = peak_fit.fit_peaks(sizes, train[low], train[high])
    eval_line = peak_fit.fit_peaks(sizes, evals[low], evals[high]) if evals is not None else None
    roles = peak_fit.fit_breakdown(sizes, train[low].breakdown, train[high].breakdown)
    budget = _budget(card)
    rows: list[EstimateRow] = []
    for size in wanted:
        traced = train.get(size)
        peak = traced.peak if traced else train_line.at(size)
        rows.append(
            {
                "batch_size": size,
                "train_peak_bytes": peak,
                "eval_peak_bytes": _eval_peak(size, evals, eval_line),
                "breakdown": dict(traced.breakdown) if traced else {r: roles[r].at(size) for r in roles},  # type: ignore[typeddict-item]
                "traced": traced is not None,
                "fits": None if budget is None else peak <= budget,
            }
        )
    return rows


def _eval_peak(size: int, evals: dict[int, TracedPeak] | None, line: peak_fit.PeakModel | None) -> int | None:
    if evals is None or line is None:
        return None
    return evals[size].peak if size in evals else line.at(size)


def _measured(
    run: EstimateRun,
    failure: Any,
    wanted: list[int],
    card_request: _CardRequest,
    index: int,
    names: dict[str, Any],
    started: float,
) -> EstimateMemoryResult:
    """The fallback's result: real steps at two small sizes, extrapolated along their line."""
    setup = run.setup
    torch, model, optimizer = setup.torch, setup.model, setup.optimizer
    # Two and four samples where the sample has them: batch norm in training
    # mode refuses a batch of one.
    small = sorted({min(2, setup.sample_size), min(4, setup.sample_size)})
    sizes = (small[0], small[-1])
    train: dict[int, TracedPeak] = {}
    evals: dict[int, TracedPeak] = {}
    same = True
    try:
        for size in small:
            for is_train, into in ((True, train), (False, evals)):
                run.tell(f"measuring a real {'training' if is_train else 'evaluation'} step at batch size {size}")
                with fallback_steps.restored(torch, model, optimizer) as verdict:
                    into[size] = fallback_steps.measure_step(setup, size, is_train, run.notes)
                same = same and all(verdict)
                run.done += 1
    except Exception as exc:
        result = refused(names, run.notes, setup.sample_size, started)
        result["failure"] = describe_failure(torch, "real step", exc)
        result["notes"].append("The real step failed too; everything it changed was put back.")
        return result
    device = fallback_steps.model_device(torch, model)
    card = card_request.budget(torch, index, _model_bytes(torch, model, optimizer, index), run.notes)
    model_fit = peak_fit.fit_peaks(sizes, train[sizes[0]], train[sizes[1]])
    budget = _budget(card)
    largest = peak_fit.largest_fitting(model_fit, budget) if budget is not None else None
    peak = model_fit.at(largest) if largest is not None else None
    line = _reported(model_fit, sizes, largest)
    run.notes.append(
        f"Fake tensors could not run the step, so with the user's consent real steps were measured on {device.type} "
        f"at batch size{'s' if len(small) > 1 else ''} {' and '.join(map(str, small))}, and the other sizes were "
        "extrapolated along a line through them; the model's state was put back and compared value by value."
    )
    result = refused(names, run.notes, setup.sample_size, started)
    plain = [variants.variant("plain", line, largest, peak)]
    others = [variants.not_applicable(name, "only the plain step was measured") for name in variants.VARIANTS[1:]]
    result["status"], result["method"], result["traced_on"] = "measured", "real_steps", device.type
    result["rows"] = _rows(wanted, sizes, train, evals, card)
    result["variants"] = plain + others
    result["card"], result["largest_batch_size"] = card, largest
    result["failure"], result["state_unchanged"] = failure, same
    run.finish()
    return result
