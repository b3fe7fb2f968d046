"""Runs one training or evaluation step of the user's model on fake tensors and counts its peak.

Fake tensors (``torch._subclasses.fake_tensor.FakeTensorMode``) carry
shapes, dtypes and devices but no data, so a step traced with them costs no
device memory and cannot change the user's model. The user's parameters and
buffers are never moved or touched: fake copies are made, the real module is
called with the copies in their place (``torch.func.functional_call``'s own
swap, held through the backward pass)
(BatchNorm's running statistics update the fake buffers), and the optimizer
is a fresh instance of the user's optimizer's class over the fake copies.

The measured step is the steady state of training: the optimizer's state
exists, the gradients were set to None, and the step runs forward, loss,
backward and the optimizer step. The optimizer step is traced
once per estimate, apart from the passes: its state is the same whatever the
batch size or the variant, and tracing it dominated each trace's cost. The
peak is broken down by role (parameters, gradients, optimizer state,
activations, inputs, temporaries) from what the ledger saw live at it.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from .batch_scaling import fake_batch, tensor_leaves
from .step_calls import forward_call, loss_value
from .storage_counter import StorageLedger, counting_mode_class

ROLES = ("parameters", "gradients", "optimizer_state", "activations", "temporaries", "inputs")


class StepSetup(NamedTuple):
    """What a trace needs: the user's objects, read only, and the device the fake tensors claim."""

    torch: Any
    model: Any
    batch: Any
    optimizer: Any
    loss: Callable[..., Any] | None
    device: str
    sample_size: int
    # Whether the step would run on a CUDA card, which decides the optimizer's implementation.
    target_cuda: bool


class StepOptions(NamedTuple):
    """How the traced step differs from a plain training step."""

    train: bool = True
    autocast: bool = False
    # Wraps the forward pass, as activation checkpointing does (variants.py).
    around_forward: Callable[[], Any] | None = None


class TracedPeak(NamedTuple):
    """A traced step's peaks in bytes, during the passes and during the optimizer step, and the roles at the peak."""

    breakdown: dict[str, int]
    # The batch's own bytes, live through the whole step.
    input_bytes: int
    # The peak during the forward and backward passes (the optimizer's state included).
    passes: int
    # The peak during the optimizer step (the batch included); 0 without one.
    step: int = 0
    # The passes' peak had the gradients of an earlier micro-batch been live
    # from their start (gradient accumulation), replayed from the same trace.
    accumulating: int = 0

    @property
    def peak(self) -> int:
        """The step's peak: the higher of its two phases'."""
        return max(self.passes, self.step)

    def accumulating_step(self) -> TracedPeak:
        """The same step as a micro-batch of gradient accumulation."""
        return self._replace(passes=self.accumulating)


class OptimizerPeak(NamedTuple):
    """The optimizer step's figures, the batch left out: its state's bytes, its peak and the peak's roles."""

    state_bytes: int
    peak: int
    breakdown: dict[str, int]


# The figures of a step without an optimizer.
NO_OPTIMIZER = OptimizerPeak(0, 0, dict.fromkeys(ROLES, 0))


class StepFailed(Exception):
    """The traced step raised: the phase it was in, and the exception as ``__cause__``."""

    def __init__(self, phase: str, error: BaseException):
        super().__init__(f"{phase}: {error}")
        self.phase = phase
        self.error = error


@contextlib.contextmanager
def _fake_mode(setup: StepSetup, ledger: StorageLedger, train: bool) -> Iterator[None]:
    """Fake tensors counted by ``ledger``, with the model's training flags set; a failure becomes StepFailed."""
    torch = setup.torch
    fake_tensor = importlib.import_module("torch._subclasses.fake_tensor")
    try:
        with training_flags(setup.model, train):
            # Real tensors the step reads (a plain tensor attribute, a loss's
            # weight, a tensor learning rate) are allowed in and read as fake;
            # a write into one is refused by the counting mode.
            counting = counting_mode_class(torch)(ledger, fake_tensor.FakeTensor)
            with fake_tensor.FakeTensorMode(allow_non_fake_inputs=True), counting:
                yield
    except Exception as exc:
        phase = ledger.phase if train or ledger.phase not in ("forward", "loss") else "eval"
        raise StepFailed(phase, exc) from exc


