"""Answers the ``estimate_memory`` request: finds the named objects in the notebook and runs the estimate.

Names are looked up in the user namespace as a name or a dotted attribute
path (``trainer.model``), reading attributes from instances' ``__dict__``
first so that a property of the user's is not run where a plain attribute
is there. A name that cannot be found is a refusal that says which. Nothing
of the estimate reaches the cell's output: every exception becomes a
refused result, and what the user's model prints while it is traced is
dropped, while what other threads print goes where it went. The objects
are let go when the request ends.
"""

from __future__ import annotations

import contextlib
import io
import sys
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .estimate_run import NOT_TORCH, Progress, refused, run_estimate

if TYPE_CHECKING:  # the message shapes, for annotations only (protocol_types.py)
    from ..protocol_types import EstimateMemoryResult

ROLE_NAMES = ("model", "optimizer", "loss", "batch")


class ThreadSink(io.TextIOBase):
    """A stream that drops what one thread writes and passes every other thread's writes to ``stream``."""

    def __init__(self, stream: Any, thread: int) -> None:
        super().__init__()
        self._stream = stream
        self._thread = thread

    def write(self, text: str) -> int:
        """Drop the text of the estimating thread; write any other thread's."""
        if threading.get_ident() == self._thread:
            return len(text)
        return int(self._stream.write(text))

    def flush(self) -> None:
        """Flush the stream underneath."""
        self._stream.flush()

    def __getattr__(self, name: str) -> Any:
        # Whatever else a writer asks of a stream (encoding, fileno) is the stream's.
        return getattr(self._stream, name)


@contextlib.contextmanager
def quiet_thread() -> Any:
    """While it lasts, what this thread prints is dropped, and other threads' output is untouched."""
    me = threading.get_ident()
    with contextlib.redirect_stdout(ThreadSink(sys.stdout, me)), contextlib.redirect_stderr(ThreadSink(sys.stderr, me)):
        yield


class NameNotFound(LookupError):
    """A name of the request that the notebook's namespace does not hold."""


def resolve(user_ns: Mapping[str, Any], path: str) -> Any:
    """The object at ``path``, a name or a dotted attribute path, in ``user_ns``."""
    first, *rest = path.split(".")
    if first not in user_ns:
        raise NameNotFound(f"{first!r} is not defined in the notebook")
    value = user_ns[first]
    for depth, attribute in enumerate(rest, start=1):
        own = getattr(value, "__dict__", None)
        if isinstance(own, dict) and attribute in own:
            value = own[attribute]
        elif hasattr(value, attribute):
            value = getattr(value, attribute)
        else:
            raise NameNotFound(f"{'.'.join([first, *rest[: depth - 1]])!r} has no attribute {attribute!r}")
    return value


def answer(
    user_ns: Mapping[str, Any],
    args: Mapping[str, Any],
    progress: Progress | None,
    gpus: list[Any] | None,
) -> EstimateMemoryResult:
    """The estimate_memory result for the request's validated ``args``."""
    started = time.perf_counter()
    names: dict[str, str | None] = {role: args.get(role) for role in ROLE_NAMES}
    # Without PyTorch no name could be what the estimate needs, and saying so
    # first is the more useful refusal.
    if "torch" not in sys.modules:
        return refused(names, [NOT_TORCH], None, started)
    try:
        found = {role: resolve(user_ns, name) if name else None for role, name in names.items()}
    except NameNotFound as exc:
        return refused(names, [f"{exc}: nothing was estimated"], None, started)
    # Whatever the user's model prints while traced, and any warning PyTorch
    # writes, stays out of the cell that happens to be shown.
    try:
        with quiet_thread():
            return run_estimate(
                found["model"],
                found["batch"],
                found["optimizer"],
                found["loss"],
                batch_sizes=args.get("batch_sizes"),
                margin=args.get("margin", 0.1),
                device=args.get("device"),
                real_step=bool(args.get("real_step")),
                names=names,
                progress=progress,
                gpus=gpus,
                card_bytes=args.get("card_bytes"),
            )
    except Exception as exc:
        message = " ".join(str(exc).split())[:300]
        return refused(names, [f"The estimate failed: {type(exc).__name__}: {message}"], None, started)
    finally:
        found.clear()
