"""Reads tensors and modules without running the user's code.

A ``torch.Tensor`` subclass with ``__torch_function__``, or an active
``TorchFunctionMode``, runs Python code on every ``t.untyped_storage()``,
``t.requires_grad`` or ``t.shape``, and an ``nn.Module`` subclass may override
``parameters()`` or ``named_modules()``. So tensors are read through
``torch._C.TensorBase``'s own C descriptors, with torch function handling
disabled while they run, and a module's tensors are read straight from the
``_parameters``, ``_buffers`` and ``_modules`` dicts of its instance dict.

Nothing here imports torch. ``torch._C`` is taken from ``sys.modules``, which
is enough, because a tensor exists only where torch was imported.
"""

from __future__ import annotations

import contextlib
import sys
import types
from typing import Any

from .safe_reads import c_attribute, container_items, instance_dict

# At most this many modules are looked at per model, so a model of more than
# 10,000 layers is sized only in part.
MAX_SUBMODULES = 10_000


class TorchReads:
    """What one ``torch._C`` offers: TensorBase, the context that turns torch
    function handling off, and TensorBase's descriptors by name, each looked up
    once."""

    __slots__ = ("module", "base", "disable", "descriptors")

    def __init__(self, module: Any) -> None:
        self.module = module
        self.base: type | None = None
        # The class was called _TensorBase before torch 2.1.
        for name in ("TensorBase", "_TensorBase"):
            base = getattr(module, name, None)
            if isinstance(base, type):
                self.base = base
                break
        # DisableTorchFunction turns off subclasses and modes. An older torch has
        # only DisableTorchFunctionSubclass, which turns off subclasses alone.
        self.disable = getattr(module, "DisableTorchFunction", None) or getattr(
            module, "DisableTorchFunctionSubclass", None
        )
        self.descriptors: dict[str, Any] = {}

    def off(self) -> contextlib.AbstractContextManager[Any]:
        """A context in which no ``__torch_function__`` (of a subclass or of a mode) runs."""
        return self.disable() if self.disable is not None else contextlib.nullcontext()

    def is_tensor(self, obj: Any) -> bool:
        """Whether ``type(obj)``, never ``obj.__class__``, is a tensor class."""
        return self.base is not None and issubclass(type(obj), self.base)

    def get(self, t: Any, name: str) -> Any:
        """``t.<name>`` as TensorBase's C getter reads it, which refuses a non-tensor.

        Call it inside :meth:`off`, or a subclass's ``__torch_function__`` runs.
        """
        descriptor = self._descriptor(name)
        if type(descriptor) is not types.GetSetDescriptorType:
            raise AttributeError(name)
        return descriptor.__get__(t, type(t))

    def call(self, t: Any, name: str, *args: Any) -> Any:
        """``t.<name>(*args)`` as TensorBase's C method runs it, which refuses a
        non-tensor. Call it inside :meth:`off`, for the same reason as :meth:`get`."""
        method = self._descriptor(name)
        if type(method) is not types.MethodDescriptorType:
            raise AttributeError(name)
        return method(t, *args)

    def _descriptor(self, name: str) -> Any:
        found = self.descriptors.get(name)
        if found is None:
            if self.base is None:
                raise AttributeError(name)
            found = self.descriptors[name] = c_attribute(self.base, name, self.base)
        return found


_torch: TorchReads | None = None


def current() -> TorchReads | None:
    """The reads of the ``torch._C`` in ``sys.modules``, or None when torch is not imported."""
    global _torch
    module = sys.modules.get("torch._C")
    if module is None:
        return None
    if _torch is None or _torch.module is not module:
        _torch = TorchReads(module)
    return _torch


def module_members(module: Any, attribute: str, limit: int) -> list[Any]:
    """The tensors that ``module.parameters()`` (``attribute`` "_parameters") or
    ``module.buffers()`` ("_buffers") would give, each once and in the same
    order, at most ``limit`` of them.

    They are read from the instance dicts of the module and its submodules, so
    that no override of ``parameters()``, ``buffers()`` or ``named_modules()``
    runs. A module whose instance dict only its own code reads gives none.
    """
    out: list[Any] = []
    seen: set = set()
    for attrs in _module_dicts(module):
        members = attrs.get(attribute)
        if members is None or not issubclass(type(members), dict):
            continue
        for tensor in container_items(members, limit):
            if tensor is None or id(tensor) in seen:
                # A layer with bias=False holds None, and two layers may share
                # a weight.
                continue
            seen.add(id(tensor))
            out.append(tensor)
            if len(out) >= limit:
                return out
    return out


def _module_dicts(module: Any) -> list[dict]:
    """The instance dicts of ``module`` and its submodules, each module once, in
    the order of ``named_modules()``: depth first, with parents first."""
    out: list[dict] = []
    seen: set = set()
    todo: list[Any] = [module]
    while todo and len(out) < MAX_SUBMODULES:
        current = todo.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        attrs = instance_dict(current)
        if attrs is None:
            continue
        out.append(attrs)
        children = attrs.get("_modules")
        if children is not None and issubclass(type(children), dict):
            todo.extend(reversed(container_items(children, MAX_SUBMODULES)))
    return out
