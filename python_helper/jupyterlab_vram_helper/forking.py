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
    """Call the bound ``method`` in every child forked after this call, while its object lives.

    The method is held by a weak reference, so registering does not keep the
    object alive, which matters because ``os.register_at_fork`` callbacks can
    never be removed.
    """
    # Windows has no fork, and no register_at_fork.
    if not hasattr(os, "register_at_fork"):
        return
    ref = weakref.WeakMethod(method)  # type: ignore[arg-type]

    def in_child() -> None:
        bound = ref()
        if bound is not None:
            bound()

    os.register_at_fork(after_in_child=in_child)