def trace_step(setup: StepSetup, size: int, options: StepOptions, notes: list[str]) -> TracedPeak:
    """Trace the forward and backward passes (or the evaluation step) at batch size ``size``.

    The optimizer is left out: its state is the same whatever the batch and
    the variant, so it is traced once (:func:`trace_optimizer`) and added by
    :func:`whole_step`.
    """
    ledger = StorageLedger(setup.torch.device(setup.device).type)
    with _fake_mode(setup, ledger, options.train):
        return _passes(setup, size, options, ledger, notes)


def _passes(setup: StepSetup, size: int, options: StepOptions, ledger: StorageLedger, notes: list[str]) -> TracedPeak:
    torch = setup.torch
    fakes = fake_parameters(torch, setup.model, None, setup.device)
    buffers = {name: torch.empty(b.shape, dtype=b.dtype, device=setup.device) for name, b in _buffers(setup.model)}
    batch = fake_batch(torch, setup.batch, setup.sample_size, size, setup.device)
    roles = {
        "parameters": ledger.track_all([*fakes.values(), *buffers.values()]),
        "inputs": ledger.track_all(tensor_leaves(batch, torch.Tensor)),
    }
    input_bytes = ledger.live_bytes(roles["inputs"])
    states = {name: fakes[id(p)] for name, p in setup.model.named_parameters()}
    states.update(buffers)
    ledger.restart_peak()
    ledger.phase = "forward"
    grad_mode = contextlib.nullcontext() if options.train else torch.no_grad()
    # The fake parameters and buffers stand in for the real ones through the
    # whole step, backward included, because activation checkpointing runs
    # the forward pass again during the backward pass.
    with grad_mode, _swapped(torch, setup.model, states):
        call = forward_call(batch, torch.Tensor)
        with _autocast(torch, setup.device, options.autocast), _around(options.around_forward):
            output = setup.model(*call.args, **call.kwargs)
        roles["activations"] = ledger.live_serials("forward")
        ledger.phase = "loss"
        with _autocast(torch, setup.device, options.autocast):
            loss = loss_value(torch, output, call.target, setup.loss, notes)
        if options.train:
            ledger.phase = "backward"
            loss.backward()
    del output, loss, call
    roles["gradients"] = ledger.track_all(p.grad for p in fakes.values() if p.grad is not None)
    accumulating = with_gradients_kept(ledger.current, ledger.events, roles["gradients"])
    return TracedPeak(breakdown(ledger.at_peak(), roles), input_bytes, ledger.peak, 0, accumulating)


def trace_optimizer(setup: StepSetup) -> OptimizerPeak:
    """Trace the optimizer step once, with the gradients live, and count the state it keeps.

    The step runs on a fresh optimizer, so it makes its state as it goes, as
    a first real step does: PyTorch's optimizers make every state tensor
    before they update any parameter, so the first step's peak is the steady
    state's, and a separate first step to make the state would double the
    cost for nothing.
    """
    if setup.optimizer is None:
        return NO_OPTIMIZER
    torch = setup.torch
    ledger = StorageLedger(torch.device(setup.device).type)
    with _fake_mode(setup, ledger, train=True):
        fakes = fake_parameters(torch, setup.model, setup.optimizer, setup.device)
        buffers = [torch.empty(b.shape, dtype=b.dtype, device=setup.device) for _, b in _buffers(setup.model)]
        ledger.phase = "optimizer"
        optimizer = fake_optimizer(setup, fakes)
        for p in fakes.values():
            if p.requires_grad:
                p.grad = torch.zeros_like(p)
        roles = {
            "parameters": ledger.track_all([*fakes.values(), *buffers]),
            "gradients": ledger.track_all(p.grad for p in fakes.values() if p.grad is not None),
        }
        ledger.restart_peak()
        optimizer.step()
        roles["optimizer_state"] = ledger.track_all(_state_tensors(optimizer, torch.Tensor))
        state_bytes = ledger.live_bytes(roles["optimizer_state"])
        return OptimizerPeak(state_bytes, ledger.peak, breakdown(ledger.at_peak(), roles))


def whole_step(passes: TracedPeak, optimizer: OptimizerPeak) -> TracedPeak:
    """The training step: forward and backward with the optimizer's state live, then the step with the batch live."""
    during_passes = passes.passes + optimizer.state_bytes
    during_step = optimizer.peak + passes.input_bytes
    if during_passes >= during_step:
        roles = dict(passes.breakdown)
        roles["optimizer_state"] += optimizer.state_bytes
    else:
        roles = dict(optimizer.breakdown)
        roles["inputs"] += passes.input_bytes
    accumulating = passes.accumulating + optimizer.state_bytes
    return TracedPeak(roles, passes.input_bytes, during_passes, during_step, accumulating)


