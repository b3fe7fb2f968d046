"""``inspect`` in a real kernel never runs the user's code: a lazy proxy's
``__dict__`` (which would build the model), an overridden ``parameters()``, a
tensor subclass's ``__torch_function__``; and prints nothing."""

from __future__ import annotations

from typing import Any

import pytest
from kernel_harness import Kernel, attach_helper

pytestmark = pytest.mark.kernel

QUIET = {"interval_s": 30.0, "heartbeat_s": 60.0}

SETUP = '''
import torch
made = []

class Model:
    def __init__(self):
        made.append(1)
        print("FACTORY RAN")
        self.w = torch.ones(2_000_000)  # 8 MB

class LazyProxy:
    """A lazy proxy written by hand: its __dict__ is the target's, made on first use."""
    def __init__(self, factory):
        object.__setattr__(self, "_factory", factory)
        object.__setattr__(self, "_target", None)
    def _resolve(self):
        target = object.__getattribute__(self, "_target")
        if target is None:
            target = object.__getattribute__(self, "_factory")()
            object.__setattr__(self, "_target", target)
        return target
    @property
    def __dict__(self):
        return self._resolve().__dict__
    def __getattr__(self, name):
        return getattr(self._resolve(), name)

class Loud(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(10, 10)
    def parameters(self, recurse=True):
        print("PARAMETERS RAN")
        return super().parameters(recurse)

class Traced(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        print("TORCH FUNCTION RAN")
        return super().__torch_function__(func, types, args, kwargs or {})

weights = torch.ones(1000)
loud = Loud()
traced = torch.ones(500).as_subclass(Traced)
'''


def inspect(kernel: Kernel, comm_id: str) -> dict[str, dict[str, Any]]:
    start = len(kernel.output_messages())
    answer = kernel.request(comm_id, {"type": "inspect", "request_id": f"i{start}"}, timeout=60)
    assert answer["type"] == "reply", answer
    kernel.pump(0.3)
    assert kernel.output_messages()[start:] == []  # nothing printed into the notebook
    return {e["name"]: e for e in answer["result"]["entries"]}


@pytest.mark.parametrize("proxy", ["LazyProxy(Model)", "wrapt.LazyObjectProxy(Model)"])
def test_inspect_does_not_build_a_lazy_proxys_model(kernel: Kernel, bootstrap: str, proxy: str) -> None:
    pytest.importorskip("torch")
    if proxy.startswith("wrapt"):
        pytest.importorskip("wrapt")  # not a test requirement: the hand-written proxy always runs
    comm_id = attach_helper(kernel, bootstrap, QUIET)
    reply = kernel.execute(
        SETUP + ("import wrapt\n" if "wrapt" in proxy else "") + f"lazy_model = {proxy}\n", timeout=120
    )
    assert reply["status"] == "ok", reply

    entries = inspect(kernel, comm_id)
    assert kernel.eval("made") == []  # the factory did not run: no model built, nothing allocated
    assert "lazy_model" not in entries  # it holds nothing yet
    assert entries["weights"]["total_bytes"] == 4000
    assert entries["loud"]["total_bytes"] == 440 and "2 params" in entries["loud"]["summary"]
    assert entries["traced"]["total_bytes"] == 2000

    # Once the user's code has made the model, the proxy holds it.
    reply = kernel.execute("lazy_model.w.shape")
    assert reply["status"] == "ok" and kernel.eval("made") == [1]
    entries = inspect(kernel, comm_id)
    assert entries["lazy_model"]["total_bytes"] == 8_000_000
    assert kernel.eval("made") == [1]
