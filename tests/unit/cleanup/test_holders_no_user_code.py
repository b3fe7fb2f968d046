"""Sizing never runs the user's code: no ``__dict__`` property (a lazy proxy's
factory), no overridden ``__sizeof__``/``__len__``/``__iter__``/``parameters()``,
no ``__torch_function__``, no metaclass hook; and sizes stay what CPython,
NumPy and torch say for objects that override nothing."""

from __future__ import annotations

import array
import collections
import gc
import sys
from typing import Any

import pytest
from cleanup_harness import FakeShell

from jupyterlab_vram_helper.cells.notebook_names import notebook_names
from jupyterlab_vram_helper.cleanup import holder_summaries, holders
from jupyterlab_vram_helper.cleanup.autograd_graph import walk_graphs
from jupyterlab_vram_helper.cleanup.cleanup import Cleanup
from jupyterlab_vram_helper.cleanup.holder_summaries import bytes_summary, tensor_summary
from jupyterlab_vram_helper.cleanup.holders import Classes, Found, Sizer, bytes_storage

torch: Any = pytest.importorskip("torch")
np: Any = pytest.importorskip("numpy")

MB = 1 << 20
calls: list[str] = []  # what user code ran


@pytest.fixture(autouse=True)
def with_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setitem(sys.modules, "numpy", np)
    calls.clear()


def size(obj: Any, depth: int = 3) -> Found:
    found = Found()
    Sizer(Classes()).walk(obj, found, depth, objects=True)
    return found


def entry(result: dict[str, Any], name: str) -> dict[str, Any]:
    [found] = [e for e in result["entries"] if e["name"] == name]
    return found


# --- an instance's __dict__ ----------------------------------------------------------


class Model:
    def __init__(self) -> None:
        calls.append("factory")
        self.w = torch.ones(MB // 4)  # 1 MiB


class SlottedProxy:
    """A lazy proxy whose ``__dict__`` is the target's, made on first use."""

    __slots__ = ("_factory", "_target")

    def __init__(self, factory: Any) -> None:
        self._factory = factory
        self._target = None

    @property
    def __dict__(self) -> Any:  # type: ignore[override]
        calls.append("__dict__")
        if self._target is None:
            self._target = self._factory()
        return self._target.__dict__


class DictProxy:
    """The same with an instance dict of its own, which the property hides."""

    def __init__(self, factory: Any) -> None:
        object.__setattr__(self, "_factory", factory)
        object.__setattr__(self, "_target", None)

    @property  # type: ignore[misc]
    def __dict__(self) -> Any:  # type: ignore[override]
        calls.append("__dict__")
        target = object.__getattribute__(self, "_target")
        if target is None:
            target = object.__getattribute__(self, "_factory")()
            object.__setattr__(self, "_target", target)
        return target.__dict__


@pytest.mark.parametrize("proxy_class", [SlottedProxy, DictProxy])
def test_a_dict_property_is_not_run_and_what_the_proxy_holds_is_counted(proxy_class: Any) -> None:
    proxy = proxy_class(Model)
    assert size(proxy).total == 0 and calls == []  # the model was not built
    assert holders._instance_dict(proxy) is None  # referrers.py's read: nothing, not the target's
    object.__setattr__(proxy, "_target", Model())  # the user's code made it
    calls.clear()
    found = size(proxy)
    assert calls == [] and found.total == MB and found.tensors == 1


def test_a_lazy_object_proxy_from_wrapt_does_not_build_its_object() -> None:
    wrapt = pytest.importorskip("wrapt")
    lazy = wrapt.LazyObjectProxy(Model)
    assert size(lazy).total == 0 and calls == []
    assert holders._instance_dict(lazy) is None
    _ = lazy.w  # the user's code makes it
    calls.clear()
    assert size(lazy).total == MB and calls == []  # now counted: what the proxy wraps


class Meta(type):
    def __getattribute__(cls, name: str) -> Any:
        calls.append(f"Meta.__getattribute__({name})")
        return type.__getattribute__(cls, name)

    def __hash__(cls) -> int:
        calls.append("Meta.__hash__")
        return id(cls)

    def __eq__(cls, other: Any) -> bool:
        calls.append("Meta.__eq__")
        return cls is other


def test_a_metaclass_is_never_asked_and_plain_objects_show_their_attributes() -> None:
    Holder = Meta("Holder", (), {"__slots__": ("t", "__dict__")})
    holder = Holder()
    holder.t = torch.ones(100)
    holder.u = torch.ones(100)
    calls.clear()
    found = size(holder)
    assert calls == [] and found.total == 800 and found.tensors == 2

    class Plain:
        def __init__(self) -> None:
            self.t = torch.ones(100)

    class Slotted:
        __slots__ = ("t", "__dict__")

        def __init__(self) -> None:
            self.t = torch.ones(200)
            self.u = np.ones(50)

    class Failure(Exception):
        pass

    err = Failure("oom")
    err.batch = torch.ones(300)  # type: ignore[attr-defined]
    assert size(Plain()).total == 400
    assert size(Slotted()).total == 800 + 400
    assert size(err).total == 1200
    plain = Plain()
    assert holders._instance_dict(plain) is vars(plain)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="attributes kept inline since Python 3.11")
