"""estimate_memory end to end: a real kernel with CPU torch, a model, optimizer, loss and batch defined
in a cell, the estimate asked for over the comm, its progress and reply checked against the schema,
the cell output left empty, the kernel still running cells and the model's state unchanged."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from kernel_harness import CellSession
from process_harness import run, session_fixture  # noqa: F401 (the session fixture)

pytestmark = pytest.mark.kernel
pytest.importorskip("torch")

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "protocol" / "protocol.schema.json").read_text())
_ids = itertools.count()

SETUP = """\
import torch, torch.nn as nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(64, 128), nn.BatchNorm1d(128), nn.ReLU(), nn.Linear(128, 10))
opt = torch.optim.Adam(model.parameters())
loss_fn = nn.CrossEntropyLoss()
batch = (torch.randn(16, 64), torch.randint(0, 10, (16,)))
loss_fn(model(batch[0]), batch[1]).backward(); opt.step()
_before = [t.clone() for t in [*model.parameters(), *model.buffers(), *(p.grad for p in model.parameters())]]
_before += [v.clone() for s in opt.state.values() for v in s.values()]
_rng = torch.get_rng_state().clone()
"""
UNCHANGED = """\
_after = [t.clone() for t in [*model.parameters(), *model.buffers(), *(p.grad for p in model.parameters())]]
_after += [v.clone() for s in opt.state.values() for v in s.values()]
assert len(_after) == len(_before) and all(torch.equal(a, b) for a, b in zip(_after, _before))
assert torch.equal(_rng, torch.get_rng_state()) and model.training
"""


def schema_errors(message: Any) -> list[str]:
    return [e.message for e in jsonschema.Draft7Validator(SCHEMA).iter_errors(message)]


def estimate(session: CellSession, **fields: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    rid = f"e{next(_ids)}"
    start = len(session.k.comm_data(session.comm_id))
    answer = session.k.request(session.comm_id, {"type": "estimate_memory", "request_id": rid, **fields}, timeout=120)
    told = [
        d
        for d in session.k.comm_data(session.comm_id)[start:]
        if d.get("type") == "estimate_progress" and d.get("request_id") == rid
    ]
    assert answer["type"] == "reply" and answer["request_type"] == "estimate_memory", answer
    return answer, told


def test_an_estimate_answers_with_progress_prints_nothing_and_leaves_the_model_as_it_was(
    session: CellSession,
) -> None:
    run(session, SETUP)
    outputs = len(session.k.output_messages())
    answer, told = estimate(session, model="model", optimizer="opt", loss="loss_fn", batch="batch")
    assert schema_errors(answer) == [] and all(schema_errors(t) == [] for t in told)
    result = answer["result"]
    assert (result["status"], result["traced_on"], result["state_unchanged"]) == ("estimated", "cpu", True)
    assert result["sample_batch_size"] == 16 and result["rows"] and len(told) >= 5
    assert session.k.output_messages()[outputs:] == []
    run(session, UNCHANGED)


def test_a_missing_name_and_a_kernel_without_torch_are_refused_clearly(session: CellSession) -> None:
    answer, _ = estimate(session, model="model", batch="batch")
    assert schema_errors(answer) == []
    assert answer["result"]["status"] == "refused"
    assert "PyTorch is not imported in this kernel" in answer["result"]["notes"][0]
    run(session, SETUP)
    answer, _ = estimate(session, model="modle", batch="batch")
    assert answer["result"]["status"] == "refused" and "'modle' is not defined" in answer["result"]["notes"][0]
    run(session, "x = 1 + 1")
