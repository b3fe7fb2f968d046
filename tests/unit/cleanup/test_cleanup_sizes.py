"""Cleanup's size accounting (Sizer): storages shared by views and with NumPy counted once, a
module's parameters, buffers and grads, an optimizer's state, containers opened to a depth,
objects only at the top, and a bounded walk."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from jupyterlab_vram_helper.cleanup.holders import Budget, Classes, Found, Sizer

real_torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")
pytestmark = pytest.mark.usefixtures("real_torch")

MODULES = {
    "torch": real_torch,
    "torch.nn.modules.module": sys.modules["torch.nn.modules.module"],
    "torch.optim.optimizer": sys.modules["torch.optim.optimizer"],
    "numpy": np,
}


def size(obj: Any, depth: int = 2, objects: bool = True) -> Found:
    found = Found()
    Sizer(Classes(MODULES)).walk(obj, found, depth, objects=objects)
    return found


def test_a_tensor_and_its_view_share_one_storage() -> None:
    t = real_torch.ones(1000)
    v = t[:10]
    assert size(t).total == 4000
    assert size(v).storages == size(t).storages  # the view holds the whole storage
    assert size([t, v, t]).total == 4000


def test_a_leaf_tensor_counts_its_grad() -> None:
    p = real_torch.ones(100, requires_grad=True)
    (p * 2).sum().backward()
    found = size(p)
    assert found.total == 800 and found.grads == 1


def test_a_module_counts_parameters_buffers_and_grads() -> None:
    net = real_torch.nn.Sequential(real_torch.nn.Linear(10, 10), real_torch.nn.BatchNorm1d(10))
    net(real_torch.ones(4, 10)).sum().backward()
    found = size(net)
    params = (100 + 10 + 10 + 10) * 4
    buffers = (10 + 10) * 4 + 8  # running mean/var + num_batches_tracked
    assert found.total == 2 * params + buffers
    assert (found.params, found.buffers, found.grads) == (4, 3, 4)


def test_an_optimizer_counts_its_state_not_the_parameters() -> None:
    net = real_torch.nn.Linear(10, 10)
    opt = real_torch.optim.Adam(net.parameters())
    assert size(opt).total == 0
    net(real_torch.ones(1, 10)).sum().backward()
    opt.step()
    found = size(opt)
    assert found.state_tensors == 6  # exp_avg, exp_avg_sq, step per parameter
    assert found.total >= 2 * (110 * 4)


def test_containers_are_opened_to_the_given_depth() -> None:
    t = real_torch.zeros(10)
    nested = {"a": t, "b": [real_torch.zeros(20), (real_torch.zeros(30),)]}
    assert size(nested, depth=0).total == 0
    assert size(nested, depth=1).total == 40
    assert size(nested, depth=2).total == 120
    assert size(nested, depth=3).total == 240
    cyclic: list[Any] = [t]
    cyclic.append(cyclic)
    assert size(cyclic, depth=5).total == 40


def test_numpy_views_and_shared_memory_with_torch() -> None:
    a = np.zeros(1000)
    assert size(a).total == 8000
    assert size(a[::2]).storages == size(a).storages
    t = real_torch.from_numpy(a)
    assert size([a, t]).total == 8000  # one buffer
    n = real_torch.ones(10).numpy()
    assert size(n).total == 40


def test_objects_are_opened_only_at_the_top() -> None:
    class Holder:
        def __init__(self) -> None:
            self.weights = real_torch.zeros(25)

    h = Holder()
    assert size(h, objects=True).total == 100
    assert size([h], objects=False).total == 0


def test_the_walk_is_bounded() -> None:
    big = [real_torch.zeros(1) for _ in range(50)]
    found = Found()
    budget = Budget(items=10)
    Sizer(Classes(MODULES), budget).walk(big, found, 2)
    assert budget.exhausted and found.tensors < 10


def test_without_torch_nothing_is_a_tensor() -> None:
    assert Classes({}).kind(real_torch.zeros(1)) == "skip"
    assert size(real_torch.zeros(1)).total == 4  # with torch
