"""estimate_memory's validation: every bad field is malformed with a message naming it; a good
request gets its defaults; the result and the progress messages match the schema."""

from __future__ import annotations

from typing import Any

import pytest
import torch
import torch.nn as nn
from test_protocol_schema import schema_errors

from jupyterlab_vram_helper.estimate.estimate_request import answer
from jupyterlab_vram_helper.estimate.training_step import estimate_training_step
from jupyterlab_vram_helper.protocol import RequestError, parse_request

pytestmark = pytest.mark.usefixtures("real_torch")
BASE = {"type": "estimate_memory", "request_id": "r", "model": "model", "batch": "x"}


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"model": ""}, "'model'"),
        ({"batch": 3}, "'batch'"),
        ({"optimizer": ["a"]}, "'optimizer'"),
        ({"loss": "x" * 2000}, "'loss'"),
        ({"batch_sizes": []}, "'batch_sizes'"),
        ({"batch_sizes": [0]}, "'batch_sizes'"),
        ({"batch_sizes": list(range(1, 20))}, "'batch_sizes'"),
        ({"margin": 0.9}, "'margin'"),
        ({"margin": True}, "'margin'"),
        ({"device": -1}, "'device'"),
        ({"real_step": "yes"}, "'real_step'"),
        ({"card_bytes": 1 << 20}, "'card_bytes'"),
        ({"card_bytes": 24.5}, "'card_bytes'"),
    ],
)
def test_a_bad_field_is_malformed_with_its_name(fields: dict, named: str) -> None:
    with pytest.raises(RequestError) as raised:
        parse_request({**BASE, **fields})
    assert raised.value.code == "malformed" and named in raised.value.message


def test_a_good_request_gets_its_defaults() -> None:
    request = parse_request({**BASE, "batch_sizes": [8, 2, 8]})
    assert request.args == {
        "model": "model",
        "batch": "x",
        "optimizer": None,
        "loss": None,
        "batch_sizes": [2, 8],
        "margin": 0.1,
        "device": None,
        "card_bytes": None,
        "real_step": False,
    }
    assert schema_errors({**BASE, "batch_sizes": [2, 8]}) == []
    assert parse_request({**BASE, "card_bytes": 24 << 30}).args["card_bytes"] == 24 << 30  # type: ignore[index]


def test_the_answer_and_its_progress_match_the_schema() -> None:
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    ns = {"trainer": type("T", (), {})(), "x": (torch.randn(8, 16), torch.randint(0, 4, (8,)))}
    ns["trainer"].model = model
    ns["opt"] = torch.optim.AdamW(model.parameters())
    ns["crit"] = nn.CrossEntropyLoss()
    told: list = []
    args: Any = parse_request({**BASE, "model": "trainer.model", "optimizer": "opt", "loss": "crit"}).args
    result = answer(ns, args, lambda *a: told.append(a), None)
    assert schema_errors(result, "EstimateMemoryResult") == []
    assert result["status"] == "estimated" and result["names"]["model"] == "trainer.model"
    assert told and all(done < total for _, done, total, *partial in told[:-1])
    assert told[-1][0] == "done" and told[-1][1] == told[-1][2]
    progress = {"type": "estimate_progress", "request_id": "r", "stage": told[0][0], "done": 0, "total": told[0][2]}
    assert schema_errors(progress) == []
    # One message carries the plain step's figures before the remedies are traced.
    (shared,) = [message for message in told if len(message) == 4]
    assert shared[3]["largest_batch_size"] == result["largest_batch_size"]
    assert schema_errors({**progress, "partial": shared[3]}) == []


def test_a_missing_name_is_refused_with_that_name() -> None:
    args: Any = parse_request({**BASE, "model": "trainer.model"}).args
    result = answer({"trainer": object(), "x": torch.zeros(2)}, args, None, None)
    assert result["status"] == "refused" and "no attribute 'model'" in result["notes"][0]
    assert schema_errors(estimate_training_step(object(), torch.zeros(2)), "EstimateMemoryResult") == []


def test_the_models_prints_are_dropped_and_other_threads_output_is_kept(capsys: pytest.CaptureFixture[str]) -> None:
    import threading

    from jupyterlab_vram_helper.estimate.estimate_request import quiet_thread

    other = threading.Event()
    done = threading.Event()

    def background() -> None:
        other.wait(5)
        print("from another thread")
        done.set()

    thread = threading.Thread(target=background)
    thread.start()
    with quiet_thread():
        print("from the traced model")
        other.set()
        assert done.wait(5)
    thread.join()
    out = capsys.readouterr().out
    assert "from another thread" in out and "from the traced model" not in out
