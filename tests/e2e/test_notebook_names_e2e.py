"""The ``notebook_names`` request end to end: a real ipykernel, real CPU torch, real TensorFlow."""

from __future__ import annotations

import importlib.util
import itertools
from typing import Any

import pytest
from kernel_harness import Kernel, attach_helper

pytestmark = pytest.mark.kernel

QUIET = {"interval_s": 30.0, "heartbeat_s": 60.0}
_ids = itertools.count()

NO_TORCH: dict[str, list[str]] = {"model": [], "optimizer": [], "dataloader": [], "loss": [], "scaler": []}


def names(kernel: Kernel, comm_id: str) -> dict[str, Any]:
    rid = f"n{next(_ids)}"
    answer = kernel.request(comm_id, {"type": "notebook_names", "request_id": rid}, timeout=30)
    assert answer["type"] == "reply", answer
    assert answer["request_type"] == "notebook_names"
    return answer["result"]


def run(kernel: Kernel, code: str) -> None:
    reply = kernel.execute(code, timeout=120)
    assert reply["status"] == "ok", reply


def test_names_of_a_torch_notebook(kernel: Kernel, bootstrap: str) -> None:
    comm_id = attach_helper(kernel, bootstrap, QUIET)

    # A kernel without torch: nothing found, and the request does not import torch.
    before = names(kernel, comm_id)
    assert {k: before[k] for k in NO_TORCH} == NO_TORCH
    assert before["runtime"] == {
        "torch_imported": False,
        "cuda_initialized": False,
        "tensorflow_imported": False,
        "tensorflow_initialized": False,
    }
    assert kernel.eval("'torch' in __import__('sys').modules") is False

    run(
        kernel,
        "import torch\n"
        "from torch import nn\n"
        "from torch.utils.data import DataLoader, TensorDataset\n"
        "head = nn.Linear(16, 2)\n"
        "model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), head)\n"
        "opt = torch.optim.AdamW(model.parameters())\n"
        "loader = DataLoader(TensorDataset(torch.randn(64, 8), torch.randint(0, 2, (64,))), batch_size=16)\n"
        "criterion = nn.CrossEntropyLoss()\n"
        "scaler = torch.amp.GradScaler('cpu')\n"
        "_hidden_model = nn.Linear(100, 100)\n",
    )
    start = len(kernel.output_messages())
    result = names(kernel, comm_id)
    assert result["model"] == ["model", "head"]  # largest first; _hidden_model is private
    assert result["optimizer"] == ["opt"]
    assert result["dataloader"] == ["loader"]
    assert result["loss"] == ["criterion"]  # a loss is not listed as a model
    assert result["scaler"] == ["scaler"]
    assert result["runtime"] == {
        "torch_imported": True,
        "cuda_initialized": False,
        "tensorflow_imported": False,
        "tensorflow_initialized": False,
    }
    assert kernel.output_messages()[start:] == []  # the request prints nothing

    # Names follow the namespace: a deleted name is gone, a rebound one changes kind.
    run(kernel, "del loader\nopt = None\n")
    result = names(kernel, comm_id)
    assert result["dataloader"] == [] and result["optimizer"] == []

    # No reference kept: the model dies with its names.
    run(kernel, "import weakref, gc\n_r = weakref.ref(model)\ndel model, opt, head\n")
    names(kernel, comm_id)
    assert kernel.eval("(gc.collect(), _r() is None)[1]") is True


@pytest.mark.skipif(importlib.util.find_spec("tensorflow") is None, reason="tensorflow is not installed")
def test_tensorflow_initialized_follows_the_runtime(kernel: Kernel, bootstrap: str) -> None:
    comm_id = attach_helper(kernel, bootstrap, QUIET)
    assert names(kernel, comm_id)["runtime"]["tensorflow_imported"] is False

    run(kernel, "import tensorflow as tf\n")
    state = names(kernel, comm_id)["runtime"]
    assert state["tensorflow_imported"] is True and state["tensorflow_initialized"] is False

    # Listing physical devices does not initialise the runtime (set_memory_growth still works) ...
    run(kernel, "gpus = tf.config.list_physical_devices('GPU')\n")
    assert names(kernel, comm_id)["runtime"]["tensorflow_initialized"] is False
    # ... and the request itself never creates TF's eager context.
    run(kernel, "import sys\n_eager = sys.modules['tensorflow.python.eager.context']\n")
    assert kernel.eval("_eager._context is None or _eager._context._context_handle is None") is True

    # The first op initialises it: from now on set_memory_growth would raise.
    run(kernel, "tf.constant(1)\n")
    assert names(kernel, comm_id)["runtime"]["tensorflow_initialized"] is True
