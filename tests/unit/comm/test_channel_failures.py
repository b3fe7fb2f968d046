"""The channel when a request's reads raise a SystemExit, and when a message cannot be
encoded (lone surrogates) or sent at all: every request still gets its answer,
nothing reaches ipykernel, and a name shown with replaced characters deletes nothing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fakes import FakeComm, FakeCommManager
from jupyter_client.session import json_packer

from jupyterlab_vram_helper.comm import channel as channel_module
from jupyterlab_vram_helper.comm.unsendable_text import REPLACED_NAME_REASON, without_surrogates
from jupyterlab_vram_helper.runtime import Runtime
from jupyterlab_vram_helper.sampling.readers.nvml import NvmlReader
from jupyterlab_vram_helper.sampling.sample import SampleSource

QUIET = {"type": "open", "config": {"interval_s": 30, "heartbeat_s": 30}}


class Shell:
    def __init__(self) -> None:
        self.events = None  # no cell hooks: no cell runs here
        self.execution_count = 1  # a listing stays current
        self.user_ns: dict = {}


class PackingComm(FakeComm):
    """A comm that encodes each message as the kernel's session does (and fails where it fails)."""

    def send(self, data: Any = None, **_: Any) -> None:
        json_packer(data)
        super().send(data)


class RepliesTooBig(FakeComm):
    """A comm whose replies never go (as a reply too big to be packed), errors do."""

    def send(self, data: Any = None, **_: Any) -> None:
        if data.get("type") == "reply":
            raise MemoryError
        super().send(data)


def no_nvml():
    raise ImportError("no pynvml")


@pytest.fixture
def runtime() -> Iterator[tuple[Runtime, FakeCommManager]]:
    manager = FakeCommManager()
    rt = Runtime(source=SampleSource(nvml=NvmlReader(load=no_nvml)), comm_manager=manager, shell=Shell())
    rt.install()
    yield rt, manager
    rt.uninstall()


# --- exits raised by what a request calls ----------------------------------------------------


@pytest.mark.parametrize("exit_class", [SystemExit, GeneratorExit])
def test_an_exit_inside_a_request_is_an_internal_error_and_the_kernel_goes_on(runtime, monkeypatch, exit_class) -> None:
    rt, manager = runtime
    comm = manager.open(QUIET)

    def exits(*a, **k):
        raise exit_class(7)  # a user object's __sizeof__ while the listing sizes it

    monkeypatch.setattr(rt.cleanup, "inspect", exits)
    comm.deliver({"type": "inspect", "request_id": "i"})  # must not raise
    err = comm.sent[-1]
    assert (err["type"], err["code"], err["request_id"]) == ("error", "internal", "i")
    assert exit_class.__name__ in err["message"] and rt.channel.last_error == err["message"]
    comm.deliver({"type": "ping", "request_id": "p"})
    assert (comm.sent[-1]["type"], comm.sent[-1]["request_id"]) == ("reply", "p")


def test_an_exit_while_a_comm_opens_is_answered_not_raised(runtime, monkeypatch) -> None:
    rt, manager = runtime

    def exits(*a, **k):
        raise SystemExit(3)

    monkeypatch.setattr(channel_module, "hello_message", exits)
    comm = manager.open(QUIET)  # must not raise
    assert comm.sent[-1]["type"] == "error" and comm.sent[-1]["code"] == "internal"
    assert "SystemExit" in comm.sent[-1]["message"]


# --- messages the packer refuses -------------------------------------------------------------


def test_a_lone_surrogate_in_a_listed_name_is_replaced_and_the_reply_arrives(runtime) -> None:
    rt, manager = runtime
    rt._shell.user_ns.update({"\ud800": bytearray(1 << 20), "kept": bytearray(1 << 20)})
    comm = manager.open(QUIET, PackingComm())
    comm.deliver({"type": "inspect", "request_id": "i"})
    reply = comm.sent[-1]
    assert (reply["type"], reply["request_id"]) == ("reply", "i")
    assert sorted(e["name"] for e in reply["result"]["entries"]) == ["kept", "\ufffd"]
    assert "UnicodeEncodeError" in rt.channel.last_error


@pytest.mark.parametrize("request_id", ["\udfff", "a\ud800b"])
def test_a_request_id_with_a_lone_surrogate_is_answered_under_its_replacement(runtime, request_id) -> None:
    rt, manager = runtime
    comm = manager.open(QUIET, PackingComm())
    comm.deliver({"type": "ping", "request_id": request_id})
    comm.deliver({"type": "what", "request_id": request_id})
    replaced = request_id.replace("\udfff", "\ufffd").replace("\ud800", "\ufffd")
    assert [(m["type"], m["request_id"]) for m in comm.sent[-2:]] == [("reply", replaced), ("error", replaced)]


