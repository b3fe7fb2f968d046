"""The messages the real helper sends, validated against the protocol's JSON Schema
(protocol/protocol.schema.json), so that the helper cannot drift from it unseen:
a hello, samples (with GPUs read through the fakes), replies and errors of a comm, the
cells messages of executed cells, and a history reply's records and timeline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from cell_harness import MB, Harness
from fakes import FakeCommManager, FakeTorch

from jupyterlab_vram_helper.runtime import Runtime
from jupyterlab_vram_helper.sampling.readers.nvml import NvmlReader
from jupyterlab_vram_helper.sampling.sample import SampleSource, make_sample

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "protocol" / "protocol.schema.json"
SCHEMA: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def schema_errors(message: Any, definition: str | None = None) -> list[str]:
    """What the schema (its root, a message, or one definition) finds wrong with ``message``
    as it travels: JSON, so a tuple reads as an array."""
    schema = SCHEMA if definition is None else {**SCHEMA, "oneOf": [{"$ref": f"#/definitions/{definition}"}]}
    wire = json.loads(json.dumps(message))
    validator = jsonschema.Draft7Validator(schema)
    return sorted(f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(wire))


class FakeEvents:
    def __init__(self) -> None:
        self.callbacks: dict[str, Any] = {}

    def register(self, event: str, cb: Any) -> None:
        self.callbacks.setdefault(event, []).append(cb)

    def unregister(self, event: str, cb: Any) -> None:
        self.callbacks[event].remove(cb)


class FakeShell:
    def __init__(self) -> None:
        self.events = FakeEvents()
        self.execution_count = 1


def no_nvml() -> Any:
    raise ImportError("no pynvml")


@pytest.fixture
def runtime() -> Any:
    manager = FakeCommManager()
    rt = Runtime(source=SampleSource(nvml=NvmlReader(load=no_nvml)), comm_manager=manager, shell=FakeShell())
    rt.install()
    yield rt, manager
    rt.uninstall()


def test_the_validation_finds_what_the_schema_does_not_allow() -> None:
    # Without this, a schema that allowed anything would pass every test below.
    assert schema_errors({"type": "sample", "seq": 1}) != []
    assert schema_errors({"type": "error", "request_id": None, "code": "internal", "message": "m", "extra": 1}) != []
    assert schema_errors({"type": "ping", "request_id": "r"}) == []


def test_a_comms_hello_samples_replies_and_errors_match_the_schema(runtime) -> None:
    rt, manager = runtime
    comm = manager.open({"type": "open", "protocol": 1, "config": {"interval_s": 30, "heartbeat_s": 30}})
    comm.deliver({"type": "ping", "request_id": "a"})
    comm.deliver({"type": "snapshot", "request_id": "b"})
    comm.deliver({"type": "configure", "request_id": "c", "config": {"heartbeat_s": 40}})
    comm.deliver({"type": "configure", "request_id": "d", "config": {"heartbeat_s": 1}})
    comm.deliver({"type": "what", "request_id": "e"})
    comm.deliver({"type": "history", "request_id": "f"})
    types = comm.types()
    for wanted in ("hello", "sample", "reply", "error"):
        assert wanted in types
    for message in comm.sent:
        assert schema_errors(message) == [], message
    history = next(m for m in comm.sent if m.get("request_id") == "f")
    assert schema_errors(history["result"], "HistoryResult") == []
    configured = next(m for m in comm.sent if m.get("request_id") == "c")
    assert schema_errors(configured["result"]["config"], "HelperConfig") == []


def test_a_sample_with_torch_and_nvml_figures_matches_the_schema(cuda, fake_pynvml, two_gpus) -> None:
    two_gpus[1].processes = [(77, 3 * MB)]
    nvml = NvmlReader(pid=77, load=lambda: fake_pynvml, pid_exists=lambda p: True)
    nvml.start()
    source = SampleSource(nvml=nvml, environ={})
    sample = make_sample(source.read(), 3, 1.5, "change")
    assert sample["gpus"] and sample["gpus"][0]["torch"] is not None and sample["gpus"][0]["nvml"] is not None
    assert schema_errors(sample) == []
    assert schema_errors(sample, "SampleMessage") == []


def test_the_cells_messages_and_history_records_match_the_schema(cuda: FakeTorch) -> None:
    h = Harness(torch=cuda)
    h.cell()
    h.cell(error=ValueError("boom"), cell_id=None)
    h.cell(error=KeyboardInterrupt())
    records = h.recorder.history()
    assert len(records) == 3 and records[1]["error"] is not None and records[0]["gpus"]
    for record in records:
        assert schema_errors(record, "CellMemoryRecord") == [], record
    cells = [m for m in h.sent if m["type"] == "cells"]
    assert cells
    for message in cells:
        assert schema_errors(message) == [], message
