import threading
import time
from typing import cast

from fakes import FakeComm, in_forked_child, wait_until

from jupyterlab_vram_helper.config import SamplerConfig
from jupyterlab_vram_helper.sampling.sample import Figures
from jupyterlab_vram_helper.sampling.sampler import THREAD_NAME, EmitPolicy, Sampler

MB = 1 << 20


class ScriptedSource:
    """Figures the test sets; counts reads."""

    def __init__(self) -> None:
        self.rss = 100 * MB
        self.reads = 0
        self.fresh_reads = 0  # reads that asked NVML for its process list now
        self.fail = False

    def read(self, fresh_processes: bool = False):
        self.reads += 1
        self.fresh_reads += fresh_processes
        if self.fail:
            raise OSError("boom")
        return {
            "host": {"rss_bytes": self.rss, "total_bytes": None, "available_bytes": None},
            "torch": {"imported": False, "cuda_initialized": False},
            "tensorflow": {"imported": False, "gpus_initialized": False},
            "gpus": [],
            "hidden_gpus": None,
        }

    def now(self) -> float:
        return 1e9


class ListOutlet:
    def __init__(self, *comms) -> None:
        self.comms = list(comms)
        self.errors: list[str] = []

    def targets(self):
        return tuple(self.comms)

    def send(self, target, message) -> None:
        target.send(data=message)

    def report_error(self, message: str) -> None:
        self.errors.append(message)


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def reasons(comm):
    return [m["reason"] for m in comm.sent]


def test_heartbeat_only_when_nothing_changes() -> None:
    clock, source, comm = Clock(), ScriptedSource(), FakeComm()
    s = Sampler(source, ListOutlet(comm), SamplerConfig(interval_s=1, heartbeat_s=5), clock=clock)
    s.emit([comm], "initial")
    for _ in range(12):  # 12 ticks, one per second, figures flat
        clock.t += 1
        assert s.tick() == 1
    assert reasons(comm) == ["initial", "heartbeat", "heartbeat"]  # at t=5 and t=10
    assert source.reads == 13
    # Only the initial sample (an answer to a comm) lists NVML's processes afresh;
    # ticks use the reader's cache. A snapshot and a request's reading do too.
    assert source.fresh_reads == 1
    s.emit([comm], "snapshot")
    s.read_figures()
    assert source.fresh_reads == 3


def test_change_sent_at_the_next_interval_and_resets_heartbeat() -> None:
    clock, source, comm = Clock(), ScriptedSource(), FakeComm()
    s = Sampler(source, ListOutlet(comm), SamplerConfig(interval_s=1, heartbeat_s=5), clock=clock)
    s.emit([comm], "initial")
    clock.t = 1
    source.rss += MB  # exactly the threshold: not a change
    s.tick()
    clock.t = 2
    source.rss += 1
    s.tick()
    assert reasons(comm) == ["initial", "change"]
    for t in (3, 4, 5, 6):
        clock.t = t
        s.tick()
    assert reasons(comm) == ["initial", "change"]  # heartbeat counts from t=2
    clock.t = 7
    s.tick()
    assert reasons(comm) == ["initial", "change", "heartbeat"]
    assert [m["seq"] for m in comm.sent] == [1, 2, 3]


def test_initial_to_a_second_comm_does_not_hide_a_change_from_the_first() -> None:
    clock, source, a, b = Clock(), ScriptedSource(), FakeComm(), FakeComm()
    outlet = ListOutlet(a)
    s = Sampler(source, outlet, SamplerConfig(interval_s=1, heartbeat_s=60), clock=clock)
    s.emit([a], "initial")
    source.rss += 10 * MB
    outlet.comms.append(b)
    s.emit([b], "initial")
    clock.t = 1
    s.tick()
    assert reasons(a) == ["initial", "change"]
    assert reasons(b) == ["initial", "change"]
    assert a.sent[-1]["seq"] == b.sent[-1]["seq"] == 3


class SlowSource(ScriptedSource):
    """A reading that takes 0.25 s of the kernel's clock."""

    def __init__(self) -> None:
        super().__init__()
        self.t = 1000.0

    def read(self, fresh_processes: bool = False):
        self.t += 0.25
        return super().read(fresh_processes)

    def now(self) -> float:
        return self.t


def test_a_samples_time_is_when_its_reading_began() -> None:
    # Figures read before an event must not carry a time after it: the CUDA suite
    # tells samples read before a CUDA context existed from those read after by it.
    source, comm = SlowSource(), FakeComm()
    s = Sampler(source, ListOutlet(comm), SamplerConfig(interval_s=1, heartbeat_s=60), clock=Clock())
    s.emit([comm], "initial")
    source.rss += 10 * MB
    s.tick()
    assert [m["time"] for m in comm.sent] == [1000.0, 1000.25]
    assert source.now() == 1000.5


def test_no_comm_means_no_work() -> None:
    source = ScriptedSource()
    s = Sampler(source, ListOutlet(), SamplerConfig())
    assert s.tick() is None
    assert source.reads == 0


def test_errors_reported_once_and_thread_goes_on() -> None:
    clock, source, comm = Clock(), ScriptedSource(), FakeComm()
    outlet = ListOutlet(comm)
    s = Sampler(source, outlet, SamplerConfig(interval_s=1, heartbeat_s=1), clock=clock)
    source.fail = True
    for _ in range(3):
        clock.t += 1
        assert s.tick() == 1
    assert outlet.errors == ["sampling failed: OSError: boom"]
    assert s.last_error == "sampling failed: OSError: boom"
    source.fail = False
    clock.t += 1
    s.tick()
    assert s.last_error is None and reasons(comm) == ["change"]


