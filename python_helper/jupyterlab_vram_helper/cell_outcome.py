"""What became of a cell: ok, error, interrupted; and whether an error was an
out-of-memory one (by class name and message; torch and TensorFlow are never
imported). Read from IPython's ExecutionResult in post_run_cell; nothing keeps
a reference to the exception."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Optional, Tuple

from .protocol import CellStatus

if TYPE_CHECKING:  # the message shapes, for annotations only (protocol_types.py)
    from .protocol_types import CellError

MESSAGE_HEAD_CHARS = 1000

# # By class name (anywhere in the MRO, so subclasses count) and by message text;
# torch and TensorFlow are never imported. Messages, from the libraries' sources:
#   torch.OutOfMemoryError (c10/cuda/CUDACachingAllocator.cpp):
#     "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity ..."
#   cudaErrorMemoryAllocation via C10_CUDA_CHECK: "CUDA error: out of memory"
#   cuBLAS / cuDNN / cuSOLVER / cuFFT / cuSPARSE handle or workspace allocation:
#     "CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
#     "cuDNN error: CUDNN_STATUS_ALLOC_FAILED", "CUSOLVER_STATUS_ALLOC_FAILED",
#     "CUFFT_ALLOC_FAILED"
#   torch (cuDNN frontend): "CUDA ran out of memory outside PyTorch's allocator. ..."
#   torch CPU: "DefaultCPUAllocator: can't allocate memory: you tried to allocate ..."
#   torch MPS / ROCm: "MPS backend out of memory ...", "HIP out of memory. ..."
#   TensorFlow ResourceExhaustedError: "OOM when allocating tensor with shape[...] ..."
#   JAX/XLA: "RESOURCE_EXHAUSTED: Out of memory while trying to allocate ..."
#   numpy _ArrayMemoryError (a MemoryError): "Unable to allocate 7.45 GiB for an array ..."

OUT_OF_MEMORY_TYPE_NAMES = frozenset({"OutOfMemoryError", "MemoryError", "ResourceExhaustedError"})
OUT_OF_MEMORY_MESSAGE = re.compile(
    r"out of memory|_ALLOC_FAILED|\bOOM when allocating|can't allocate memory",
    re.IGNORECASE,
)
# Enough for torch's whole OOM message (requested, capacity, free, reserved but
# unallocated); the frontend's OOM assistant reads it.
_SCANNED_MESSAGE_CHARS = 4000


def _message(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:  # a user exception whose __str__ fails
        return ""


def out_of_memory_text(exc: BaseException) -> Optional[Tuple[str, str]]:
    """``(class name, message head)`` of the out-of-memory error in ``exc``'s chain, if any.

    ``exc`` itself, or an exception it was raised from/during (a wrapper
    raised in an ``except`` block). Text only: the diagnosis must not keep
    the exception, whose traceback holds the failed cell's tensors.
    """
    seen = set()
    current: Optional[BaseException] = exc
    while current is not None and id(current) not in seen and len(seen) < 8:
        seen.add(id(current))
        message = _message(current)[:_SCANNED_MESSAGE_CHARS]
        if any(cls.__name__ in OUT_OF_MEMORY_TYPE_NAMES for cls in type(current).__mro__):
            return type(current).__name__, message
        if OUT_OF_MEMORY_MESSAGE.search(message):
            return type(current).__name__, message
        current = current.__cause__ or current.__context__
    return None


def is_out_of_memory(exc: BaseException) -> bool:
    """True if ``exc`` or an exception it was raised from/during is an out-of-memory error."""
    return out_of_memory_text(exc) is not None


def exception_of(result: Any) -> Optional[BaseException]:
    exc = getattr(result, "error_in_exec", None)
    if exc is None:
        exc = getattr(result, "error_before_exec", None)  # SyntaxError, a failing input transformer
    return exc if isinstance(exc, BaseException) else None


def _is_interrupt(exc: BaseException) -> bool:
    return any(cls.__name__ == "KeyboardInterrupt" for cls in type(exc).__mro__)


def describe_error(exc: BaseException) -> CellError:
    return {
        "type": type(exc).__name__,
        "message_head": _message(exc)[:MESSAGE_HEAD_CHARS],
        "out_of_memory": is_out_of_memory(exc),
    }


def cell_outcome(result: Any) -> Tuple[CellStatus, Optional[CellError]]:
    """The status and error of an IPython ExecutionResult (or None: cancelled)."""
    if result is None:
        return "interrupted", None
    exc = exception_of(result)
    if exc is None:
        return "ok", None
    return ("interrupted" if _is_interrupt(exc) else "error"), describe_error(exc)


# --- readings ----------------------------------------------------------------------
