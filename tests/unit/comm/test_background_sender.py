"""The thread that runs the per-cell rounds and sends messages, off the kernel's main thread."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

import pytest
from fakes import in_forked_child, wait_until

from jupyterlab_vram_helper.comm.background_sender import SENDER_THREAD_NAME, BackgroundSender


def _timed_calls() -> tuple[list[float], dict[str, float], Callable[[str], Callable[[], None]]]:
    """(when each call ran, when each was queued, a maker of named calls)."""
    starts: list[float] = []
    queued: dict[str, float] = {}

    def work(name: str) -> Callable[[], None]:
        queued[name] = time.monotonic()
        return lambda: starts.append(time.monotonic())

    return starts, queued, work


def test_background_sender_sends_in_order_off_the_calling_thread() -> None:
    got = []
    threads = set()

    def broadcast(message):
        threads.add(threading.current_thread().name)
        got.append(message["n"])

    sender = BackgroundSender(broadcast)
    for n in range(50):
        sender.post({"n": n})
    wait_until(lambda: len(got) == 50)
    sender.stop()
    assert got == list(range(50)) and threads == {SENDER_THREAD_NAME}


def test_background_sender_runs_a_call_one_window_later_with_everything_queued_meanwhile() -> None:
    rounds: list[list[tuple[str, float]]] = []
    round_of: dict[str, int] = {}
    queued: dict[str, float] = {}

    def work(name: str):
        queued[name] = time.monotonic()

        def call() -> None:
            now = time.monotonic()
            # calls run back to back in one round; a new round starts after a pause
            if not rounds or now - rounds[-1][-1][1] > 0.05:
                rounds.append([])
            rounds[-1].append((name, now))
            round_of[name] = len(rounds) - 1

        return call

    sender = BackgroundSender(lambda message: None, window_s=0.2)
    sender.call_soon(work("lone"))
    wait_until(lambda: "lone" in round_of)
    for name in ("a", "b", "c"):  # a burst, well within one window
        sender.call_soon(work(name))
        time.sleep(0.02)
    wait_until(lambda: "c" in round_of)
    sender.call_soon(work("later"))
    wait_until(lambda: "later" in round_of)
    sender.stop()
    assert round_of == {"lone": 0, "a": 1, "b": 1, "c": 1, "later": 2}
    lone_waited = rounds[0][0][1] - queued["lone"]
    assert 0.2 <= lone_waited < 1.0  # one window, not at once
    assert rounds[1][0][1] - queued["a"] >= 0.2  # the burst's first call waited a window
    assert rounds[1][-1][1] - queued["c"] < rounds[1][0][1] - queued["a"]  # and the rest joined it


def test_background_sender_with_no_window_runs_a_call_at_once() -> None:
    got: list[float] = []
    sender = BackgroundSender(lambda message: None, window_s=0)
    queued = time.monotonic()
    sender.call_soon(lambda: got.append(time.monotonic()))
    wait_until(lambda: got)
    sender.stop()
    assert got[0] - queued < 0.5


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_background_sender_works_in_a_forked_child_and_after_a_stop() -> None:
    got = []
    sender = BackgroundSender(lambda message: got.append(message["n"]), window_s=0)
    sender.post({"n": 1})
    wait_until(lambda: got == [1])

    def in_child():  # the child has no sender thread: a new one must start, or the post is lost
        child_got = []
        sender._broadcast = lambda message: child_got.append(message["n"])
        sender.post({"n": 2})
        deadline = time.monotonic() + 5
        while not child_got and time.monotonic() < deadline:
            time.sleep(0.01)
        return child_got

    child_got = in_forked_child(in_child)
    assert child_got == [2]
    sender.stop()
    assert sender._thread is None  # the stopped thread let go of itself
    sender.post({"n": 3})  # and the next post starts a new one
    wait_until(lambda: got == [1, 3])
    sender.stop()


def test_background_sender_spaces_rounds_while_calls_keep_coming() -> None:
    # The spacing is far longer than the window, so that a thread woken late on a busy
    # machine (hundreds of milliseconds) still cannot make one look like the other.
    starts, queued, work = _timed_calls()
    sender = BackgroundSender(lambda message: None, window_s=0.05, spacing_s=1.2)
    sender.call_soon(work("first"))
    wait_until(lambda: len(starts) == 1)
    sender.call_soon(work("streaming"))  # right after a round: waits for the spacing, not one window
    wait_until(lambda: len(starts) == 2)
    time.sleep(2.0)  # a quiet spell well past the next round's time
    sender.call_soon(work("lone"))
    wait_until(lambda: len(starts) == 3)
    sender.stop()
    assert 0.05 <= starts[0] - queued["first"] < 0.9
    assert starts[1] - starts[0] >= 1.2
    assert starts[1] - queued["streaming"] >= 1.0  # not just its own window
    assert 0.05 <= starts[2] - queued["lone"] < 0.9  # a lone call waits one window again


def test_background_sender_sends_a_message_posted_by_its_own_round_at_once() -> None:
    events: list[str] = []
    sender = BackgroundSender(lambda message: events.append(message["n"]), window_s=0)

    def round_() -> None:
        sender.post({"n": "from the round"})
        events.append("after the post")

    sender.call_soon(round_)
    wait_until(lambda: len(events) == 2)
    sender.stop()
    # sent within the round, not queued behind it
    assert events == ["from the round", "after the post"]


def test_background_sender_takes_a_streamed_call_at_the_next_round_without_a_window_of_its_own() -> None:
    starts, queued, work = _timed_calls()
    sender = BackgroundSender(lambda message: None, window_s=1.0, spacing_s=1.2)
    sender.call_soon(work("first"))
    wait_until(lambda: len(starts) == 1)
    sender.call_soon(work("second"))  # right after a round: the next round is spaced
    wait_until(lambda: len(starts) == 2)
    # Rounds now follow each other: the thread sleeps until the next one is
    # due (1.2 s after this one) and takes this call then, ~0.5 s after it
    # came, instead of waking for it and waiting a window (1 s).
    time.sleep(0.7)
    sender.call_soon(work("streamed"))
    wait_until(lambda: len(starts) == 3)
    time.sleep(2.5)  # a quiet spell: the thread waits on the queue again
    sender.call_soon(work("lone"))
    wait_until(lambda: len(starts) == 4)
    sender.stop()
    assert starts[1] - starts[0] >= 1.19
    assert starts[2] - starts[1] >= 1.19  # still spaced
    assert starts[2] - queued["streamed"] < 0.8  # taken at the round's time, not one window after it came
    assert 1.0 <= starts[3] - queued["lone"] < 1.6  # after a quiet spell a call waits its window again


def test_background_sender_tries_again_after_its_thread_could_not_start(monkeypatch: pytest.MonkeyPatch) -> None:
    # A kernel at its cgroup's pids.max: "can't start new thread", once.
    got: list[int] = []
    sender = BackgroundSender(lambda message: got.append(message["n"]), window_s=0)
    real_start = threading.Thread.start
    refusals = [RuntimeError("can't start new thread")]

    def start(thread: threading.Thread) -> None:
        if refusals:
            raise refusals.pop()
        real_start(thread)

    monkeypatch.setattr(threading.Thread, "start", start)
    with pytest.raises(RuntimeError):
        sender.post({"n": 1})
    sender.post({"n": 2})  # the thread starts now, and takes what was queued
    wait_until(lambda: got == [1, 2])
    sender.stop()
