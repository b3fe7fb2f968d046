import sys
import threading
from typing import Any

import pytest
from fakes import FakeCommManager

from jupyterlab_vram_helper.runtime import Runtime
from jupyterlab_vram_helper.sampling.readers.nvml import NvmlReader
from jupyterlab_vram_helper.sampling.sample import SampleSource
from jupyterlab_vram_helper.sampling.sampler import THREAD_NAME


class FakeEvents:
    def __init__(self) -> None:
        self.callbacks: dict[str, Any] = {}

    def register(self, event, cb) -> None:
        self.callbacks.setdefault(event, []).append(cb)

    def unregister(self, event, cb) -> None:
        self.callbacks[event].remove(cb)


class FakeShell:
    def __init__(self) -> None:
        self.events = FakeEvents()
        self.execution_count = 1  # no cell runs in these tests: a listing stays current


def no_nvml():
    raise ImportError("no pynvml")


@pytest.fixture
def runtime():
    manager = FakeCommManager()
    rt = Runtime(source=SampleSource(nvml=NvmlReader(load=no_nvml)), comm_manager=manager, shell=FakeShell())
    rt.install()
    yield rt, manager
    rt.uninstall()


def test_install_is_idempotent(runtime) -> None:
    rt, manager = runtime
    rt.install()
    assert list(manager.targets) == ["jupyterlab-vram"]
    assert [t.name for t in threading.enumerate()].count(THREAD_NAME) == 1


def test_open_sends_hello_then_initial(runtime) -> None:
    rt, manager = runtime
    comm = manager.open({"type": "open", "protocol": 1, "config": {"interval_s": 5, "heartbeat_s": 50}})
    assert comm.types()[:2] == ["hello", "sample"]
    hello, initial = comm.sent[:2]
    assert hello["nvml"] == {"available": False, "driver_version": None, "error": "pynvml is not installed"}
    assert hello["config"] == {
        "interval_s": 5.0,
        "change_threshold_bytes": 1048576,
        "heartbeat_s": 50.0,
        "reset_peak_per_cell": True,
        "watch_cluster": True,
        "cluster_interval_s": 2.0,
    }
    assert hello["devices"] == [] and hello["torch"] is None and hello["tensorflow"] is None
    assert initial["reason"] == "initial" and initial["gpus"] == []


def test_nothing_broadcast_while_a_comm_opens_reaches_it_before_its_hello(runtime, monkeypatch) -> None:
    # The sender thread broadcasts a cell's records whenever a round ends:
    # here, while the new comm's hello is being made.
    from jupyterlab_vram_helper.comm import channel as channel_module

    rt, manager = runtime
    made = channel_module.hello_message

    def hello_meanwhile(*args, **kwargs):
        rt.channel.broadcast({"type": "cells", "records": []})
        return made(*args, **kwargs)

    monkeypatch.setattr(channel_module, "hello_message", hello_meanwhile)
    comm = manager.open({"type": "open", "config": {"interval_s": 30, "heartbeat_s": 30}})
    assert comm.types()[:2] == ["hello", "sample"]
    rt.channel.broadcast({"type": "cells", "records": []})
    assert comm.types()[-1] == "cells"  # a member once its hello is out


def test_hello_names_the_record_series_and_a_new_runtime_starts_another(runtime) -> None:
    rt, manager = runtime
    comm = manager.open({"type": "open", "config": {"interval_s": 30, "heartbeat_s": 30}})
    series = comm.sent[0]["record_series"]
    assert series == rt.cells.series and len(series) == 16
    # A second comm of the same helper: the same series (ids go on).
    again = manager.open({"type": "open", "config": {"interval_s": 30, "heartbeat_s": 30}})
    assert again.sent[0]["record_series"] == series
    # The helper delivered anew in the same process: ids start at 1 again, so
    # the series changes though the pid does not.
    other = Runtime(
        source=SampleSource(nvml=NvmlReader(load=no_nvml)), comm_manager=FakeCommManager(), shell=FakeShell()
    )
    assert other.cells.series != series


def test_requests_are_answered_once(runtime) -> None:
    rt, manager = runtime
    comm = manager.open({"type": "open", "config": {"interval_s": 30, "heartbeat_s": 30}})
    n = len(comm.sent)
    comm.deliver({"type": "ping", "request_id": "a"})
    comm.deliver({"type": "snapshot", "request_id": "b"})
    comm.deliver({"type": "configure", "request_id": "c", "config": {"heartbeat_s": 40}})
    comm.deliver({"type": "configure", "request_id": "d", "config": {"heartbeat_s": 1}})
    comm.deliver({"type": "what", "request_id": "e"})
    new = [m for m in comm.sent[n:] if m.get("reason") not in ("change", "heartbeat")]
    assert [(m["type"], m.get("request_id")) for m in new] == [
        ("reply", "a"),
        ("sample", None),
        ("reply", "b"),
        ("reply", "c"),
        ("error", "d"),
        ("error", "e"),
    ]
    assert new[2]["result"] == {"seq": new[1]["seq"]}
    assert new[3]["result"]["config"]["heartbeat_s"] == 40.0
    assert new[4]["code"] == "invalid_config" and new[5]["code"] == "unknown_type"
    assert rt.sampler.config.heartbeat_s == 40.0


