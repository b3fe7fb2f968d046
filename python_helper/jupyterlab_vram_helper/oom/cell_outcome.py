"""What became of a cell: ok, error, interrupted; and whether an error was an
out-of-memory one (by class name and message; torch and TensorFlow are never
imported). Read from IPython's ExecutionResult in post_run_cell; nothing keeps
a reference to the exception."""

from __future__ import annotations

import builtins
import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ..protocol import CellStatus

if TYPE_CHECKING:  # the message shapes, for annotations only (protocol_types.py)
    from ..protocol_types import CellError

MESSAGE_HEAD_CHARS = 1000

# # By class name (anywhere in the MRO, so subclasses count) and by message text;
# torch and TensorFlow are never imported. Messages, from the libraries' sources:
#   torch.OutOfMemoryError (c10/cuda/CUDACachingAllocator.cpp):
#     "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity ..."
#   cudaErrorMemoryAllocation via C10_CUDA_CHECK: "CUDA error: out of memory"
#   cuBLAS / cuDNN / cuSOLVER / cuFFT / cuSPARSE handle or workspace allocation:
#     "CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
#     "cuDNN error: CUDNN_STATUS_ALLOC_FAILED", "CUSOLVER_STATUS_ALLOC_FAILED",
#     "CUFFT_ALLOC_FAILED"; cuDNN 9 (PyTorch >= 2.3):
#     "cuDNN error: CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED"
#   torch (cuDNN frontend): "CUDA ran out of memory outside PyTorch's allocator. ..."
#   torch CPU: "DefaultCPUAllocator: can't allocate memory: you tried to allocate ..."
#     (Windows, and builds on mimalloc: "DefaultCPUAllocator: not enough memory: ...")
#   torch MPS / ROCm: "MPS backend out of memory ...", "HIP out of memory. ..."
#   TensorFlow ResourceExhaustedError: "OOM when allocating tensor with shape[...] ..."
#   JAX/XLA: "RESOURCE_EXHAUSTED: Out of memory while trying to allocate ..."
#   numpy _ArrayMemoryError (a MemoryError): "Unable to allocate 7.45 GiB for an array ..."

OUT_OF_MEMORY_TYPE_NAMES = frozenset({"OutOfMemoryError", "MemoryError", "ResourceExhaustedError"})
OUT_OF_MEMORY_MESSAGE = re.compile(
    r"out of memory|_ALLOC_FAILED|_ALLOCATION_FAILED|\bOOM when allocating|can't allocate memory|"
    r"DefaultCPUAllocator: not enough memory",
    re.IGNORECASE,
)
# The message as the diagnosis reads it: as much as oom_message.py scans. Not
# just its head: a wrapper often puts the library's message after a whole
# traceback (nn.DataParallel's "Caught OutOfMemoryError in replica 1 ...
# Original Traceback ...", Keras's "Graph execution error: Detected at node
# ... defined at ...").
SCANNED_MESSAGE_CHARS = 65536
# Links of an error's chain looked at (causes, contexts, an exception group's members).
MAX_CHAIN_LINKS = 16


# Errors that, raised while an out-of-memory error was handled, say the
# handler itself went wrong rather than stand for the memory error.
BUG_ERRORS = (
    LookupError,
    TypeError,
    AttributeError,
    NameError,
    AssertionError,
    ArithmeticError,
    ImportError,
    SyntaxError,
    StopIteration,
)


def error_message(exc: BaseException) -> str:
    """Return an exception's message, or an empty string when its ``__str__`` fails."""
    try:
        return str(exc)
    except Exception:  # a user exception whose __str__ fails
        return ""


