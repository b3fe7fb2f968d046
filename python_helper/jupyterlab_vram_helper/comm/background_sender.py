"""The thread that finishes and sends per-cell records, off the kernel's main thread."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from ..forking import call_in_forked_child

SENDER_THREAD_NAME = "jupyterlab-vram-cell-sender"
# How long the first call queued after a quiet spell waits before its round,
# which also runs every call queued meanwhile. One comm message costs the
# kernel more CPU than the rest of a cell's accounting (JSON, signing, the
# IOPub thread's hand-off: 100-200 us with cold caches), so the records of
# every cell that ends within one window go out together: cells sent one by
# one, as in a notebook run by a script or a "Run All", share a message. A
# lone cell's badge waits this long, well under what a person notices; the
# kernel's execute_reply and idle status have long gone out by then, so the
# round never competes with them for the GIL.
SENDER_WINDOW_S = 0.04
# While cells keep ending (a "Run All", a script sending cells one by one)
# rounds start at least this far apart: records go out once per spacing,
# and a message's cost is shared by every cell that ended in it.
SENDER_SPACING_S = 0.05


class BackgroundSender:
    """Runs calls, in order, on its own daemon thread; sends messages to every open comm.

    The hook only enqueues; this thread, started on first use, wakes for the
    first call, waits ``window_s`` (and until ``spacing_s`` after the start
    of the previous round), then does everything queued by then in one
    round. What comes in while it waits is queued without waking it.

    While calls keep coming (a round followed the previous one within two
    spacings), the thread does not go back to waiting on the queue after a
    round: it sleeps until the next round is due and takes what is queued
    by then. The call that starts the next round then wakes nobody: one
    wake-up per round instead of two, and none paid by the cell hook that
    queued it. A quiet spell ends it: nothing queued at the next round's
    time, and the thread waits on the queue again.
    """

    _STOP = object()

    def __init__(
        self,
        broadcast: Callable[[Mapping[str, Any]], None],
        window_s: float = SENDER_WINDOW_S,
        spacing_s: float = SENDER_SPACING_S,
    ):
        self._broadcast = broadcast
        self._window_s = window_s
        self._spacing_s = spacing_s
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        call_in_forked_child(self._forget_thread)

    def post(self, message: Mapping[str, Any]) -> None:
        """Send ``message`` to every open comm: soon, or at once from a round on this sender's thread."""
        if self._thread is threading.current_thread():
            # This already runs off the hooks' thread, so the message needs no second trip
            # through the queue.
            self._broadcast(message)
        else:
            self.call_soon(lambda: self._broadcast(message))

    def call_soon(self, call: Callable[[], None]) -> None:
        self._queue.put(call)
        # Thread.is_alive() is not used, because the hook would pay for that call every time.
        # Instead the thread clears ``_thread`` when it ends, and a forked child starts afresh.
        if self._thread is None:
            with self._lock:
                if self._thread is None:
                    # Set the attribute before the thread starts, because with a window of 0 its
                    # round may post at once, and posting checks this attribute.
                    self._thread = threading.Thread(target=self._run, name=SENDER_THREAD_NAME, daemon=True)
                    try:
                        self._thread.start()
                    except BaseException:
                        # No thread could be started (for example, a cgroup's pids.max was
                        # reached); the next call tries again.
                        self._thread = None
                        raise

    def _run(self) -> None:
        last_round = float("-inf")
        streaming = False  # True when the last round came within two spacings of the one before.
        try:
            while True:
                call = None
                if streaming and self._window_s > 0:
                    # Calls keep coming, so sleep until the next round is due and then take what
                    # was queued by then; queuing those calls woke nobody, which saves a wake-up.
                    time.sleep(max(0.0, last_round + self._spacing_s - time.monotonic()))
                    try:
                        call = self._queue.get_nowait()
                    except queue.Empty:
                        pass  # A quiet spell began, so wait on the queue below.
                if call is None:
                    call = self._queue.get()
                    if call is not self._STOP and self._window_s > 0:
                        now = time.monotonic()
                        time.sleep(max(self._window_s, last_round + self._spacing_s - now))
                now = time.monotonic()
                streaming, last_round = now - last_round < 2 * self._spacing_s, now
                while True:
                    if call is self._STOP:
                        return
                    try:
                        call()
                    except Exception:
                        pass  # The channel reports its own send failures, and the recorder its own failures.
                    try:
                        call = self._queue.get_nowait()
                    except queue.Empty:
                        break
        finally:
            with self._lock:
                if self._thread is threading.current_thread():
                    self._thread = None

    def _forget_thread(self) -> None:
        """In a forked child: the parent's thread does not exist there."""
        self._thread = None
        self._lock = threading.Lock()

    def stop(self, timeout: float = 1.0) -> None:
        thread = self._thread
        if thread is None or not thread.is_alive():
            return
        self._queue.put(self._STOP)
        if thread is not threading.current_thread():
            thread.join(timeout)