def with_gradients_kept(end: int, events: list[tuple[int, int]], gradients: set[int]) -> int:
    """The step's peak replayed as if every gradient made during it had been live from its start.

    That is a micro-batch of gradient accumulation: the gradients of the
    earlier micro-batches are live while it runs, and its own are added into
    them rather than allocated. The replay starts from what was live before
    the step (what is live at its end less what the events added).
    """
    current = end - sum(delta for _, delta in events)
    pending = sum(delta for serial, delta in events if serial in gradients and delta > 0)
    peak = current + pending
    for serial, delta in events:
        current += delta
        if serial in gradients and delta > 0:
            pending -= delta
        peak = max(peak, current + pending)
    return peak


def breakdown(at_peak: dict[int, int], roles: dict[str, set[int]]) -> dict[str, int]:
    """The bytes live at the peak by role; what no role claims is a temporary."""
    totals = dict.fromkeys(ROLES, 0)
    order = ("parameters", "inputs", "gradients", "optimizer_state", "activations")
    for serial, nbytes in at_peak.items():
        role = next((r for r in order if serial in roles.get(r, ())), "temporaries")
        totals[role] += nbytes
    return totals


def fake_parameters(torch: Any, model: Any, optimizer: Any, device: str) -> dict[int, Any]:
    """A fake parameter for each of the model's and the optimizer's parameters, by the real one's id."""
    real = [p for _, p in model.named_parameters()]
    if optimizer is not None:
        real += [p for group in optimizer.param_groups for p in group["params"]]
    fakes: dict[int, Any] = {}
    for p in real:
        if id(p) not in fakes:
            empty = torch.empty(p.shape, dtype=p.dtype, device=device)
            fakes[id(p)] = torch.nn.Parameter(empty, requires_grad=p.requires_grad)
    return fakes


def _buffers(model: Any) -> Iterator[tuple[str, Any]]:
    return ((name, b) for name, b in model.named_buffers() if b is not None)


def fake_optimizer(setup: StepSetup, fakes: dict[int, Any]) -> Any:
    """A fresh optimizer of the user's optimizer's class, with its groups' options, over the fake parameters."""
    optimizer = setup.optimizer
    if optimizer is None:
        return None
    groups = []
    for group in optimizer.param_groups:
        options = {key: value for key, value in group.items() if key != "params"}
        # PyTorch picks its foreach implementation on CUDA when neither foreach
        # nor fused was chosen, and the for-loop on the CPU; the fake step
        # does what the card would, even where it is traced on the CPU.
        if setup.target_cuda and options.get("foreach", False) is None and not options.get("fused"):
            options["foreach"] = True
        groups.append({"params": [fakes[id(p)] for p in group["params"]], **options})
    try:
        return type(optimizer)(groups, **dict(optimizer.defaults))
    except TypeError:
        return type(optimizer)(groups)


def _state_tensors(optimizer: Any, tensor_type: type) -> list[Any]:
    if optimizer is None:
        return []
    found = []
    for state in optimizer.state.values():
        found += [v for v in state.values() if isinstance(v, tensor_type)]
    return found


@contextlib.contextmanager
def training_flags(model: Any, training: bool) -> Iterator[None]:
    """Set every module's ``training`` flag for the trace, and put each back exactly afterwards."""
    saved = [(module, module.training) for module in model.modules()]
    try:
        for module, _ in saved:
            module.training = training
        yield
    finally:
        for module, flag in saved:
            module.training = flag


def _swapped(torch: Any, model: Any, states: dict[str, Any]) -> Any:
    """The context in which ``model``'s parameters and buffers are the fake ``states`` (what functional_call uses)."""
    stateless = importlib.import_module("torch.nn.utils.stateless")
    return stateless._reparametrize_module(model, states, tie_weights=True, strict=False)


def _autocast(torch: Any, device: str, enabled: bool) -> Any:
    if not enabled:
        return contextlib.nullcontext()
    return torch.autocast(device_type=torch.device(device).type, dtype=torch.bfloat16)


def _around(around: Callable[[], Any] | None) -> Any:
    return around() if around is not None else contextlib.nullcontext()