def error_head(exc: BaseException, limit: int) -> str:
    """The first line of ``exc``'s message, at most ``limit`` characters."""
    text = error_message(exc).strip()
    text = text.splitlines()[0] if text else ""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def error_chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc``, what it was raised from, an exception group's members, and what it
    was raised during where that is part of the same failure (breadth first, each
    once, at most MAX_CHAIN_LINKS): see :func:`_follows_context`."""
    seen: set[int] = set()
    queue: list[BaseException] = [exc]
    while queue and len(seen) < MAX_CHAIN_LINKS:
        current = queue.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        if current.__cause__ is not None:  # ``raise ... from``: the author tied them together
            queue.append(current.__cause__)
        context = current.__context__
        if context is not None and context is not current.__cause__ and _follows_context(current, context):
            queue.append(context)
        members = getattr(current, "exceptions", ()) if _is_group(current) else ()  # asyncio.TaskGroup's errors
        queue.extend(m for m in members[:MAX_CHAIN_LINKS] if isinstance(m, BaseException))


def _follows_context(outer: BaseException, context: BaseException) -> bool:
    """Whether ``outer``, raised while ``context`` was being handled, is the same failure.

    Yes when ``outer`` is itself an out-of-memory error (a wrapper saying "GPU
    out of memory" over the library's message with the figures), repeats the
    message of the error it was raised during (``raise RuntimeError(f"step
    failed: {e}")``), or is any other error raised in its place (``raise
    RuntimeError("step 12 failed, try a smaller batch")``), unless its raiser
    hid the context (``raise ... from None``). No when it is the kind of error
    a bug raises (an IndexError in an ``except OutOfMemoryError:`` that falls
    back to a smaller batch): calling that out of memory would send the user
    after memory while the bug is elsewhere.
    """
    outer_message = error_message(outer)[:SCANNED_MESSAGE_CHARS]
    if _looks_out_of_memory(outer, outer_message):
        return True
    inner_message = error_message(context)[:SCANNED_MESSAGE_CHARS].strip()
    if inner_message and inner_message in outer_message:
        return True
    return not outer.__suppress_context__ and not isinstance(outer, BUG_ERRORS)


def _is_group(exc: BaseException) -> bool:
    group = getattr(builtins, "BaseExceptionGroup", None)  # Python >= 3.11
    return group is not None and isinstance(exc, group)


def _looks_out_of_memory(exc: BaseException, message: str) -> bool:
    return any(cls.__name__ in OUT_OF_MEMORY_TYPE_NAMES for cls in type(exc).__mro__) or bool(
        OUT_OF_MEMORY_MESSAGE.search(message)
    )


def out_of_memory_text(
    exc: BaseException, readable: Callable[[str, str], bool] | None = None
) -> tuple[str, str] | None:
    """``(class name, message)`` of the out-of-memory error in ``exc``'s chain, if any.

    ``exc`` itself, or an exception it was raised from, a member of an
    exception group, or one it was raised during when it wraps it (see
    :func:`_follows_context`). With
    ``readable`` (whether the diagnosis can read a message), the first link it
    can read wins: a wrapper's own "GPU out of memory, lower the batch size"
    must not hide the library's message with the figures under it. Text only:
    the diagnosis must not keep the exception, whose traceback holds the
    failed cell's tensors.
    """
    first: tuple[str, str] | None = None
    for current in error_chain(exc):
        message = error_message(current)[:SCANNED_MESSAGE_CHARS]
        if not _looks_out_of_memory(current, message):
            continue
        text = type(current).__name__, message
        if readable is None or readable(*text):
            return text
        if first is None:
            first = text
    return first


def oom_message_readable(type_name: str, message: str) -> bool:
    """Whether the diagnosis (oom_message.py, loaded with the first out-of-memory error) reads this message."""
    from .oom_message import parse_oom_message

    return parse_oom_message(type_name, message) is not None


def is_out_of_memory(exc: BaseException) -> bool:
    """True if ``exc`` or an error it stands for (see :func:`error_chain`) is an out-of-memory error."""
    return out_of_memory_text(exc) is not None


def exception_of(result: Any) -> BaseException | None:
    """Return the exception of an IPython ExecutionResult, or None when the cell raised none."""
    exc = getattr(result, "error_in_exec", None)
    if exc is None:
        exc = getattr(result, "error_before_exec", None)  # SyntaxError, a failing input transformer
    return exc if isinstance(exc, BaseException) else None


# An interrupt of a cell that awaits (ipykernel 7 runs it as a task) cancels
# the task: the cell ends with asyncio's CancelledError, not KeyboardInterrupt.
_INTERRUPTS = frozenset({"KeyboardInterrupt", "CancelledError"})


def _is_interrupt(exc: BaseException) -> bool:
    return any(cls.__name__ in _INTERRUPTS for cls in type(exc).__mro__)


def describe_error(exc: BaseException) -> CellError:
    """Describe an exception as a cell record's ``error`` field reports it."""
    return {
        "type": type(exc).__name__,
        "message_head": error_message(exc)[:MESSAGE_HEAD_CHARS],
        "out_of_memory": is_out_of_memory(exc),
    }


def cell_outcome(result: Any) -> tuple[CellStatus, CellError | None]:
    """The status and error of an IPython ExecutionResult (or None: cancelled)."""
    if result is None:
        return "interrupted", None
    exc = exception_of(result)
    if exc is None:
        return "ok", None
    return ("interrupted" if _is_interrupt(exc) else "error"), describe_error(exc)


# --- readings ----------------------------------------------------------------------
