"""The sampler thread, which reads figures every ``interval_s`` seconds and sends samples.

It runs on its own daemon thread so that samples keep flowing while a cell
executes. Comm messages *to* the kernel wait for the cell, but messages *from*
it go out on IOPub, which ipykernel makes safe to use from any thread.

A sample is broadcast only when a figure moved by more than
``change_threshold_bytes``, or a counter, flag or device changed; otherwise
one goes out as a heartbeat after ``heartbeat_s`` of silence. With no open
comm the thread does no work at all: it blocks on its wake-up lock until a
comm opens or it is stopped.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ..config import SamplerConfig
from ..forking import call_in_forked_child
from ..protocol import SampleReason
from .sample import Figures, make_sample, significant_change
from .sample_timeline import SampleTimeline, timeline_columns

# The message shapes in protocol_types.py are needed for annotations only.
if TYPE_CHECKING:
    from ..protocol_types import SampleMessage, TimelineColumns

    class Readings(Protocol):
        """What the sampler reads figures from: a SampleSource (sample.py), or a fake in tests.

        It is declared for type checkers only, because creating a Protocol
        class would cost the bootstrap time.
        """

        def read(self, fresh_processes: bool = False) -> Figures:
            """Every source's figures, with NVML's process list read anew if ``fresh_processes``."""

        def now(self) -> float:
            """The wall-clock time a sample is stamped with."""


THREAD_NAME = "jupyterlab-vram-sampler"


class Outlet(Protocol):
    """Where samples go: the comm channel (channel.py), or a fake in tests."""

    def targets(self) -> Sequence[Hashable]:
        """The open comms, in a stable order."""

    def send(self, target: Hashable, message: Mapping[str, Any]) -> None:
        """Send one message to one target. It may raise, and the sampler catches that."""

    def report_error(self, message: str) -> None:
        """Tell every open comm about an internal error, as far as that is possible."""


class EmitPolicy:
    """Decides, from the last *broadcast*, whether a fresh reading is sent.

    Only samples that reached every open comm become the baseline, because a
    sample sent to one comm (an initial sample or a snapshot) must not hide a
    change from the others.
    """

    def __init__(self) -> None:
        self.baseline: Figures | None = None
        # The monotonic time of the baseline.
        self.last_sent: float | None = None

    def decide(self, now: float, figures: Figures, config: SamplerConfig) -> SampleReason | None:
        if significant_change(self.baseline, figures, config.change_threshold_bytes):
            return "change"
        if self.last_sent is None or now - self.last_sent >= config.heartbeat_s:
            return "heartbeat"
        return None

    def record(self, now: float, figures: Figures) -> None:
        self.baseline = figures
        self.last_sent = now

    def reset(self) -> None:
        self.baseline = None
        self.last_sent = None


class Sampler:
    """The sampler thread, which reads figures at a fixed interval and sends a
    sample when they change or a heartbeat is due."""

    def __init__(
        self,
        source: Readings,
        outlet: Outlet,
        config: SamplerConfig | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self._source = source
        self._outlet = outlet
        self._config = config if config is not None else SamplerConfig()
        self._clock = clock
        self._policy = EmitPolicy()
        self._seq = 0
        # What was sent lately, kept for a frontend that comes later, such as a
        # reloaded page.
        self._timeline = SampleTimeline()
        # The lock serialises reading and sending between the sampler thread and
        # the shell thread (which sends initial samples and snapshots), so that
        # samples are sent in the order of their sequence numbers.
        self._lock = threading.Lock()
        # The current loop's stop flag and wake-up signal. Each start() makes
        # its own, so a loop that a stop() could not wait for, because it was
        # stuck in a reading, still ends when it gets out, whatever start()
        # came meanwhile.
        self._run_state = _RunState()
        self._thread: threading.Thread | None = None
        self.last_error: str | None = None
        self._reported_error: str | None = None
        # These are called with every reading, sent or not, on the reading
        # thread and under the lock. Per-cell accounting keeps its running
        # maxima this way.
        self._observers: list[Callable[[Figures, float], None]] = []
        call_in_forked_child(self._forget_parent_state)

    def _forget_parent_state(self) -> None:
        """Reset the state that a forked child inherits. The parent's sampler
        thread is not there, and a fork during its reading left the lock held
        for good, so a request in the child would wait on it forever."""
        self._lock = threading.Lock()
        self._run_state = _RunState()
        self._run_state.stopped = True
        self._thread = None

    def add_observer(self, observer: Callable[[Figures, float], None]) -> None:
        """Call ``observer(figures, started)`` after each reading, ``started`` being
        ``time.perf_counter()`` when the reading began. The observer must be
        cheap, since it runs on every tick, and it should not raise."""
        self._observers.append(observer)

    def _read(self, fresh_processes: bool = False) -> Figures:
        # A reading takes milliseconds (torch, then NVML), and a cell may start
        # meanwhile. What was read before its start is not its figure, so the
        # observers get the time when the reading began.
        started = time.perf_counter()
        figures = self._source.read(fresh_processes)
        for observer in self._observers:
            try:
                observer(figures, started)
            except Exception:
                pass
        return figures

    def read_figures(self) -> Figures:
        """Take one reading for a request's reply, and send nothing.

        It is taken under the sampler's lock because the source is not
        thread-safe. NVML's process list is read afresh, so that a reply shows
        it as it is at that moment.
        """
        with self._lock:
            return self._source.read(fresh_processes=True)

    # -- configuration ------------------------------------------------------

    @property
    def config(self) -> SamplerConfig:
        return self._config

    def configure(self, partial: Mapping[str, Any]) -> SamplerConfig:
        """Apply a partial config. On a ConfigError it raises and leaves the config unchanged."""
        self._config = self._config.updated(partial)
        # The wake makes a shorter interval take effect at once, not after the
        # old one has passed.
        self.wake()
        return self._config

    def timeline_columns(self) -> TimelineColumns:
        """The charted figures of the samples sent lately, oldest first (see sample_timeline.py)."""
        with self._lock:
            rows = self._timeline.rows()
        return timeline_columns(rows)

    # -- sending ------------------------------------------------------------

    def emit(self, targets: Sequence[Hashable], reason: SampleReason, before: Callable[[], None] | None = None) -> int:
        """Read at once and send one sample to ``targets``, returning its sequence number.

        ``before`` runs under the same lock, so that nothing that the sampler
        thread broadcasts can slip in between. The channel sends ``hello``
        there, so a new comm always sees ``hello`` first, then its ``initial``
        sample.
        """
        with self._lock:
            if before is not None:
                before()
            # Initial and snapshot samples answer a comm or a user, so they
            # show NVML's process list as it is at that moment.
            when = self._source.now()
            return self._emit_locked(targets, reason, self._read(fresh_processes=True), when)

    def _emit_locked(self, targets: Sequence[Hashable], reason: SampleReason, figures: Figures, when: float) -> int:
        """Send ``figures``, whose reading began at ``when``.

        A sample's time is when its reading began, so that figures read before
        an event never carry a time after it.
        """
        self._seq += 1
        sample: SampleMessage = make_sample(figures, self._seq, when, reason)
        self._timeline.add(when, figures["host"], figures["gpus"])
        for target in targets:
            try:
                self._outlet.send(target, sample)
            except Exception:
                # The comm is closing meanwhile, and its close callback
                # removes it.
                pass
        if set(targets) >= set(self._outlet.targets()):
            self._policy.record(self._clock(), figures)
        return self._seq

    def tick(self) -> float | None:
        """Run one step of the loop, and return the seconds until the next, or None to idle."""
        config = self._config
        try:
            with self._lock:
                targets = list(self._outlet.targets())
                if not targets:
                    # The next comm starts from its initial sample, and nothing
                    # is read until then, so the timeline marks a gap.
                    self._policy.reset()
                    self._timeline.mark_gap(self._source.now())
                    return None
                when = self._source.now()
                figures = self._read()
                reason = self._policy.decide(self._clock(), figures, config)
                if reason is not None:
                    self._emit_locked(targets, reason, figures, when)
            self.last_error = None
        except Exception as exc:
            # The thread must never die, and must never print into a cell.
            self._record_error(exc)
        return config.interval_s

    def _record_error(self, exc: BaseException) -> None:
        summary = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        self.last_error = f"sampling failed: {summary}"
        if self.last_error != self._reported_error:
            # Report each distinct failure once, not at every interval.
            self._reported_error = self.last_error
            try:
                self._outlet.report_error(self.last_error)
            except Exception:
                pass

    # -- thread -------------------------------------------------------------

    def start(self) -> None:
        if self._thread is not None and self._thread.is_alive() and not self._run_state.stopped:
            return
        state = self._run_state = _RunState()
        self._thread = threading.Thread(target=self._run, args=(state,), name=THREAD_NAME, daemon=True)
        self._thread.start()

    def wake(self) -> None:
        """End the loop's current wait. It may be called from any thread, and a
        wake during a tick ends the next wait at once."""
        self._run_state.wake_up()

    def stop(self, timeout: float = 2.0) -> None:
        """Stop the loop, waiting up to ``timeout`` for it. A loop still in a reading
        after that ends on its own, because its stop flag stays set whatever
        comes next."""
        state = self._run_state
        state.stopped = True
        state.wake_up()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        self._thread = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _run(self, state: _RunState) -> None:
        wake = state.wake
        while not state.stopped:
            started = self._clock()
            delay = self.tick()
            # Acquiring consumes a wake(). One that came during the tick
            # released the lock already, so it ends this wait at once, and no
            # wake is lost.
            if delay is None:
                wake.acquire()
            else:
                wake.acquire(True, max(0.0, delay - (self._clock() - started)))


class _RunState:
    """The state of one run of the loop. Setting ``stopped`` ends that loop, and only that one."""

    __slots__ = ("stopped", "wake")

    def __init__(self) -> None:
        self.stopped = False
        # The lock is released when the loop is woken. It is a lock rather than
        # an Event because the thread waits on it at every tick, and
        # Lock.acquire(timeout) waits in C, where Event.wait runs
        # Condition.wait's Python (a new lock, a waiter list, three frames).
        # With the caches cold after an idle interval, that was a good part of
        # a tick's CPU.
        self.wake = threading.Lock()
        self.wake.acquire()

    def wake_up(self) -> None:
        try:
            self.wake.release()
        except RuntimeError:
            # The loop is already woken and has not consumed the wake yet.
            pass
