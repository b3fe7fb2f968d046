"""Calls a method in every child forked from the kernel, such as multiprocessing's ``fork`` workers.

A child inherits the parent's open files and Python objects but none of its
threads, so the objects that hold threads or open files must be told that they
are now in a child. They are told at the fork rather than by comparing
``os.getpid()`` on every call, because the cell hooks pay for every syscall.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable
from typing import Any


def call_in_forked_child(method: Callable[[], Any]) -> None:
    """Call the bound ``method`` in every child forked from now on, while its object lives.

    Held by a weak reference: registering does not keep the object alive
    (``os.register_at_fork`` callbacks can never be removed).
    """
    if not hasattr(os, "register_at_fork"):  # Windows
        return
    ref = weakref.WeakMethod(method)  # type: ignore[arg-type]

    def in_child() -> None:
        bound = ref()
        if bound is not None:
            bound()

    os.register_at_fork(after_in_child=in_child)
