"""Counts the memory a traced step holds, storage by storage, as the CUDA caching allocator would.

Fake tensors have shapes and dtypes but no memory, so what a step would
allocate is read from the operations themselves: a dispatch mode sees every
operation's outputs, and each output whose storage it has not seen before is
a new allocation. A ``weakref.finalize`` on the storage tells when that
allocation is freed, because a storage dies exactly when its last tensor
(or autograd's saved copy of it) does. The bytes are rounded up to the
allocator's 512-byte blocks.

The counter remembers, at the peak, which storages were live and in which
phase each was made, so that the peak can be broken down by role once the
step has ended and the roles (parameters, gradients, optimizer state) are
known.
"""

from __future__ import annotations

import functools
import importlib
import itertools
import weakref
from collections.abc import Iterable
from typing import Any

# The CUDA caching allocator hands out memory in multiples of this many bytes.
BLOCK_BYTES = 512


def rounded(nbytes: int) -> int:
    """The bytes that an allocation of ``nbytes`` takes from the caching allocator."""
    return -(-int(nbytes) // BLOCK_BYTES) * BLOCK_BYTES


class Allocation:
    """One live storage as counted: its serial number, its rounded bytes and the phase that made it."""

    __slots__ = ("serial", "nbytes", "phase")

    def __init__(self, serial: int, nbytes: int, phase: str):
        self.serial = serial
        self.nbytes = nbytes
        self.phase = phase


class StorageLedger:
    """The live storages of a trace, their current and peak total, and what was live at the peak.

    Storages are told apart by the address of their C++ object while they
    live, and by a serial number once counted, because an address is reused
    after its storage is freed.
    """

    def __init__(self, device_type: str):
        self.device_type = device_type
        self.phase = "setup"
        self.current = 0
        self.peak = 0
        self._live: dict[int, Allocation] = {}
        self._serials = itertools.count(1)
        self._peak_pending = False
        self._at_peak: dict[int, int] = {}
        # Every allocation and free since the peak was last restarted, as
        # (serial number, signed bytes), so that a variant of the step can be
        # replayed from the same trace (variants.py).
        self.events: list[tuple[int, int]] = []

    def track(self, tensor: Any) -> int | None:
        """Count ``tensor``'s storage if it is new and on the traced device; return its serial number."""
        if tensor.device.type != self.device_type:
            return None
        storage = tensor.untyped_storage()
        key = storage._cdata
        known = self._live.get(key)
        if known is not None:
            return known.serial
        allocation = Allocation(next(self._serials), rounded(storage.nbytes()), self.phase)
        self._live[key] = allocation
        self.current += allocation.nbytes
        self.events.append((allocation.serial, allocation.nbytes))
        if self.current > self.peak:
            self.peak = self.current
            self._peak_pending = True
        weakref.finalize(storage, self._free, key)
        return allocation.serial

    def track_all(self, tensors: Iterable[Any]) -> set[int]:
        """Count every tensor of ``tensors`` and return their serial numbers."""
        serials = (self.track(t) for t in tensors)
        return {s for s in serials if s is not None}

    def _free(self, key: int) -> None:
        # The first free after a new peak is when the peak is known to have
        # been reached, so the live set is remembered here rather than at
        # every allocation that raised the peak.
        if self._peak_pending:
            self._remember_peak()
        allocation = self._live.pop(key, None)
        if allocation is not None:
            self.current -= allocation.nbytes
            self.events.append((allocation.serial, -allocation.nbytes))

    def _remember_peak(self) -> None:
        self._at_peak = {a.serial: a.nbytes for a in self._live.values()}
        self._peak_pending = False

    def restart_peak(self) -> None:
        """Start a new peak from what is live now, as ``reset_peak_memory_stats`` does."""
        self.peak = self.current
        self.events = []
        self._remember_peak()

    def live_serials(self, phase: str | None = None) -> set[int]:
        """The serial numbers of the storages live now, of one phase or of all."""
        return {a.serial for a in self._live.values() if phase is None or a.phase == phase}

    def live_bytes(self, serials: set[int]) -> int:
        """The rounded bytes of the live storages among ``serials``."""
        return sum(a.nbytes for a in self._live.values() if a.serial in serials)

    def at_peak(self) -> dict[int, int]:
        """What was live at the peak: each storage's serial number and rounded bytes."""
        if self._peak_pending:
            self._remember_peak()
        return dict(self._at_peak)


class RealTensorWrite(RuntimeError):
    """A traced step tried to write into a real tensor, which fake tensors would let it do."""

    def __init__(self, func: Any):
        super().__init__(
            f"the step writes into a real tensor ({func}) that is not one of the model's parameters or buffers "
            "(a tensor kept as a plain attribute, or a loss's state); tracing it would change that tensor"
        )
        self.func = func


def written_arguments(func: Any) -> tuple[tuple[int, str], ...]:
    """The (position, name) of each argument that operation ``func`` writes into."""
    schema = func._schema
    if not schema.is_mutable:
        return ()
    return tuple(
        (i, a.name) for i, a in enumerate(schema.arguments) if a.alias_info is not None and a.alias_info.is_write
    )


@functools.lru_cache(maxsize=4)
def counting_mode_class(torch: Any) -> type:
    """The dispatch mode class, built on the ``torch`` module that the user imported."""
    dispatch = importlib.import_module("torch.utils._python_dispatch")
    pytree = importlib.import_module("torch.utils._pytree")
    tensor_type = torch.Tensor
    writes: dict[Any, tuple[tuple[int, str], ...]] = {}

    class CountingMode(dispatch.TorchDispatchMode):  # type: ignore[misc, name-defined]
        """A dispatch mode that hands every operation's tensor outputs to a :class:`StorageLedger`.

        Under fake tensors (``fake_type`` given) it also refuses any write
        into a real tensor: FakeTensorMode lets such a write through to the
        real data, and the user's state must be left as it was.
        """

        def __init__(self, ledger: StorageLedger, fake_type: type | None = None):
            super().__init__()
            self.ledger = ledger
            self.fake_type = fake_type

        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            kwargs = kwargs or {}
            if self.fake_type is not None:
                self._refuse_real_writes(func, args, kwargs)
            out = func(*args, **kwargs)
            if isinstance(out, tensor_type):
                self.ledger.track(out)
            else:
                for leaf in pytree.tree_leaves(out):
                    if isinstance(leaf, tensor_type):
                        self.ledger.track(leaf)
            return out

        def _refuse_real_writes(self, func: Any, args: Any, kwargs: Any) -> None:
            fake_type: Any = self.fake_type
            written = writes.get(func)
            if written is None:
                written = writes[func] = written_arguments(func)
            for position, name in written:
                value = args[position] if position < len(args) else kwargs.get(name)
                if isinstance(value, tensor_type) and not isinstance(value, fake_type):
                    raise RealTensorWrite(func)

    return CountingMode
