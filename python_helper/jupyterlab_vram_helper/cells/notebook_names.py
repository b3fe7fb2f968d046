"""Answers the ``notebook_names`` request, which asks which of the user's names a code snippet should use.

The frontend's "insert memory-saving code" fills the placeholders of a snippet
(``{{model}}``, ``{{optimizer}}``, ...) with names the kernel really has, and
warns when a snippet needs a fresh runtime (CUDA or TensorFlow already
initialised). This module answers both questions.

Like the rest of the helper it never imports torch or TensorFlow. The classes
come from ``sys.modules``, which is enough because if the user never imported
torch, no object can be a module or an optimizer, and TensorFlow's state is
read from its eager context without creating it. The result holds names and
booleans only, and no user object is referenced once :func:`notebook_names`
returns.

It also offers the names that may hold a sample batch, for "Will it fit?":
tensors, and tuples, lists and dicts of tensors, the containers first,
because a batch is most often an ``(inputs, targets)`` pair.

The cost is bounded: at most :data:`MAX_NAMESPACE_NAMES` namespace entries are
looked at, at most :data:`MAX_MODELS_SIZED` models are sized, and a model's
parameters are counted up to :data:`MAX_PARAMETER_TENSORS` tensors.
"""

from __future__ import annotations

import itertools
import sys
import warnings
from collections.abc import Mapping
from typing import Any, TypedDict

from ..sampling.readers import tensorflow as tf_reader
from ..sampling.readers import torch_cuda
from ..sampling.torch_reads import current, module_members

MAX_NAMES_PER_KIND = 20
MAX_NAMESPACE_NAMES = 10_000
MAX_PARAMETER_TENSORS = 10_000
# Models beyond this many are neither sized nor listed.
MAX_MODELS_SIZED = 200

# Order matters: a loss (``_Loss``) is also an ``nn.Module``, and is reported
# as a loss only, never as a model.
KINDS: tuple[str, ...] = ("loss", "model", "optimizer", "dataloader", "scaler")
RESULT_KINDS: tuple[str, ...] = ("model", "optimizer", "dataloader", "loss", "scaler")
# A tuple or list is a candidate batch when it has at most this many items,
# and a dict when one of its first this many values is a tensor.
MAX_BATCH_ITEMS = 8

# This maps each kind to the (module in sys.modules, class name) pairs where
# its class may be. A later entry is a fallback for torch versions that put the
# class elsewhere.
_CLASS_LOCATIONS: dict[str, tuple[tuple[str, str], ...]] = {
    "loss": (("torch.nn.modules.loss", "_Loss"),),
    "model": (("torch.nn.modules.module", "Module"),),
    "optimizer": (("torch.optim.optimizer", "Optimizer"),),
    "dataloader": (("torch.utils.data.dataloader", "DataLoader"),),
    # Torch 2.3 and later have torch.amp.GradScaler, which
    # torch.cuda.amp.GradScaler subclasses. Older torch had only
    # torch.cuda.amp.GradScaler.
    "scaler": (("torch.amp.grad_scaler", "GradScaler"), ("torch.cuda.amp.grad_scaler", "GradScaler")),
}


class RuntimeState(TypedDict):
    """What the kernel has imported and initialised, as the ``notebook_names`` reply reports it."""

    torch_imported: bool
    cuda_initialized: bool
    tensorflow_imported: bool
    tensorflow_initialized: bool


class NotebookNames(TypedDict):
    """The ``notebook_names`` reply: the user's names that hold each kind of object a snippet refers to."""

    model: list[str]
    optimizer: list[str]
    dataloader: list[str]
    loss: list[str]
    scaler: list[str]
    batch: list[str]
    runtime: RuntimeState


def _loaded_classes(modules: Mapping[str, Any]) -> list[tuple[str, tuple[type, ...]]]:
    """The (kind, classes) pairs for the kinds whose classes the user has loaded, in KINDS order."""
    found: list[tuple[str, tuple[type, ...]]] = []
    if modules.get("torch") is None:
        # Torch is not imported, or was removed, so no object can be one of
        # these.
        return found
    for kind in KINDS:
        classes = []
        for module_name, class_name in _CLASS_LOCATIONS[kind]:
            module = modules.get(module_name)
            if module is None:
                continue
            try:
                cls = getattr(module, class_name, None)
            except Exception:
                cls = None
            if isinstance(cls, type) and cls not in classes:
                classes.append(cls)
        if classes:
            found.append((kind, tuple(classes)))
    return found


def _kind_of(obj: Any, classes: list[tuple[str, tuple[type, ...]]]) -> str | None:
    # type(obj) is used rather than isinstance(), so that a proxy's __class__
    # is never consulted.
    t = type(obj)
    for kind, bases in classes:
        try:
            if issubclass(t, bases):
                return kind
        except TypeError:
            return None
    return None


def _parameter_count(model: Any) -> int:
    """The number of parameter elements in the first MAX_PARAMETER_TENSORS
    tensors, or -1 if they cannot be read.

    The parameters are read from the modules' dicts and counted by TensorBase's
    ``numel`` with torch function handling off (torch_reads.py), so that an
    overridden ``parameters()`` or a tensor subclass's ``__torch_function__``
    never runs.
    """
    try:
        params = module_members(model, "_parameters", MAX_PARAMETER_TENSORS)
        torch = current()
        if torch is None:
            # torch._C is gone from sys.modules, so there is nothing to read
            # the parameters with.
            return 0 if not params else -1
        total = 0
        with torch.off():
            for p in params:
                if torch.is_tensor(p):
                    total += int(torch.call(p, "numel"))
        return total
    except Exception:
        return -1


