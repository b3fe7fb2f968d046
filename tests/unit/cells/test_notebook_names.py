"""The ``notebook_names`` request: which names a snippet should use, and the runtime state."""

from __future__ import annotations

import gc
import sys
import types
import weakref
from typing import Any

import pytest
from fakes import FakeCommManager, FakeTorch

from jupyterlab_vram_helper.cells import notebook_names as nn_mod
from jupyterlab_vram_helper.cells.notebook_names import NotebookNames, notebook_names, runtime_state
from jupyterlab_vram_helper.protocol import RequestError, parse_request
from jupyterlab_vram_helper.runtime import Runtime
from jupyterlab_vram_helper.sampling.readers.nvml import NvmlReader
from jupyterlab_vram_helper.sampling.sample import SampleSource

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402

KINDS = ("model", "optimizer", "dataloader", "loss", "scaler")


@pytest.fixture
def with_torch(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The real CPU torch back in sys.modules, as in a kernel that imported it."""
    monkeypatch.setitem(sys.modules, "torch", torch)
    return torch


def names_of(ns: dict[Any, Any], hidden: Any = None) -> NotebookNames:
    return notebook_names(ns, hidden)


def a_notebook() -> dict[str, Any]:
    # Built with torch in sys.modules, whatever the test then hides: torch
    # imports submodules lazily (an optimizer imports torch._dynamo), and
    # without "torch" there that would import the package a second time.
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(sys.modules, "torch", torch)
        model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
        head = nn.Linear(16, 2)
        data = TensorDataset(torch.randn(64, 8), torch.randint(0, 2, (64,)))
        return {
            "head": head,  # smaller, defined first
            "model": model,
            "opt": torch.optim.AdamW(model.parameters()),
            "loader": DataLoader(data, batch_size=16),
            "val_loader": DataLoader(data, batch_size=32),
            "criterion": nn.CrossEntropyLoss(),
            "scaler": torch.amp.GradScaler("cpu"),
            "x": torch.zeros(3),
            "n": 3,
            "nn": nn,
        }


def test_each_kind_is_found(with_torch: Any) -> None:
    result = names_of(a_notebook())
    assert result["model"] == ["model", "head"]  # largest first
    assert result["optimizer"] == ["opt"]
    assert result["dataloader"] == ["loader", "val_loader"]  # definition order
    assert result["loss"] == ["criterion"]
    assert result["scaler"] == ["scaler"]
    assert result["runtime"] == {
        "torch_imported": True,
        "cuda_initialized": False,
        "tensorflow_imported": False,
        "tensorflow_initialized": False,
    }
    assert result["batch"] == ["x"]
    assert set(result) == set(KINDS) | {"batch", "runtime"}


class ListLike(list):  # type: ignore[type-arg]
    """A list subclass whose items are never read: only exact containers are opened."""

    def __getitem__(self, index: Any) -> Any:
        raise AssertionError("a user __getitem__ ran")


def test_sample_batches_are_offered_containers_first(with_torch: Any) -> None:
    x, y = torch.zeros(4, 3), torch.zeros(4)
    result = names_of(
        {
            "x": x,
            "y": y,
            "batch": (x, y),
            "pairs": [x, y],
            "encoded": {"input_ids": x, "mask": y},
            "labels": {"a": 1},
            "long": tuple([x] * 9),
            "numbers": (1, 2),
            "odd": ListLike([x]),
            "empty": (),
        }
    )
    assert result["batch"] == ["batch", "pairs", "encoded", "x", "y"]


def test_a_loss_is_not_a_model(with_torch: Any) -> None:
    result = names_of({"criterion": nn.MSELoss(), "weighted": nn.CrossEntropyLoss(weight=torch.ones(2))})
    assert result["model"] == []
    assert result["loss"] == ["criterion", "weighted"]


def test_models_of_equal_size_keep_definition_order(with_torch: Any) -> None:
    ns = {"b": nn.Linear(4, 4), "a": nn.Linear(4, 4), "big": nn.Linear(40, 40), "empty": nn.ReLU()}
    assert names_of(ns)["model"] == ["big", "b", "a", "empty"]


def test_subclasses_count(with_torch: Any) -> None:
    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(2, 2)

    class MyLoader(DataLoader):
        pass

    class Focal(nn.modules.loss._Loss):
        pass

    data = TensorDataset(torch.zeros(4, 2))
    result = names_of({"net": Net(), "dl": MyLoader(data), "focal": Focal()})
    assert result["model"] == ["net"] and result["dataloader"] == ["dl"] and result["loss"] == ["focal"]


def test_the_deprecated_cuda_scaler_is_a_scaler_too(with_torch: Any) -> None:
    with pytest.warns(Warning):  # deprecated spelling, and CUDA is not available here
        old = torch.cuda.amp.GradScaler()
    assert names_of({"old": old})["scaler"] == ["old"]


def test_private_ipython_and_non_string_names_are_skipped(with_torch: Any) -> None:
    model = nn.Linear(2, 2)
    ns = {"_private": model, "__dunder__": model, "_3": model, 7: model, "": model, "mine": model}
    hidden = {"mine": nn.Linear(2, 2)}  # another object under the same name: the user rebound it
    assert names_of(ns, hidden)["model"] == ["mine"]
    assert names_of(ns, {"mine": model})["model"] == []  # put there by IPython


def test_without_torch_everything_is_empty(monkeypatch: pytest.MonkeyPatch) -> None:
    # torch objects exist (the test process has torch) but torch is not in sys.modules:
    # nothing is classified, and torch is not imported again.
    ns = a_notebook()
    result = names_of(ns)
    assert all(result[k] == [] for k in KINDS)  # type: ignore[literal-required]  # KINDS names its keys
    assert result["runtime"] == {
        "torch_imported": False,
        "cuda_initialized": False,
        "tensorflow_imported": False,
        "tensorflow_initialized": False,
    }
    assert "torch" not in sys.modules


def test_an_empty_or_missing_namespace() -> None:
    assert names_of({})["model"] == []
    assert notebook_names(None)["loss"] == []


def test_at_most_20_names_per_kind(with_torch: Any) -> None:
    ns = {f"m{i:02d}": nn.Linear(1, i + 1) for i in range(30)}
    ns.update({f"o{i:02d}": torch.optim.SGD(ns["m00"].parameters(), lr=0.1) for i in range(30)})
    result = names_of(ns)
    assert result["model"] == [f"m{i:02d}" for i in range(29, 9, -1)]  # the 20 largest
    assert result["optimizer"] == [f"o{i:02d}" for i in range(20)]


def test_the_namespace_walk_is_bounded(with_torch: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(nn_mod, "MAX_NAMESPACE_NAMES", 100)
    ns: dict[str, Any] = {f"v{i}": i for i in range(100)}
    ns["late"] = nn.Linear(2, 2)
    assert names_of(ns)["model"] == []
    del ns["v0"]
    assert names_of(ns)["model"] == ["late"]


def test_ipythons_input_history_names_do_not_use_up_the_walk(with_torch: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # A long session: IPython adds an _i<N> for every cell and never removes it.
    monkeypatch.setattr(nn_mod, "MAX_NAMESPACE_NAMES", 100)
    ns: dict[str, Any] = {f"_i{i}": f"x = {i}" for i in range(1000)}
    ns["model"] = nn.Linear(3, 3)
    assert names_of(ns)["model"] == ["model"]


def test_the_parameter_count_is_bounded(with_torch: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(nn_mod, "MAX_PARAMETER_TENSORS", 1)
    # two tensors: 4 + 2 elements; only the first tensor is counted
    ns = {"two": nn.Linear(2, 2), "one": nn.Linear(5, 1, bias=False)}
    assert names_of(ns)["model"] == ["one", "two"]


def test_a_model_that_fails_to_list_its_parameters_is_still_named(with_torch: Any) -> None:
    class Broken(nn.Module):
        def parameters(self, recurse: bool = True) -> Any:
            raise RuntimeError("lazy module not materialised")

    result = names_of({"broken": Broken(), "ok": nn.Linear(1, 1)})
    assert result["model"] == ["ok", "broken"]


def test_types_are_read_with_type_not_dunder_class(with_torch: Any) -> None:
    class Liar:
        @property  # type: ignore[misc]  # a read-only __class__ is the lie under test
        def __class__(self) -> type:  # type: ignore[override]
            return nn.Module

    assert isinstance(Liar(), nn.Module)  # isinstance() believes it
    assert names_of({"liar": Liar()})["model"] == []


def test_no_reference_is_kept(with_torch: Any) -> None:
    ns = a_notebook()
    refs = [weakref.ref(ns[k]) for k in ("model", "opt", "loader", "criterion", "scaler")]
    names_of(ns)
    ns.clear()
    gc.collect()
    assert [r() for r in refs] == [None] * len(refs)


def test_cuda_state_comes_from_torch(fake_torch: FakeTorch) -> None:
    assert runtime_state()["cuda_initialized"] is False
    fake_torch.initialized = True
    state = runtime_state()
    assert state["torch_imported"] and state["cuda_initialized"]
    assert fake_torch.calls == []  # nothing but is_initialized(): no device query


def test_classes_come_only_from_sys_modules() -> None:
    """Fake torch modules: the helper looks classes up where torch defines them."""

    class Module:
        def parameters(self) -> Any:
            return iter(())

    class GradScaler:
        pass

    fake_modules = {
        "torch": types.ModuleType("torch"),
        "torch.nn.modules.module": types.SimpleNamespace(Module=Module),
        # an older torch: only torch.cuda.amp has the scaler
        "torch.cuda.amp.grad_scaler": types.SimpleNamespace(GradScaler=GradScaler),
    }
    result = notebook_names({"m": Module(), "s": GradScaler()}, modules=fake_modules)
    assert result["model"] == ["m"] and result["scaler"] == ["s"] and result["optimizer"] == []
    assert result["runtime"]["torch_imported"] is True
    assert result["runtime"]["cuda_initialized"] is False  # a torch without .cuda: not initialised


# --- TensorFlow state ---------------------------------------------------------------


class FakeContext:
    def __init__(self, handle: Any) -> None:
        self._context_handle = handle


def fake_tensorflow(monkeypatch: pytest.MonkeyPatch, context: Any) -> None:
    monkeypatch.setitem(sys.modules, "tensorflow", types.ModuleType("tensorflow"))
    eager = types.ModuleType("tensorflow.python.eager.context")
    eager._context = context  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tensorflow.python.eager.context", eager)


@pytest.mark.parametrize(
    "context, initialized",
    [(None, False), (FakeContext(None), False), (FakeContext(object()), True)],
    ids=["no eager context yet", "context created, not initialised", "initialised"],
)
def test_tensorflow_state(monkeypatch: pytest.MonkeyPatch, context: Any, initialized: bool) -> None:
    fake_tensorflow(monkeypatch, context)
    state = runtime_state()
    assert state["tensorflow_imported"] is True
    assert state["tensorflow_initialized"] is initialized


def test_tensorflow_state_never_creates_the_context(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_tensorflow(monkeypatch, None)

    def context() -> Any:
        raise AssertionError("context() would create and initialise TF's eager context")

    sys.modules["tensorflow.python.eager.context"].context = context  # type: ignore[attr-defined]
    assert runtime_state()["tensorflow_initialized"] is False


# --- the request, through the channel ------------------------------------------------


def test_parse_request() -> None:
    assert parse_request({"type": "notebook_names", "request_id": "n1"}).type == "notebook_names"
    with pytest.raises(RequestError) as err:
        parse_request({"type": "notebook_names"})
    assert err.value.code == "malformed"


class ShellWithNamespace:
    def __init__(self, user_ns: dict[str, Any]) -> None:
        self.events = None
        self.user_ns = user_ns
        self.user_ns_hidden: dict[str, Any] = {}


def test_request_through_the_channel(with_torch: Any) -> None:
    ns = a_notebook()
    manager = FakeCommManager()
    rt = Runtime(
        source=SampleSource(nvml=NvmlReader(load=lambda: (_ for _ in ()).throw(ImportError("no pynvml")))),
        comm_manager=manager,
        shell=ShellWithNamespace(ns),
    )
    rt.install()
    try:
        comm = manager.open({"type": "open", "config": {"interval_s": 30, "heartbeat_s": 30}})
        n = len(comm.sent)
        comm.deliver({"type": "notebook_names", "request_id": "n1"})
        (reply,) = comm.sent[n:]
        assert reply["type"] == "reply" and reply["request_id"] == "n1"
        assert reply["request_type"] == "notebook_names"
        assert reply["result"]["model"] == ["model", "head"]
        assert reply["result"]["loss"] == ["criterion"]
        assert reply["result"]["runtime"]["torch_imported"] is True
    finally:
        rt.uninstall()
