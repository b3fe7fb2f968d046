"""Work out what became of a cell (ok, error or interrupted) and whether an
error was an out-of-memory one.

Errors are recognised by class name and message text, so torch and TensorFlow
are never imported. The outcome is read from IPython's ExecutionResult in
post_run_cell, and nothing keeps a reference to the exception, because its
traceback holds the failed cell's objects."""

from __future__ import annotations

import builtins
import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ..protocol import CellStatus

# The message shapes in protocol_types.py are needed for annotations only.
if TYPE_CHECKING:
    from ..protocol_types import CellError

MESSAGE_HEAD_CHARS = 1000

# An out-of-memory error is recognised by its class name, anywhere in the MRO
# so that subclasses count, and by its message text, so torch and TensorFlow
# are never imported. The messages, as the libraries' sources word them, are:
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
#   a DataLoader worker the out-of-memory killer took (torch/csrc/DataLoader.cpp), raised
#     in the kernel as a RuntimeError: "DataLoader worker (pid 4312) is killed by signal: Killed."

OUT_OF_MEMORY_TYPE_NAMES = frozenset({"OutOfMemoryError", "MemoryError", "ResourceExhaustedError"})
OUT_OF_MEMORY_MESSAGE = re.compile(
    r"out of memory|_ALLOC_FAILED|_ALLOCATION_FAILED|\bOOM when allocating|can't allocate memory|"
    r"DefaultCPUAllocator: not enough memory|DataLoader worker \(pid \d+\) is killed by signal: Killed",
    re.IGNORECASE,
)
# This much of the message is passed to the diagnosis, which is as much as
# oom_message.py scans. Its head alone would not do, because a wrapper often
# puts the library's message after a whole traceback (nn.DataParallel's
# "Caught OutOfMemoryError in replica 1 ... Original Traceback ...", or Keras's
# "Graph execution error: Detected at node ... defined at ...").
SCANNED_MESSAGE_CHARS = 65536
# At most this many links of an error's chain are looked at: its causes, its
# contexts and an exception group's members.
MAX_CHAIN_LINKS = 16


# These errors, when raised while an out-of-memory error was being handled,
# say that the handler itself went wrong, so they do not stand for the memory
# error.
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
    except Exception:
        # A user's exception class may have a __str__ that fails.
        return ""


def error_head(exc: BaseException, limit: int) -> str:
    """The first line of ``exc``'s message, at most ``limit`` characters."""
    text = error_message(exc).strip()
    text = text.splitlines()[0] if text else ""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def error_chain(exc: BaseException) -> Iterator[BaseException]:
    """Yield ``exc``, what it was raised from, an exception group's members, and
    what it was raised during where that is part of the same failure, as
    :func:`_follows_context` decides.

    The walk is breadth first, yields each exception once, and stops after
    MAX_CHAIN_LINKS of them.
    """
    seen: set[int] = set()
    queue: list[BaseException] = [exc]
    while queue and len(seen) < MAX_CHAIN_LINKS:
        current = queue.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        # With ``raise ... from``, the author tied the two errors together.
        if current.__cause__ is not None:
            queue.append(current.__cause__)
        context = current.__context__
        if context is not None and context is not current.__cause__ and _follows_context(current, context):
            queue.append(context)
        # An exception group, such as asyncio.TaskGroup raises, holds its
        # members' errors.
        members = getattr(current, "exceptions", ()) if _is_group(current) else ()
        queue.extend(m for m in members[:MAX_CHAIN_LINKS] if isinstance(m, BaseException))


def _follows_context(outer: BaseException, context: BaseException) -> bool:
    """Whether ``outer``, raised while ``context`` was being handled, is the same failure.

    It is when ``outer`` is itself an out-of-memory error (a wrapper saying "GPU
    out of memory" over the library's message with the figures), when it
    repeats the message of the error it was raised during (``raise
    RuntimeError(f"step failed: {e}")``), or when it is any other error raised
    in its place (``raise RuntimeError("step 12 failed, try a smaller
    batch")``), unless its raiser hid the context (``raise ... from None``).
    It is not when it is the kind of error that a bug raises, such as an
    IndexError in an ``except OutOfMemoryError:`` that falls back to a smaller
    batch. Calling that out of memory would send the user after memory while
    the bug is elsewhere.
    """
    outer_message = error_message(outer)[:SCANNED_MESSAGE_CHARS]
    if _looks_out_of_memory(outer, outer_message):
        return True
    inner_message = error_message(context)[:SCANNED_MESSAGE_CHARS].strip()
    if inner_message and inner_message in outer_message:
        return True
    return not outer.__suppress_context__ and not isinstance(outer, BUG_ERRORS)


def _is_group(exc: BaseException) -> bool:
    # Exception groups exist only in Python 3.11 and later.
    group = getattr(builtins, "BaseExceptionGroup", None)
    return group is not None and isinstance(exc, group)


def _looks_out_of_memory(exc: BaseException, message: str) -> bool:
    return any(cls.__name__ in OUT_OF_MEMORY_TYPE_NAMES for cls in type(exc).__mro__) or bool(
        OUT_OF_MEMORY_MESSAGE.search(message)
    )


def out_of_memory_text(
    exc: BaseException, readable: Callable[[str, str], bool] | None = None
) -> tuple[str, str] | None:
    """The ``(class name, message)`` of the out-of-memory error in ``exc``'s chain,
    or None if there is none.

    The error may be ``exc`` itself, an exception it was raised from, a member
    of an exception group, or one it was raised during when it wraps that one
    (see :func:`_follows_context`). When ``readable`` is given, it says whether
    the diagnosis can read a message, and the first link that it can read wins,
    so that a wrapper's own "GPU out of memory, lower the batch size" does not
    hide the library's message with the figures under it. Only text is
    returned, because the diagnosis must not keep the exception, whose
    traceback holds the failed cell's tensors.
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
    """Whether the diagnosis can read this message.

    The diagnosis's parser, oom_message.py, is imported here rather than at the
    top so that it loads only with the first out-of-memory error.
    """
    from .oom_message import parse_oom_message

    return parse_oom_message(type_name, message) is not None


def is_out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc``, or an error it stands for (see :func:`error_chain`), is an
    out-of-memory error."""
    return out_of_memory_text(exc) is not None


def exception_of(result: Any) -> BaseException | None:
    """Return the exception of an IPython ExecutionResult, or None when the cell raised none."""
    exc = getattr(result, "error_in_exec", None)
    if exc is None:
        # An error before execution is a SyntaxError or a failing input
        # transformer.
        exc = getattr(result, "error_before_exec", None)
    return exc if isinstance(exc, BaseException) else None


# An interrupt of a cell that awaits cancels its task, since ipykernel 7 runs
# such a cell as a task, so the cell ends with asyncio's CancelledError rather
# than KeyboardInterrupt.
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
    """The status and error of an IPython ExecutionResult.

    A result of None means that the cell was cancelled, which counts as
    interrupted.
    """
    if result is None:
        return "interrupted", None
    exc = exception_of(result)
    if exc is None:
        return "ok", None
    return ("interrupted" if _is_interrupt(exc) else "error"), describe_error(exc)
