"""File descriptors the readers keep open between readings (a pread on an open
file costs a few microseconds; open/read/close, ~15)."""

from __future__ import annotations

import os
from typing import Any


def open_fd(path: str, flags: int = os.O_RDONLY) -> int | None:
    """``path`` opened (close-on-exec: a subprocess of the user's must not inherit it); None if it cannot be."""
    try:
        return os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None


def close_descriptors(owner: Any, attributes: tuple[str, ...]) -> None:
    """Close the file descriptors ``owner`` keeps in ``attributes``, and forget them."""
    for name in attributes:
        fd = getattr(owner, name, None)
        setattr(owner, name, None)
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass
