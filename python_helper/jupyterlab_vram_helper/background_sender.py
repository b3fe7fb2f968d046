"""The thread that finishes and sends per-cell records, off the kernel's main thread."""

from __future__ import annotations

import queue
import threading
import time
from typing import Any, Callable, Mapping, Optional

from .forking import call_in_forked_child

SENDER_THREAD_NAME = "jupyterlab-vram-cell-sender"
# How long the sender waits, once woken, before it works: the kernel's
# execute_reply and idle status go out first. Sending at once took the GIL
# from them and delayed every reply by ~0.5 ms (benchmarks/cell_hooks_overhead.py).
SENDER_SETTLE_S = 0.005
# The least time between two rounds of work. A lone cell's record goes out
# after SENDER_SETTLE_S; cells that follow within this time (a "Run All") wait
# for the end of it and go out together, in one message: a comm message costs
# the kernel more CPU than the rest of a cell's accounting.
SENDER_COALESCE_S = 0.05


class BackgroundSender:
    """Runs calls, in order, on its own daemon thread; sends messages to every open comm.

    A comm send costs ipykernel 0.1-0.2 ms (JSON, signing, IOPub hand-off):
    more than the whole per-cell budget. The hook only enqueues; this thread,
    started on first use, waits ``settle_s`` for the kernel to finish its
    reply, then does everything queued by then, and starts its next round no
    sooner than ``coalesce_s`` after this one: what comes in meanwhile is
    queued without waking the thread, and done in one round.
    """

    _STOP = object()

    def __init__(
        self,
        broadcast: Callable[[Mapping[str, Any]], None],
        settle_s: float = SENDER_SETTLE_S,
        coalesce_s: float = SENDER_COALESCE_S,
    ):
        self._broadcast = broadcast
        self._settle_s = settle_s
        self._coalesce_s = coalesce_s
        self._queue: "queue.SimpleQueue[Any]" = queue.SimpleQueue()
        self._thread: Optional[threading.Thread] = None
        self._lock = threading.Lock()
        call_in_forked_child(self._forget_thread)

    def post(self, message: Mapping[str, Any]) -> None:
        """Send ``message`` to every open comm, soon."""
        self.call_soon(lambda: self._broadcast(message))

    def call_soon(self, call: Callable[[], None]) -> None:
        self._queue.put(call)
        # Not Thread.is_alive(): the hook pays for every call. The thread
        # clears ``_thread`` when it ends, and a forked child starts afresh.
        if self._thread is None:
            with self._lock:
                if self._thread is None:
                    self._thread = threading.Thread(target=self._run, name=SENDER_THREAD_NAME, daemon=True)
                    self._thread.start()

    def _run(self) -> None:
        next_round = 0.0
        try:
            while True:
                call = self._queue.get()
                if call is not self._STOP:
                    wait = max(self._settle_s, next_round - time.monotonic())
                    if wait > 0:
                        time.sleep(wait)
                while True:
                    if call is self._STOP:
                        return
                    try:
                        call()
                    except Exception:
                        pass  # the channel reports send failures itself; the recorder its own
                    try:
                        call = self._queue.get_nowait()
                    except queue.Empty:
                        break
                next_round = time.monotonic() + self._coalesce_s
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