def test_a_failing_comm_does_not_stop_the_others() -> None:
    bad, good = FakeComm(fail=True), FakeComm()
    s = Sampler(ScriptedSource(), ListOutlet(bad, good), SamplerConfig())
    s.tick()
    assert reasons(good) == ["change"]


def test_policy_reset() -> None:
    p = EmitPolicy()
    p.record(1.0, cast(Figures, {"a": 1}))  # record keeps figures without reading them
    p.reset()
    assert p.baseline is None and p.last_sent is None


def test_thread_samples_at_interval_idles_without_comms_and_stops() -> None:
    comm = FakeComm()
    outlet = ListOutlet()
    source = ScriptedSource()
    s = Sampler(source, outlet, SamplerConfig(interval_s=0.05, heartbeat_s=0.05))
    s.start()
    s.start()  # idempotent
    try:
        assert [t.name for t in threading.enumerate()].count(THREAD_NAME) == 1
        time.sleep(0.3)
        assert source.reads == 0  # idle: blocked on its wake-up lock
        outlet.comms.append(comm)
        s.wake()
        time.sleep(0.5)
        assert 5 <= len(comm.sent) <= 12, len(comm.sent)
        outlet.comms.clear()
        time.sleep(0.1)
        idle_reads = source.reads
        time.sleep(0.3)
        assert source.reads == idle_reads
    finally:
        s.stop()
    assert not s.running
    assert THREAD_NAME not in [t.name for t in threading.enumerate()]


def test_wakes_during_a_tick_end_the_next_wait_once_and_are_not_lost() -> None:
    comm = FakeComm()
    source = ScriptedSource()
    outlet = ListOutlet(comm)
    s = Sampler(source, outlet, SamplerConfig(interval_s=60, heartbeat_s=60))
    read = source.read

    def read_and_wake(fresh_processes: bool = False):
        if source.reads == 0:
            s.wake()  # e.g. a configure() from the shell thread while the tick runs
            s.wake()  # a second one before the loop waits again: still one wake-up
        return read(fresh_processes)

    source.read = read_and_wake  # type: ignore[method-assign]
    s.start()
    try:
        wait_until(lambda: source.reads >= 2, timeout=2)
        time.sleep(0.3)
        assert source.reads == 2  # the tick, the one its wake-up asked for, then waiting 60 s
        assert outlet.errors == []  # the second wake-up raised nothing
        s.wake()
        wait_until(lambda: source.reads == 3, timeout=2)
    finally:
        s.stop()
    assert not s.running


def test_configure_wakes_the_thread_for_a_shorter_interval() -> None:
    comm = FakeComm()
    s = Sampler(ScriptedSource(), ListOutlet(comm), SamplerConfig(interval_s=60, heartbeat_s=60))
    s.start()
    try:
        time.sleep(0.2)
        assert len(comm.sent) == 1  # first tick, then waiting 60 s
        s.configure({"interval_s": 0.05, "heartbeat_s": 0.05})
        time.sleep(0.4)
        assert len(comm.sent) >= 4
    finally:
        s.stop()


class BlockingSource(ScriptedSource):
    """A reading that hangs until the test lets it go (a driver call that stalls)."""

    def __init__(self) -> None:
        super().__init__()
        self.blocked = threading.Event()
        self.release = threading.Event()

    def read(self, fresh_processes: bool = False):
        if not self.release.is_set():
            self.blocked.set()
            self.release.wait(10)
        return super().read(fresh_processes)


def sampler_threads() -> int:
    return sum(1 for t in threading.enumerate() if t.name == THREAD_NAME)


def test_a_stop_that_times_out_never_leaves_two_loops_running() -> None:
    source = BlockingSource()
    s = Sampler(source, ListOutlet(FakeComm()), SamplerConfig(interval_s=0.05))
    baseline = sampler_threads()
    s.start()
    assert source.blocked.wait(5)
    s.stop(timeout=0.05)  # the loop is stuck in its reading: the join times out
    s.start()
    source.release.set()
    time.sleep(0.5)  # the old reading ends; a dozen intervals for a second loop to show
    assert sampler_threads() - baseline == 1
    assert s.running
    s.stop()
    wait_until(lambda: sampler_threads() == baseline)


def test_a_stop_then_start_before_the_old_loop_noticed_runs_one_loop() -> None:
    source = ScriptedSource()
    s = Sampler(source, ListOutlet(FakeComm()), SamplerConfig(interval_s=0.05))
    baseline = sampler_threads()
    s.start()
    wait_until(lambda: source.reads > 0)
    for _ in range(5):
        s.stop(timeout=0)  # no wait for the thread at all
        s.start()
    time.sleep(0.3)
    assert sampler_threads() - baseline == 1
    s.stop()
    wait_until(lambda: sampler_threads() == baseline)


def test_a_fork_during_a_reading_leaves_the_child_a_free_lock() -> None:
    """A raw os.fork() in a cell, landing while the sampler thread reads: the child's
    requests (an OOM diagnosis, a snapshot) must not wait forever on the parent's lock."""
    sampler = Sampler(ScriptedSource(), ListOutlet())
    with sampler._lock:  # as the sampler thread holds it during a reading
        child = in_forked_child(
            lambda: {"lock_free": sampler._lock.acquire(timeout=2), "thread": sampler._thread is None}
        )
    assert child == {"lock_free": True, "thread": True}
    assert sampler.read_figures()["host"]["rss_bytes"] == 100 * MB  # the parent's lock works as before