def test_a_bug_in_a_handler_is_an_internal_error_not_an_exception(runtime, monkeypatch) -> None:
    rt, manager = runtime
    comm = manager.open({"type": "open"})

    def broken(*a, **k):
        raise KeyError("oops")

    monkeypatch.setattr(rt.sampler, "emit", broken)
    comm.deliver({"type": "snapshot", "request_id": "s"})
    err = comm.sent[-1]
    assert (err["type"], err["code"], err["request_id"]) == ("error", "internal", "s")
    assert "KeyError" in err["message"]


def test_an_interrupt_during_a_request_is_answered_and_the_kernel_goes_on(runtime, monkeypatch) -> None:
    rt, manager = runtime
    comm = manager.open({"type": "open", "config": {"interval_s": 30, "heartbeat_s": 30}})

    def interrupted(*a, **k):
        raise KeyboardInterrupt  # the user pressed "interrupt" during a long inspect

    monkeypatch.setattr(rt.cleanup, "inspect", interrupted)
    comm.deliver({"type": "inspect", "request_id": "i"})  # must not raise
    err = comm.sent[-1]
    assert (err["type"], err["code"], err["request_id"]) == ("error", "interrupted", "i")
    assert "'inspect' request was interrupted" in err["message"]
    comm.deliver({"type": "ping", "request_id": "p"})
    assert comm.sent[-1]["type"] == "reply" and comm.sent[-1]["request_id"] == "p"


def test_a_delete_interrupted_halfway_says_what_it_deleted(runtime, monkeypatch) -> None:
    from jupyterlab_vram_helper.cleanup import cleanup as cleanup_mod

    rt, manager = runtime
    shell = rt._shell
    shell.user_ns = {"a": bytearray(1 << 20), "b": bytearray(1 << 20), "c": bytearray(1 << 20)}
    comm = manager.open({"type": "open", "config": {"interval_s": 30, "heartbeat_s": 30}})
    comm.deliver({"type": "inspect", "request_id": "i"})
    listing_id = comm.sent[-1]["result"]["listing_id"]
    real_detach = cleanup_mod.detach
    calls = []

    def detach_then_interrupt(shell, user_ns, name, expected):
        calls.append(name)
        if len(calls) == 2:
            del user_ns[name]  # the interrupt lands after the name went, before the bookkeeping
            raise KeyboardInterrupt
        return real_detach(shell, user_ns, name, expected)

    monkeypatch.setattr(cleanup_mod, "detach", detach_then_interrupt)
    comm.deliver(
        {
            "type": "delete",
            "request_id": "d",
            "listing_id": listing_id,
            "names": ["a", "b", "c"],
            "hidden": ["output_cache"],
            "free": ["gc"],
        }
    )
    err = comm.sent[-1]
    assert (err["type"], err["code"], err["request_id"]) == ("error", "interrupted", "d")
    assert "deleted a, b; not deleted: c" in err["message"]
    assert "cleared no hidden holder" in err["message"] and "gc may not have run" in err["message"]
    assert set(shell.user_ns) == {"c"}


def test_garbage_open_still_opens(runtime) -> None:
    rt, manager = runtime
    comm = manager.open(b"\x00garbage")
    assert comm.types()[:3] == ["hello", "error", "sample"]
    assert comm.sent[1]["code"] == "malformed"


def test_closed_comm_gets_nothing_and_uninstall_closes_the_rest(runtime) -> None:
    rt, manager = runtime
    a = manager.open({"type": "open"})
    b = manager.open({"type": "open"})
    a.close_cb({})
    assert rt.channel.targets() == (b,)
    rt.uninstall()
    assert b.closed and not a.closed
    assert manager.targets == {}
    assert THREAD_NAME not in [t.name for t in threading.enumerate()]


def test_uninstall_leaves_a_newer_target_alone() -> None:
    manager = FakeCommManager()
    rt = Runtime(source=SampleSource(nvml=NvmlReader(load=no_nvml)), comm_manager=manager, shell=FakeShell())
    rt.install()
    newer = lambda comm, msg: None  # noqa: E731
    manager.register_target("jupyterlab-vram", newer)
    rt.uninstall()
    assert manager.targets == {"jupyterlab-vram": newer}