def runtime_state(modules: Mapping[str, Any] | None = None) -> RuntimeState:
    """Report which frameworks are imported and initialised, reading ``sys.modules`` so as to import nothing."""
    modules = sys.modules if modules is None else modules
    torch = modules.get("torch")
    tf_imported = modules.get("tensorflow") is not None
    return {
        "torch_imported": torch is not None,
        "cuda_initialized": torch is not None and torch_cuda.cuda_initialized(torch),
        "tensorflow_imported": tf_imported,
        # This is exactly the condition under which TF's set_memory_growth,
        # set_visible_devices and set_logical_device_configuration raise
        # "... cannot be modified after being initialized".
        "tensorflow_initialized": tf_imported and tf_reader.gpus_initialized(),
    }


def notebook_names(
    user_ns: Mapping[str, Any] | None,
    hidden_ns: Mapping[str, Any] | None = None,
    modules: Mapping[str, Any] | None = None,
) -> NotebookNames:
    """The reply ``result`` of a ``notebook_names`` request (docs/protocol.md)."""
    modules = sys.modules if modules is None else modules
    hidden_ns = hidden_ns or {}
    found: dict[str, list[str]] = {kind: [] for kind in RESULT_KINDS}
    sizes: dict[str, int] = {}
    classes = _loaded_classes(modules)
    if classes and user_ns:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _collect(user_ns, hidden_ns, classes, found, sizes)
    # The largest model comes first, and equal sizes keep the namespace's
    # (definition) order, since the sort is stable.
    found["model"].sort(key=lambda name: -sizes[name])
    result: dict[str, Any] = {kind: names[:MAX_NAMES_PER_KIND] for kind, names in found.items()}
    result["batch"] = batch_names(user_ns, hidden_ns) if classes and user_ns else []
    result["runtime"] = runtime_state(modules)
    return result  # type: ignore[return-value]


def _collect(
    user_ns: Mapping[str, Any],
    hidden_ns: Mapping[str, Any],
    classes: list[tuple[str, tuple[type, ...]]],
    found: dict[str, list[str]],
    sizes: dict[str, int],
) -> None:
    try:
        # Names that start with an underscore, among them IPython's own _i<N>
        # and _<N>, are left out before the cut, not after. IPython's grow by
        # one a cell, and in a long session they would take every place and
        # hide the names bound late.
        items = list(
            itertools.islice(
                (
                    (name, obj)
                    for name, obj in user_ns.items()
                    if isinstance(name, str) and name and not name.startswith("_")
                ),
                MAX_NAMESPACE_NAMES,
            )
        )
    except Exception:
        return
    obj: Any = None
    try:
        for name, obj in items:
            if hidden_ns.get(name, _MISSING) is obj:
                # IPython put this name there, not the user.
                continue
            kind = _kind_of(obj, classes)
            if kind is None:
                continue
            names = found[kind]
            if kind == "model":
                # Models are sized before the cut, because the largest may come
                # late, and the list is cut to MAX_NAMES_PER_KIND after sorting.
                if len(names) < MAX_MODELS_SIZED:
                    sizes[name] = _parameter_count(obj)
                    names.append(name)
            elif len(names) < MAX_NAMES_PER_KIND:
                names.append(name)
    finally:
        obj = None
        items.clear()


def _batch_shape(obj: Any, tensors: Any) -> str | None:
    """ "container" or "tensor" where ``obj`` may be a sample batch, else None.

    Only exact tuples, lists and dicts are opened, by their own C methods, so
    that no user ``__getitem__`` or ``__iter__`` runs.
    """
    t = type(obj)
    if tensors.is_tensor(obj):
        return "tensor"
    if t is tuple or t is list:
        items = obj[:MAX_BATCH_ITEMS] if 0 < len(obj) <= MAX_BATCH_ITEMS else ()
        return "container" if items and tensors.is_tensor(items[0]) else None
    if t is dict:
        values = itertools.islice(dict.values(obj), MAX_BATCH_ITEMS)
        return "container" if any(tensors.is_tensor(v) for v in values) else None
    return None


def batch_names(user_ns: Mapping[str, Any], hidden_ns: Mapping[str, Any]) -> list[str]:
    """The names that may hold a sample batch: containers of tensors first, then tensors, each in namespace order."""
    tensors = current()
    if tensors is None:
        return []
    containers: list[str] = []
    singles: list[str] = []
    obj: Any = None
    try:
        for name, obj in itertools.islice(user_ns.items(), MAX_NAMESPACE_NAMES):
            if not isinstance(name, str) or not name or name.startswith("_") or hidden_ns.get(name, _MISSING) is obj:
                continue
            shape = _batch_shape(obj, tensors)
            if shape == "container":
                containers.append(name)
            elif shape == "tensor":
                singles.append(name)
            if len(containers) >= MAX_NAMES_PER_KIND:
                break
    except Exception:
        pass
    finally:
        obj = None
    return (containers + singles)[:MAX_NAMES_PER_KIND]


_MISSING = object()