def test_an_object_that_keeps_its_attributes_inline_gets_no_dict_made_by_the_walk() -> None:
    # vars() would make (and keep) a dict: ~100 bytes more, and slower attribute reads.
    class Trainer:
        def __init__(self) -> None:
            self.weights = torch.ones(100)
            self.steps = 3

    trainer = Trainer()
    assert not [r for r in gc.get_referents(trainer) if type(r) is dict]  # inline, as made
    found = size(trainer)
    assert found.total == 400 and found.tensors == 1
    assert not [r for r in gc.get_referents(trainer) if type(r) is dict]  # still inline
    vars(trainer)  # the user's code makes the dict: read through it as before
    assert size(trainer).total == 400


# --- sizes, lengths, items ----------------------------------------------------------------


class NoisyBytes(bytearray):
    def __sizeof__(self) -> int:
        calls.append("__sizeof__")
        return 10**9

    def __len__(self) -> int:
        calls.append("__len__")
        print("LEN CALLED")
        return 5


class PlainBytes(bytearray):
    pass


class PlainArray(array.array):  # type: ignore[type-arg]
    pass


def test_bytes_are_sized_by_the_builtin_not_by_an_override() -> None:
    import array

    noisy = NoisyBytes(100_000)
    key, nbytes = bytes_storage(noisy)
    assert nbytes == sys.getsizeof(PlainBytes(100_000))  # what CPython reports without the override
    assert bytes_summary(noisy) == "NoisyBytes[100,000]"
    assert calls == []
    # objects that override nothing: exactly sys.getsizeof / the buffer
    for obj in (b"x" * 70_000, bytearray(70_000), PlainBytes(70_000), bytes(0)):
        assert bytes_storage(obj)[1] == sys.getsizeof(obj), type(obj)
    samples = PlainArray("d", bytes(80_000))
    assert bytes_storage(samples) == (("cpu", samples.buffer_info()[0]), 80_000)
    assert bytes_summary(array.array("h", bytes(10))) == "array[5]"
    view = memoryview(noisy)
    assert bytes_storage(view) == (key, nbytes)  # a view counts what it views, once
    assert calls == []


def test_a_sizeof_that_raises_system_exit_costs_nothing(cleanup: Cleanup, shell: FakeShell) -> None:
    class Exiting(bytearray):
        def __sizeof__(self) -> int:
            raise SystemExit(7)

    shell.user_ns.update({"eb": Exiting(100_000), "t": torch.ones(1000)})
    result = cleanup.inspect()
    assert entry(result, "t")["total_bytes"] == 4000
    assert entry(result, "eb")["total_bytes"] == sys.getsizeof(PlainBytes(100_000))


