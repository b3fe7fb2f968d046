"""Describes a holder of memory for the Holders listing.

A tensor is described by its dtype, shape and device, an array by its dtype and
shape, a module by its parameters, and a container by what it holds. Objects
are read as holders.py reads them, through C code and never the user's code.
"""

from __future__ import annotations

import sys
from typing import Any

from ..sampling.safe_reads import c_get, c_len, type_name
from ..sampling.torch_reads import current
from .holders import Found, _bytes_base, _cls


def tensor_summary(t: Any) -> str:
    """Describe a tensor by its dtype, shape and device, or by its type name when those cannot be read."""
    torch = current()
    try:
        if torch is not None:
            with torch.off():
                dtype = str(torch.get(t, "dtype")).replace("torch.", "")
                shape = ", ".join(str(int(d)) for d in torch.get(t, "shape"))
                return f"{dtype}[{shape}] {torch.get(t, 'device')}"
    except Exception:
        pass
    return type_name(type(t))


def array_summary(a: Any) -> str:
    """Describe a NumPy array by its dtype and shape, saying when it is a view."""
    ndarray = _cls(sys.modules.get("numpy"), "ndarray")
    try:
        shape = ", ".join(str(int(d)) for d in c_get(a, "shape", ndarray))
        view = " (view)" if c_get(a, "base", ndarray) is not None else ""
        return f"{c_get(a, 'dtype', ndarray)}[{shape}] cpu{view}"
    except Exception:
        return type_name(type(a))


def bytes_summary(b: Any) -> str:
    """Describe a bytes-like object by its type and length."""
    try:
        return f"{type_name(type(b))}[{c_len(b, _bytes_base(type(b))):,}]"
    except Exception:
        return type_name(type(b))


def plural(n: int, word: str, words: str | None = None) -> str:
    """Write a count with its noun, singular or plural as the count calls for."""
    return f"{n} {word}" if n == 1 else f"{n} {words or word + 's'}"


def module_summary(m: Any, found: Found) -> str:
    """Describe a module by its type and the parameters, buffers and gradients it holds."""
    counts = f"{plural(found.params, 'param')}, {plural(found.buffers, 'buffer')}, {plural(found.grads, 'grad')}"
    return f"{type_name(type(m))}: {counts}"


def optimizer_summary(opt: Any, found: Found) -> str:
    """Describe an optimizer by its type and the state tensors it holds."""
    return f"{type_name(type(opt))}: {plural(found.state_tensors, 'state tensor')}"


def contents_summary(found: Found) -> str:
    """Describe what a container holds, counted by kind."""
    parts = []
    if found.tensors:
        parts.append(plural(found.tensors, "tensor"))
    if found.arrays:
        parts.append(plural(found.arrays, "array"))
    if found.byte_objects:
        parts.append(plural(found.byte_objects, "bytes object"))
    if found.modules:
        parts.append(plural(found.modules, "module"))
    if found.optimizers:
        parts.append(plural(found.optimizers, "optimizer"))
    return ", ".join(parts) if parts else "nothing that holds memory"
