"""Warnings from the helper's threads are dropped; everyone else's are shown as before."""

from __future__ import annotations

import contextlib
import threading
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from jupyterlab_vram_helper.comm.background_sender import SENDER_THREAD_NAME
from jupyterlab_vram_helper.sampling.sampler import THREAD_NAME
from jupyterlab_vram_helper.thread_warnings import HELPER_THREAD_PREFIX, HelperThreadWarnings


def _warn_on(name: str, text: str) -> None:
    thread = threading.Thread(target=lambda: warnings.warn(text, FutureWarning, stacklevel=1), name=name)
    thread.start()
    thread.join()


def test_the_helpers_threads_carry_the_prefix() -> None:
    assert THREAD_NAME.startswith(HELPER_THREAD_PREFIX)
    assert SENDER_THREAD_NAME.startswith(HELPER_THREAD_PREFIX)


@contextlib.contextmanager
def showing_into(shown: list[str]) -> Iterator[Callable[..., None]]:
    """Every warning shown (never filtered out) is appended to ``shown``, until the block ends."""

    def show(message: Any, *rest: Any, **options: Any) -> None:
        shown.append(str(message))

    with warnings.catch_warnings():  # puts back the filters and showwarning after
        warnings.simplefilter("always")
        warnings.showwarning = show
        yield show


def test_drops_the_helpers_warnings_and_shows_the_others_then_restores() -> None:
    shown: list[str] = []
    guard = HelperThreadWarnings()
    with showing_into(shown) as original:
        guard.install()
        guard.install()  # twice: still one wrapper
        _warn_on(THREAD_NAME, "from the sampler")
        _warn_on("user-thread", "from the user's thread")
        warnings.warn("from the main thread", FutureWarning, stacklevel=1)
        guard.uninstall()
        assert warnings.showwarning is original
        _warn_on(THREAD_NAME, "after uninstall")
    assert shown == ["from the user's thread", "from the main thread", "after uninstall"]


def test_wrapped_over_after_install_passes_everything_on_once_uninstalled() -> None:
    shown: list[str] = []
    guard = HelperThreadWarnings()
    with showing_into(shown):
        guard.install()
        ours = warnings.showwarning
        outer = lambda *args: ours(*args)  # noqa: E731  (logging.captureWarnings does the like)
        warnings.showwarning = outer
        guard.uninstall()
        assert warnings.showwarning is outer  # left in place: it would lose its own wrapping
        _warn_on(SENDER_THREAD_NAME, "from the sender, helper gone")
    assert shown == ["from the sender, helper gone"]
