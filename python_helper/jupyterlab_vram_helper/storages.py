"""Memory counted per storage: the key every sizing pass shares.

A storage is keyed by ``(device, data pointer)``: a view, ``b = a``,
``torch.from_numpy(arr)`` and a parameter shared by two modules all land on one
key, so bytes are counted once. Nothing here imports torch.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, Optional, Tuple

StorageKey = Tuple[str, Any]  # (device, data pointer or a stand-in)
Storages = Dict[StorageKey, int]  # key -> bytes


def tensor_storage(t: Any, storages: Storages) -> None:
    """Add the storage under tensor ``t`` to ``storages``."""
    try:
        storage = t.untyped_storage()
        nbytes = int(storage.nbytes())
        device = str(storage.device)
        ptr: Any = int(storage.data_ptr())
        if ptr == 0:
            ptr = ("id", id(t))
    except Exception:  # sparse, nested or exotic tensors
        parts = _sparse_parts(t)
        if parts is not None:
            for part in parts:  # what a sparse tensor stores: its indices and values
                tensor_storage(part, storages)
            return
        try:
            if str(t.layout) != "torch.strided":
                return  # a layout of which element count times size is not what it stores
            nbytes = int(t.element_size()) * int(t.nelement())
            device = str(t.device)
        except Exception:
            return
        ptr = ("id", id(t))
    if nbytes <= 0 or device == "meta":
        return
    storages[(device, ptr)] = max(nbytes, storages.get((device, ptr), 0))


def _sparse_parts(t: Any) -> Optional[Tuple[Any, ...]]:
    """The dense tensors a sparse tensor keeps (None: not a sparse layout, or unreadable)."""
    try:
        layout = str(t.layout)
        if layout == "torch.sparse_coo":
            return (t._indices(), t._values())
        if layout in ("torch.sparse_csr", "torch.sparse_bsr"):
            return (t.crow_indices(), t.col_indices(), t.values())
        if layout in ("torch.sparse_csc", "torch.sparse_bsc"):
            return (t.ccol_indices(), t.row_indices(), t.values())
    except Exception:
        pass
    return None


def bytes_by_device(storages: Storages, keys: Optional[Iterable[StorageKey]] = None) -> Dict[str, int]:
    out: Dict[str, int] = {}
    for key in storages if keys is None else keys:
        out[key[0]] = out.get(key[0], 0) + storages[key]
    return out
