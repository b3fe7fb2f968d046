"""Keeps the warnings raised on the helper's own threads out of the user's output.

The sampler and the cell sender call into torch, NVML and TensorFlow from
threads of their own. A warning raised there (a deprecation in a
``torch.cuda`` or ``nvmlDevice*`` call) goes to ``sys.stderr``, which
ipykernel sends to the cell running at that moment, which is the user's.
Filters cannot tell threads apart (``warnings.catch_warnings`` is
process-wide before Python 3.14), so ``warnings.showwarning``, which every
shown warning goes through, is wrapped instead. A warning from a thread named
``jupyterlab-vram-...`` is dropped, and every other one goes on to whatever
showed warnings before.

One cost remains. Under the "default" action Python notes a warning as shown
where it was raised, so a warning that the helper's thread triggered inside
torch is not shown again when the user's code triggers it at the same place.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from typing import Any

HELPER_THREAD_PREFIX = "jupyterlab-vram-"


class HelperThreadWarnings:
    """Wraps ``warnings.showwarning`` from ``install()`` to ``uninstall()``."""

    def __init__(self) -> None:
        self._previous: Callable[..., Any] | None = None
        self._active = False

    def install(self) -> None:
        if self._active:
            return
        self._previous = warnings.showwarning
        self._active = True
        warnings.showwarning = self._show

    def uninstall(self) -> None:
        if not self._active:
            return
        self._active = False
        if warnings.showwarning == self._show:
            warnings.showwarning = self._previous  # type: ignore[assignment]
        # Otherwise something wrapped it since, as logging.captureWarnings
        # does. That wrapper keeps calling this one, which passes everything
        # on once it is inactive.

    def _show(
        self, message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: str | None = None
    ) -> None:
        if self._active and threading.current_thread().name.startswith(HELPER_THREAD_PREFIX):
            return
        previous = self._previous
        if previous is not None:
            previous(message, category, filename, lineno, file, line)
