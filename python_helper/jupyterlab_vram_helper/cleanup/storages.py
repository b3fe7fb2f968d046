"""Counts memory per storage, the key that every sizing pass shares.

A storage is keyed by ``(device, data pointer)``: a view, ``b = a``,
``torch.from_numpy(arr)`` and a parameter shared by two modules all land on one
key, so bytes are counted once. Nothing here imports torch.

A tensor is read through TensorBase's C code with torch function handling
off (torch_reads.py): a subclass's ``__torch_function__`` or an overridden
``untyped_storage`` never runs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..sampling.torch_reads import TorchReads, current

StorageKey = tuple[str, Any]  # (device, data pointer or a stand-in)
Storages = dict[StorageKey, int]  # key -> bytes


def tensor_storage(t: Any, storages: Storages) -> None:
    """Add the storage under tensor ``t`` to ``storages`` (anything else: nothing)."""
    torch = current()
    if torch is None or not torch.is_tensor(t):
        return  # what a pack hook returned, say: asking it would run its code
    with torch.off():
        add_tensor_storage(torch, t, storages)


def add_tensor_storage(torch: TorchReads, t: Any, storages: Storages) -> None:
    """:func:`tensor_storage` for a tensor ``t``, inside ``torch.off()``."""
    try:
        storage = torch.call(t, "untyped_storage")  # a torch.UntypedStorage: torch's class, not the user's
        nbytes = int(storage.nbytes())
        device = str(storage.device)
        ptr: Any = int(storage.data_ptr())
        if ptr == 0:
            ptr = ("id", id(t))
    except Exception:  # sparse, nested or exotic tensors
        parts = _sparse_parts(torch, t)
        if parts is not None:
            for part in parts:  # what a sparse tensor stores: its indices and values
                add_tensor_storage(torch, part, storages)
            return
        try:
            if str(torch.get(t, "layout")) != "torch.strided":
                return  # a layout of which element count times size is not what it stores
            nbytes = int(torch.call(t, "element_size")) * int(torch.call(t, "nelement"))
            device = str(torch.get(t, "device"))
        except Exception:
            return
        ptr = ("id", id(t))
    if nbytes <= 0 or device == "meta":
        return
    storages[(device, ptr)] = max(nbytes, storages.get((device, ptr), 0))


def _sparse_parts(torch: TorchReads, t: Any) -> tuple[Any, ...] | None:
    """The dense tensors a sparse tensor keeps (None: not a sparse layout, or unreadable)."""
    try:
        layout = str(torch.get(t, "layout"))
        if layout == "torch.sparse_coo":
            return (torch.call(t, "_indices"), torch.call(t, "_values"))
        if layout in ("torch.sparse_csr", "torch.sparse_bsr"):
            return (torch.call(t, "crow_indices"), torch.call(t, "col_indices"), torch.call(t, "values"))
        if layout in ("torch.sparse_csc", "torch.sparse_bsc"):
            return (torch.call(t, "ccol_indices"), torch.call(t, "row_indices"), torch.call(t, "values"))
    except Exception:
        pass
    return None


def bytes_by_device(storages: Storages, keys: Iterable[StorageKey] | None = None) -> dict[str, int]:
    """Add up the bytes of the given storages (all of them by default) per device."""
    out: dict[str, int] = {}
    for key in storages if keys is None else keys:
        out[key[0]] = out.get(key[0], 0) + storages[key]
    return out
