"""Counts memory per storage, the key that every sizing pass shares.

A storage is keyed by ``(device, data pointer)``. A view, ``b = a``,
``torch.from_numpy(arr)`` and a parameter shared by two modules all land on one
key, so their bytes are counted once. Nothing here imports torch.

A tensor is read through TensorBase's C code with torch function handling off
(see torch_reads.py), so that a subclass's ``__torch_function__`` or an
overridden ``untyped_storage`` never runs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..sampling.torch_reads import TorchReads, current

# A storage's key is its device and its data pointer, or a stand-in for the pointer.
StorageKey = tuple[str, Any]
# Maps a storage's key to its size in bytes.
Storages = dict[StorageKey, int]


def tensor_storage(t: Any, storages: Storages) -> None:
    """Add the storage under tensor ``t`` to ``storages``; for anything but a tensor, add nothing."""
    torch = current()
    if torch is None or not torch.is_tensor(t):
        # This may be, for example, what a pack hook returned, and asking it would run its code.
        return
    with torch.off():
        add_tensor_storage(torch, t, storages)


def add_tensor_storage(torch: TorchReads, t: Any, storages: Storages) -> None:
    """Do what :func:`tensor_storage` does for a tensor ``t``, inside ``torch.off()``."""
    try:
        # This is a torch.UntypedStorage, which is torch's class rather than the user's.
        storage = torch.call(t, "untyped_storage")
        nbytes = int(storage.nbytes())
        device = str(storage.device)
        ptr: Any = int(storage.data_ptr())
        if ptr == 0:
            ptr = ("id", id(t))
    except Exception:  # Sparse, nested and other exotic tensors have no plain storage.
        parts = _sparse_parts(torch, t)
        if parts is not None:
            for part in parts:  # A sparse tensor stores its indices and values.
                add_tensor_storage(torch, part, storages)
            return
        try:
            if str(torch.get(t, "layout")) != "torch.strided":
                # For this layout, element count times element size is not what it stores.
                return
            nbytes = int(torch.call(t, "element_size")) * int(torch.call(t, "nelement"))
            device = str(torch.get(t, "device"))
        except Exception:
            return
        ptr = ("id", id(t))
    if nbytes <= 0 or device == "meta":
        return
    storages[(device, ptr)] = max(nbytes, storages.get((device, ptr), 0))


def _sparse_parts(torch: TorchReads, t: Any) -> tuple[Any, ...] | None:
    """Return the dense tensors that a sparse tensor keeps, or None when it is not sparse or cannot be read."""
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
