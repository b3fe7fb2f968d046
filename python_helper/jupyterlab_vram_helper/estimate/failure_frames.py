"""Says why fake tensors could not run the user's step: the phase, the operation and the user's line.

An operation without a fake implementation, an output whose shape depends
on the data (``nonzero``), or control flow that reads a tensor's value
(``if x.sum() > 0``) stops a fake trace. PyTorch's exception names the
operation in its ``func``; the traceback's innermost frame that is neither
PyTorch's, the helper's nor the standard library's is the user's line, which
IPython's line cache knows for a cell. No frame of the helper is shown.
"""

from __future__ import annotations

import linecache
import os
import sysconfig
import traceback
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the message shapes, for annotations only (protocol_types.py)
    from ..protocol_types import EstimateFailure

# The longest message kept, in characters.
MAX_MESSAGE = 500


def _code_dir(filename: str, levels: int) -> str:
    """The folder ``levels`` above a code file; a path is made absolute, but a name the
    bootstrap gave its modules (``<jupyterlab-vram>/...``, as in a kernel) is kept as it is."""
    path = filename if filename.startswith("<") else os.path.abspath(filename)
    for _ in range(levels):
        path = os.path.dirname(path)
    return path


# The helper's package, as its frames name it: on disk, or delivered by the bootstrap.
_HELPER_DIR = _code_dir(__file__, 2)


def describe_failure(torch: Any, phase: str, error: BaseException) -> EstimateFailure:
    """The result's ``failure`` for ``error``, raised in ``phase`` of the traced step."""
    filename, lineno, line = user_frame(error, _library_dirs(torch))
    return {
        "phase": phase,
        "op": failed_op(error),
        "filename": filename,
        "lineno": lineno,
        "line": line,
        "message": one_line(error),
    }


def failed_op(error: BaseException) -> str | None:
    """The operation that PyTorch's exception (or one it was raised from) names, as ``aten.nonzero.default``.

    Only explicit causes are followed: an exception raised while another was
    being handled is not about that one's operation.
    """
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        func = getattr(current, "func", None)
        if func is not None:
            return str(func)
        current = current.__cause__
    return None


def one_line(error: BaseException) -> str:
    """What was raised, on one line and at most MAX_MESSAGE characters."""
    text = " ".join(str(error).split()) or "(no message)"
    text = f"{type(error).__name__}: {text}"
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 3] + "..."


def user_frame(error: BaseException, library_dirs: tuple[str, ...]) -> tuple[str | None, int | None, str | None]:
    """The innermost frame of ``error``'s traceback outside ``library_dirs``: filename, line number and code."""
    frames = traceback.extract_tb(error.__traceback__)
    for frame in reversed(frames):
        if _code_dir(frame.filename, 0).startswith(library_dirs):
            continue
        text = frame.line or linecache.getline(frame.filename, frame.lineno or 0).strip()
        return frame.filename, frame.lineno, text or None
    return None, None, None


def _library_dirs(torch: Any) -> tuple[str, ...]:
    dirs = [_HELPER_DIR]
    torch_file = getattr(torch, "__file__", None)
    if torch_file:
        dirs.append(os.path.dirname(os.path.abspath(torch_file)))
    for key in ("stdlib", "platstdlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            dirs.append(os.path.abspath(path))
    return tuple(d + os.sep for d in dirs)