def test_cell_hooks_registered_and_removed() -> None:
    shell = FakeShell()
    rt = Runtime(source=SampleSource(nvml=NvmlReader(load=no_nvml)), comm_manager=FakeCommManager(), shell=shell)
    calls: list[Any] = []
    rt._cell_hooks.append(("post_run_cell", calls.append))
    rt.install()
    try:
        assert shell.events.callbacks == {
            "pre_run_cell": [rt.cells.pre_run_cell],
            "post_run_cell": [rt.cells.post_run_cell, calls.append],
        }
    finally:
        rt.uninstall()
    assert shell.events.callbacks == {"pre_run_cell": [], "post_run_cell": []}


def test_install_outside_a_kernel_raises_clearly() -> None:
    rt = Runtime(source=SampleSource(nvml=NvmlReader(load=no_nvml)), shell=object())
    with pytest.raises(RuntimeError, match="not running inside an IPython kernel"):
        rt.install()
    assert not rt.sampler.running


def test_package_import_has_no_side_effects() -> None:
    import subprocess

    code = (
        "import sys, threading, pkgutil, importlib; sys.path.insert(0, 'python_helper');"
        "import jupyterlab_vram_helper as h;"
        "[importlib.import_module(m.name) for m in pkgutil.walk_packages(h.__path__, 'jupyterlab_vram_helper.')];"
        "heavy = [m for m in ('torch', 'tensorflow', 'pynvml', 'psutil', 'numpy', 'IPython', 'comm') if m in "
        "sys.modules];"
        "print(heavy, threading.active_count(), h.get_runtime())"
    )
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[] 1 None"
    assert out.stderr == ""


def test_an_open_closes_the_comms_it_replaces_and_no_other(runtime) -> None:
    # A reloaded page (or a reconnect) names the comms it left open: nothing reads them,
    # and each broadcast to them costs as much as to a live one.
    rt, manager = runtime
    config = {"interval_s": 30, "heartbeat_s": 30}
    left, other_tab = manager.open({"type": "open", "config": config}), manager.open({"type": "open", "config": config})
    new = manager.open({"type": "open", "config": config, "replaces": [left.comm_id, "gone-long-ago"]})
    assert left.closed and not other_tab.closed and not new.closed
    assert rt.channel.targets() == (other_tab, new)
    assert "error" not in new.types()
    rt.channel.broadcast({"type": "ping"})
    assert left.sent[-1]["type"] != "ping" and new.sent[-1] == {"type": "ping"}


@pytest.mark.parametrize(
    "replaces",
    ["comm-1", [1, 2], ["x" * 257], ["c"] * 65, {"id": "c"}],
)
def test_a_bad_replaces_is_answered_and_closes_nothing(runtime, replaces) -> None:
    rt, manager = runtime
    config = {"interval_s": 30, "heartbeat_s": 30}
    kept = manager.open({"type": "open", "config": config})
    new = manager.open({"type": "open", "config": {"interval_s": 20, "heartbeat_s": 20}, "replaces": replaces})
    assert not kept.closed and rt.channel.targets() == (kept, new)
    (error,) = [m for m in new.sent if m["type"] == "error"]
    assert (
        error["code"] == "malformed"
        and "field 'replaces'" in error["message"]
        and "no comm was closed" in error["message"]
    )
    assert rt.sampler.config.interval_s == 20  # the rest of the open still counts


def test_an_interrupt_part_way_through_install_takes_back_what_it_registered() -> None:
    """A KeyboardInterrupt landing between the two hooks: nothing stays behind, so the
    next delivery installs one hook of each kind and one sampler thread, not two."""

    class InterruptedEvents(FakeEvents):
        def register(self, event, cb) -> None:
            super().register(event, cb)
            if event == "post_run_cell" and not getattr(self, "interrupted", False):
                self.interrupted = True
                raise KeyboardInterrupt

    shell = FakeShell()
    shell.events = InterruptedEvents()
    manager = FakeCommManager()
    rt = Runtime(source=SampleSource(nvml=NvmlReader(load=no_nvml)), comm_manager=manager, shell=shell)
    with pytest.raises(KeyboardInterrupt):
        rt.install()
    assert not rt.installed
    assert all(callbacks == [] for callbacks in shell.events.callbacks.values())
    assert [t.name for t in threading.enumerate()].count(THREAD_NAME) == 0
    assert list(manager.targets) == []
    rt.install()  # delivered again
    assert {event: len(cbs) for event, cbs in shell.events.callbacks.items()} == {"pre_run_cell": 1, "post_run_cell": 1}
    assert [t.name for t in threading.enumerate()].count(THREAD_NAME) == 1
    rt.uninstall()