def test_system_exit_while_sizing_one_object_costs_its_own_count_only(monkeypatch: pytest.MonkeyPatch) -> None:
    def exits(b: Any) -> Any:
        raise SystemExit(3)

    monkeypatch.setattr(holders, "bytes_storage", exits)
    found = size([bytes(MB), torch.ones(100), {"more": torch.ones(50)}])
    assert found.total == 600 and found.tensors == 2

    def interrupted(b: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(holders, "bytes_storage", interrupted)
    with pytest.raises(KeyboardInterrupt):  # the user's Ctrl-C still stops it
        size([bytes(MB)])


def test_container_subclasses_are_read_by_the_builtins_code() -> None:
    class NoisySet(set):
        def __iter__(self) -> Any:
            calls.append("set.__iter__")
            return iter([torch.ones(10**5)])  # not what it holds

    class NoisyFrozen(frozenset):
        def __iter__(self) -> Any:
            calls.append("frozenset.__iter__")
            return iter(())

    class NoisyList(list):
        def __iter__(self) -> Any:
            calls.append("list.__iter__")
            return iter(())

        def __getitem__(self, i: Any) -> Any:
            calls.append("list.__getitem__")
            return []

    class NoisyDict(dict):
        def values(self) -> Any:
            calls.append("dict.values")
            return []

    class ClassLiar(tuple):
        @property  # type: ignore[misc]  # a read-only __class__ is the lie under test
        def __class__(self) -> Any:  # type: ignore[override]
            calls.append("__class__")
            return dict

    t = torch.ones(100)
    assert size(NoisySet([t])).total == 400
    assert size(NoisyFrozen([t])).total == 400
    assert size(NoisyList([t, t])).total == 400
    assert size(NoisyDict(a=t)).total == 400
    assert size(ClassLiar((t,))).total == 400
    assert calls == []
    # the plain builtins
    for obj in ([t], (t,), {"a": t}, {t}, frozenset([t]), collections.deque([t], maxlen=3)):
        assert size(obj).total == 400, type(obj)


# --- numpy arrays --------------------------------------------------------------------------


def test_an_ndarray_subclass_is_sized_by_numpy_not_by_its_properties() -> None:
    class Lying(np.ndarray):
        @property
        def nbytes(self) -> int:  # type: ignore[override]
            calls.append("nbytes")
            return 10**12

        @property
        def base(self) -> Any:  # type: ignore[override]
            calls.append("base")
            return None

    a = np.ones(1000).view(Lying)
    found = size(a)
    assert calls == [] and found.total == 8000 and found.arrays == 1
    assert holder_summaries.array_summary(a) == "float64[1000] cpu (view)"
    plain = np.ones((10, 20), dtype=np.float32)
    assert size(plain).total == plain.nbytes == 800
    assert size(plain[2:5]).total == 800  # a view counts its whole array


# --- tensors -------------------------------------------------------------------------------


class Recording(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        calls.append("__torch_function__:" + getattr(func, "__name__", str(func)))
        return super().__torch_function__(func, types, args, kwargs or {})

    def untyped_storage(self) -> Any:  # type: ignore[override]
        calls.append("untyped_storage")
        return super().untyped_storage()


class RecordingMode(torch.overrides.TorchFunctionMode):
    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        calls.append("mode:" + getattr(func, "__name__", str(func)))
        return func(*args, **(kwargs or {}))


@pytest.mark.filterwarnings("ignore:Sparse invariant checks")
def test_a_tensor_subclass_is_read_without_its_torch_function() -> None:
    leaf = torch.ones(1000, requires_grad=True)
    sub = (leaf * 2).as_subclass(Recording)  # holds a graph
    param = torch.ones(500).as_subclass(Recording).requires_grad_()
    param.grad = torch.ones(500)
    calls.clear()
    found = size([sub, param])
    assert calls == []
    assert found.total == 4000 + 2000 + 2000 and found.grads == 1 and found.graph_tensors == 1
    assert tensor_summary(sub) == "float32[1000] cpu"
    walk = walk_graphs(found.graph_roots, found.graph_tensors)
    assert walk.nodes >= 1 and calls == []
    # tensors that override nothing
    t = torch.ones(250, 4)
    assert size(t).total == t.untyped_storage().nbytes() == 4000
    assert size([t[:10], t]).total == 4000  # a view shares its storage
    coo = torch.sparse_coo_tensor(torch.tensor([[0, 1]]), torch.tensor([1.0, 2.0]), (100_000,))
    assert size(coo).total == 2 * 8 + 2 * 4  # int64 indices + float32 values


def test_a_torch_function_mode_does_not_run_while_sizing() -> None:
    t = torch.ones(1000, requires_grad=True)
    model = torch.nn.Linear(10, 10)
    with RecordingMode():
        found = size([t, model, np.ones(10)])
        summary = tensor_summary(t)
    assert calls == []
    assert found.total == 4000 + 440 + 80 and summary == "float32[1000] cpu"


# --- modules and optimizers ----------------------------------------------------------------


class Overriding(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = torch.nn.Linear(10, 10)
        self.b = torch.nn.Linear(10, 10, bias=False)
        self.b.weight = self.a.weight  # shared: counted once
        self.norm = torch.nn.BatchNorm1d(10)
        self.inner = torch.nn.Sequential(torch.nn.Linear(10, 5), self.a)  # a module twice

    def parameters(self, recurse: bool = True) -> Any:
        calls.append("parameters")
        print("PARAMS CALLED")
        return iter(())

    def buffers(self, recurse: bool = True) -> Any:
        calls.append("buffers")
        return iter(())

    def named_modules(self, *args: Any, **kwargs: Any) -> Any:
        calls.append("named_modules")
        return iter(())


def test_a_module_is_sized_from_its_dicts_not_by_its_overrides() -> None:
    model = Overriding()
    found = size(model)
    assert calls == []
    # a (weight, bias; b shares the weight, inner repeats a), norm (weight, bias), inner[0] (weight, bias)
    assert found.params == 6 and found.buffers == 3  # norm's running mean and var, its batch count
    assert found.total == (100 + 10 + 10 + 10 + 50 + 5) * 4 + (10 + 10) * 4 + 8
    plain = torch.nn.Sequential(torch.nn.Linear(10, 10), torch.nn.BatchNorm1d(10))
    found = size(plain)
    assert (found.params, found.buffers) == (len(list(plain.parameters())), len(list(plain.buffers()))) == (4, 3)


def test_the_models_parameter_count_does_not_call_parameters() -> None:
    model = Overriding()
    small = torch.nn.Linear(2, 2)
    result = notebook_names({"small": small, "model": model})
    assert calls == []
    assert result["model"] == ["model", "small"]  # 185 elements against 6


def test_an_optimizer_is_read_from_its_instance_dict() -> None:
    class Lying(torch.optim.SGD):
        @property
        def state(self) -> Any:  # type: ignore[override]
            calls.append("state")
            return self.__dict__["state"]

        @state.setter
        def state(self, value: Any) -> None:
            self.__dict__["state"] = value

    net = torch.nn.Linear(10, 10)
    opt = Lying(net.parameters(), lr=0.1, momentum=0.9)
    net(torch.ones(1, 10)).sum().backward()
    opt.step()
    calls.clear()
    found = size(opt)
    assert calls == [] and found.state_tensors == 2 and found.total == 440  # momentum buffers


# --- the autograd graph --------------------------------------------------------------------


def test_what_a_pack_hook_returned_is_not_asked_whether_it_is_a_tensor() -> None:
    class Packed:
        def __init__(self, t: Any) -> None:
            self.t = t

        def __getattr__(self, name: str) -> Any:
            calls.append(f"__getattr__({name})")
            raise AttributeError(name)

    x = torch.ones(100, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(Packed, lambda p: p.t):
        y = (x * x).sum()
    found = size(y)
    walk = walk_graphs(found.graph_roots, found.graph_tensors)
    assert calls == [] and walk.packed_by_hooks >= 1