def test_a_delete_of_a_name_with_a_lone_surrogate_is_answered(runtime) -> None:
    rt, manager = runtime
    # A real replacement character: the listing goes as it is, and its name deletes as any other.
    rt._shell.user_ns["\ufffd"] = bytearray(1 << 20)
    comm = manager.open(QUIET, PackingComm())
    comm.deliver({"type": "inspect", "request_id": "i"})
    listing_id = comm.sent[-1]["result"]["listing_id"]
    comm.deliver(
        {
            "type": "delete",
            "request_id": "d",
            "listing_id": listing_id,
            "names": ["\ud800", "\ufffd"],
            "hidden": [],
            "free": [],
        }
    )
    reply = comm.sent[-1]
    assert (reply["type"], reply["request_id"]) == ("reply", "d")
    assert reply["result"]["refused"] == [{"name": "\ufffd", "reason": "not in the listing"}]  # the "\ud800"
    assert reply["result"]["deleted"] == ["\ufffd"]
    assert rt._shell.user_ns == {}


def test_a_name_shown_with_replaced_characters_deletes_nothing_else(runtime) -> None:
    # Two names the frontend sees alike: one made of a lone surrogate, one the
    # replacement character itself. Neither is deleted by the name as shown.
    rt, manager = runtime
    ns = rt._shell.user_ns
    # F601 is a false alarm here: ruff reads a lone surrogate key as U+FFFD, the replacement character; Python
    # keeps them apart.
    ns.update({"\ud800": bytearray(1 << 20), "\ufffd": bytearray(1 << 20), "gone": bytearray(1 << 20)})  # noqa: F601
    comm = manager.open(QUIET, PackingComm())
    comm.deliver({"type": "inspect", "request_id": "i"})
    listing = comm.sent[-1]["result"]
    assert sorted(e["name"] for e in listing["entries"]) == ["gone", "\ufffd", "\ufffd"]
    comm.deliver(
        {
            "type": "delete",
            "request_id": "d",
            "listing_id": listing["listing_id"],
            "names": ["\ufffd", "gone"],
            "hidden": [],
            "free": [],
        }
    )
    result = comm.sent[-1]["result"]
    assert result["deleted"] == ["gone"]
    assert result["refused"] == [{"name": "\ufffd", "reason": REPLACED_NAME_REASON}]
    assert set(ns) == {"\ud800", "\ufffd"}  # noqa: B033 (two keys: ruff reads a lone surrogate as U+FFFD)


@pytest.mark.parametrize("odd, shown", [("\udc80", "\ufffd"), ("\udcc3\udca9", "\u00e9")])
def test_a_name_the_packer_sends_as_raw_bytes_deletes_nothing_else(runtime, odd, shown) -> None:
    # Surrogates from U+DC80 to U+DCFF pass the packer (surrogateescape) as
    # bytes, which the frontend decodes as U+FFFD, or as a character they encode.
    rt, manager = runtime
    ns = rt._shell.user_ns
    ns.update({odd: bytearray(1 << 20), shown: bytearray(1 << 20)})
    comm = manager.open(QUIET, PackingComm())
    comm.deliver({"type": "inspect", "request_id": "i"})
    comm.deliver(
        {
            "type": "delete",
            "request_id": "d",
            "listing_id": comm.sent[-1]["result"]["listing_id"],
            "names": [shown],
            "hidden": [],
            "free": [],
        }
    )
    assert comm.sent[-1]["result"]["refused"] == [{"name": shown, "reason": REPLACED_NAME_REASON}]
    assert set(ns) == {odd, shown}


def test_broadcasts_and_samples_with_lone_surrogates_go_replaced(runtime) -> None:
    rt, manager = runtime
    comm = manager.open(QUIET, PackingComm())
    rt.channel.broadcast({"type": "cells", "records": [{"error": {"message": "bad \ud800"}}]})
    rt.channel.send(comm, {"type": "sample", "processes": [{"name": "\udfff"}]})
    assert comm.sent[-2]["records"] == [{"error": {"message": "bad \ufffd"}}]
    assert comm.sent[-1]["processes"] == [{"name": "\ufffd"}]


def test_a_reply_that_cannot_be_sent_is_answered_with_an_internal_error(runtime) -> None:
    rt, manager = runtime
    comm = manager.open(QUIET, RepliesTooBig())
    comm.deliver({"type": "ping", "request_id": "p\ud800"})
    err = comm.sent[-1]
    assert (err["type"], err["code"], err["request_id"]) == ("error", "internal", "p\ufffd")
    assert "MemoryError" in err["message"]


def test_a_broadcast_that_cannot_be_sent_is_told_once(runtime) -> None:
    rt, manager = runtime
    comm = manager.open(QUIET, RepliesTooBig())
    n = len(comm.sent)
    for _ in range(3):
        rt.channel.broadcast({"type": "reply", "result": {}})  # no request waits for it
    assert [(m["type"], m["code"], m["request_id"]) for m in comm.sent[n:]] == [("error", "internal", None)]


def test_surrogates_are_replaced_everywhere_and_no_key_is_lost() -> None:
    changed: set = set()
    message = {"\ud800": 1, "\udfff": 2, "\ufffd": 3, "list": ("\ud83d\ude00", ["x\udc80"]), "n": None}  # noqa: F601 (as above)
    clean = without_surrogates(message, changed)
    json_packer(clean)
    assert clean == {"\ufffd (2)": 1, "\ufffd (3)": 2, "\ufffd": 3, "list": ["\U0001f600", ["x\ufffd"]], "n": None}
    assert changed == {"\ufffd", "\ufffd (2)", "\ufffd (3)", "\U0001f600", "x\ufffd"}
    assert without_surrogates(message["n"], changed) is None and message["\ud800"] == 1  # the original kept
