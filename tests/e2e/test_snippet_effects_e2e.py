"""What the other default snippets do, in a real kernel: grad-checkpointing lowers the peak and
keeps the gradients (or says what to do), grad-accumulation averages every virtual batch,
dataloader-pinning keeps how a loader batches, bf16-autocast, allocator-config only where torch
has expandable segments, amp on an older torch, profiler-memory's device column."""

from __future__ import annotations

from pathlib import Path

import pytest
from kernel_harness import Kernel
from snippet_cells import DEFAULT_NAMES, TORCH_SETUP, render, run_cell, run_snippet, snippet

pytestmark = pytest.mark.kernel


# Peak host memory of running some code, from the profiler's allocation events
# (CPU tensors have no allocator statistics of their own).
PEAK_MEMORY = """\
from torch.profiler import ProfilerActivity, profile

def _peak_mib(code):
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        exec(code, globals())
    results = getattr(prof.profiler, "kineto_results", None)
    events = [e for e in results.events() if e.name() == "[memory]"] if results is not None else []
    if not events:
        return None  # this torch does not report allocations this way
    events.sort(key=lambda e: e.start_ns())
    live = peak = 0
    for e in events:
        live += e.nbytes()
        peak = max(peak, live)
    return peak / 2**20
"""
DEEP_SETUP = """\
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
torch.manual_seed(0)

def deep(pairs, inplace=False):
    return nn.Sequential(*[m for _ in range(pairs) for m in (nn.Linear(256, 256), nn.ReLU(inplace=inplace))])

model = deep(16)
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
train_loader = DataLoader(TensorDataset(torch.randn(8192, 256), torch.randint(0, 256, (8192,))), batch_size=8192)
criterion = nn.CrossEntropyLoss()
"""


def test_grad_checkpointing_lowers_the_peak_of_a_sequential_and_keeps_its_gradients() -> None:
    kernel = Kernel()
    try:
        run_cell(kernel, DEEP_SETUP, "setup", check_warnings=False)
        run_cell(kernel, PEAK_MEMORY, "peak memory", check_warnings=False)
        plain = render(snippet("loss-item"))  # the same training loop without checkpointing
        checkpointed = render(snippet("grad-checkpointing"))
        run_cell(kernel, f"_plain_mib = _peak_mib({plain!r})", "plain training, profiled", check_warnings=False)
        run_cell(
            kernel, f"_ckpt_mib = _peak_mib({checkpointed!r})", "checkpointed training, profiled", check_warnings=False
        )
        plain_mib, ckpt_mib = kernel.eval("(_plain_mib, _ckpt_mib)")
        if plain_mib is None:
            pytest.skip("this torch's profiler reports no allocation events")
        # 32 layers: plain keeps about 32 activations of 8 MiB, checkpointed about 6 + 6.
        assert ckpt_mib < 0.75 * plain_mib, f"checkpointed peak {ckpt_mib:.0f} MiB, plain {plain_mib:.0f} MiB"

        # In-place activations, one of them at the start of a segment (10 layers in 3 segments);
        # the checkpointed gradients are those of the plain model.
        run_cell(
            kernel,
            "model = deep(5, inplace=True)\noptimizer = torch.optim.SGD(model.parameters(), lr=1e-3)\n"
            "train_loader = DataLoader(TensorDataset(torch.randn(64, 256), torch.randint(0, 256, (64,))),"
            " batch_size=16)\n",
            "an in-place model",
            check_warnings=False,
        )
        run_cell(kernel, checkpointed, "grad-checkpointing with nn.ReLU(inplace=True)")
        run_cell(
            kernel,
            "_x, _y = next(iter(train_loader))\n"
            "model.zero_grad()\n"
            "criterion(forward_checkpointed(_x), _y).backward()\n"
            "_ckpt_grads = [p.grad.clone() for p in model.parameters()]\n"
            "model.zero_grad()\n"
            "criterion(model(_x), _y).backward()\n"
            "_same = all(torch.allclose(a, p.grad, atol=1e-6) for a, p in zip(_ckpt_grads, model.parameters()))\n",
            "gradients, checkpointed and plain",
        )
        assert kernel.eval("_same") is True
    finally:
        kernel.shutdown()


def test_grad_checkpointing_says_what_to_do_for_a_model_that_is_not_sequential() -> None:
    kernel = Kernel()
    try:
        run_cell(
            kernel,
            TORCH_SETUP
            + """\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))

    def forward(self, x):
        return self.body(x)

class PretrainedNet(Net):  # what a Hugging Face model offers
    def gradient_checkpointing_enable(self, gradient_checkpointing_kwargs=None):
        self.checkpointing = gradient_checkpointing_kwargs

model = Net()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
""",
            "setup",
            check_warnings=False,
        )
        text = run_cell(kernel, render(snippet("grad-checkpointing")), "grad-checkpointing on a custom module")
        assert "not an nn.Sequential" in text and "forward()" in text, text
        run_cell(
            kernel,
            "model = PretrainedNet()\noptimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)\n",
            "a model with gradient_checkpointing_enable",
        )
        text = run_cell(kernel, render(snippet("grad-checkpointing")), "grad-checkpointing on a pretrained model")
        assert "not an nn.Sequential" not in text, text
        assert kernel.eval("model.checkpointing") == {"use_reentrant": False}
    finally:
        kernel.shutdown()


# Every optimizer step records the gradients it was given and the parameters they were computed at.
RECORD_STEPS = """\
_steps = []
_real_step = optimizer.step

def _recording_step(*args, **kwargs):
    _steps.append(([p.detach().clone() for p in model.parameters()], [p.grad.clone() for p in model.parameters()]))
    return _real_step(*args, **kwargs)

optimizer.step = _recording_step
"""


def test_grad_accumulation_averages_every_virtual_batch_the_last_one_too() -> None:
    kernel = Kernel()
    try:
        # 6 micro-batches of 16 with 4 per step: one full virtual batch, then one of 2.
        run_cell(
            kernel,
            TORCH_SETUP + "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "train_loader = DataLoader(TensorDataset(torch.randn(96, 8), torch.randint(0, 2, (96,))),"
            " batch_size=16)\n" + RECORD_STEPS,
            "setup",
            check_warnings=False,
        )
        run_cell(kernel, render(snippet("grad-accumulation")), "grad-accumulation")
        assert kernel.eval("len(_steps)") == 2
        # The gradient each step got is the mean of its micro-batches' gradients, at the same parameters.
        run_cell(
            kernel,
            """\
import copy
_batches = list(train_loader)

def _mean_gradient(params, batches):
    clone = copy.deepcopy(model)
    with torch.no_grad():
        for c, p in zip(clone.parameters(), params):
            c.copy_(p)
    grads = []
    for x, y in batches:
        clone.zero_grad()
        criterion(clone(x), y).backward()
        grads.append([p.grad.clone() for p in clone.parameters()])
    return [torch.stack(g).mean(dim=0) for g in zip(*grads)]

_matches = [
    all(torch.allclose(g, m, atol=1e-6) for g, m in zip(grads, _mean_gradient(params, group)))
    for (params, grads), group in zip(_steps, (_batches[:4], _batches[4:]))
]
""",
            "expected gradients",
        )
        assert kernel.eval("_matches") == [True, True]
        # An empty loader trains nothing, and says nothing went wrong.
        run_cell(
            kernel,
            "train_loader = DataLoader(TensorDataset(torch.randn(0, 8), torch.randint(0, 2, (0,))),"
            " batch_size=16)\n_steps.clear()\n",
            "an empty loader",
        )
        run_cell(kernel, render(snippet("grad-accumulation")), "grad-accumulation on an empty loader")
        assert kernel.eval("len(_steps)") == 0
    finally:
        kernel.shutdown()


# Loaders the snippet must rebuild as they batch: dict batches from a collate_fn, a
# batch sampler, drop_last, an iterable dataset.
LOADERS = """\
from torch.utils.data import IterableDataset

def _collate(batch):
    xs, ys = zip(*batch)
    return {"x": torch.stack(xs), "y": torch.stack(ys)}

class _Stream(IterableDataset):
    def __iter__(self):
        return iter(torch.arange(10.0))

_data = TensorDataset(torch.randn(50, 8), torch.randint(0, 2, (50,)))
by_sampler = DataLoader(_data, batch_sampler=[[0, 1, 2], [3, 4], [5, 6, 7, 8, 9, 10, 11]], collate_fn=_collate)
import inspect as _inspect
_in_order = {"in_order": False} if "in_order" in _inspect.signature(DataLoader).parameters else {}
dropping = DataLoader(_data, batch_size=16, drop_last=True, collate_fn=_collate, num_workers=1, timeout=30,
                      prefetch_factor=4, **_in_order)
streaming = DataLoader(_Stream(), batch_size=4)

def _shapes(loader):
    return [tuple((k, tuple(v.shape)) for k, v in b.items()) if isinstance(b, dict) else tuple(b.shape) for b in loader]

_before = {name: _shapes(globals()[name]) for name in ("by_sampler", "dropping", "streaming")}
"""


def test_dataloader_pinning_keeps_how_the_loader_batches() -> None:
    kernel = Kernel()
    try:
        run_cell(kernel, TORCH_SETUP + LOADERS, "setup", check_warnings=False)
        for name in ("by_sampler", "dropping", "streaming"):
            code = render(snippet("dataloader-pinning"), {**DEFAULT_NAMES, "dataloader": name})
            run_cell(kernel, code, f"dataloader-pinning on {name}")
            assert kernel.eval(f"_shapes({name}) == _before[{name!r}]") is True, kernel.eval(f"_shapes({name})")
            assert kernel.eval(f"{name}.collate_fn is _collate or {name!r} == 'streaming'") is True
        assert kernel.eval("dropping.timeout") == 30
        assert kernel.eval("dropping.prefetch_factor") == 4  # the old workers' tuning kept
        assert kernel.eval("getattr(dropping, 'in_order', False)") is False
        assert kernel.eval("streaming.num_workers") == 0  # each worker would yield the whole stream
        if kernel.eval("__import__('multiprocessing').get_start_method()") == "fork":
            assert kernel.eval("dropping.num_workers > 0 and dropping.persistent_workers") is True
        # Where workers would not start by fork, the loader keeps its number of workers and the cell says why.
        run_cell(
            kernel,
            "dropping = DataLoader(_data, batch_size=16, collate_fn=_collate)\n"
            "__import__('multiprocessing').set_start_method('spawn', force=True)\n",
            "spawn",
        )
        text = run_cell(
            kernel,
            render(snippet("dataloader-pinning"), {**DEFAULT_NAMES, "dataloader": "dropping"}),
            "dataloader-pinning under spawn",
        )
        assert kernel.eval("dropping.num_workers") == 0
        assert "spawn" in text, text
    finally:
        kernel.shutdown()


def test_bf16_autocast_does_not_count_an_emulated_bfloat16() -> None:
    kernel = Kernel()
    try:
        run_cell(kernel, TORCH_SETUP, "setup", check_warnings=False)
        run_cell(kernel, render(snippet("bf16-autocast")), "bf16-autocast")
        # A GPU older than Ampere: bfloat16 only through emulation.
        run_cell(
            kernel,
            "torch.cuda.is_bf16_supported = lambda including_emulation=True: including_emulation\n",
            "a pre-Ampere GPU",
        )
        assert kernel.eval("native_bf16()") is False
        # Older PyTorch: no including_emulation argument, native support only.
        run_cell(kernel, "torch.cuda.is_bf16_supported = lambda: True\n", "an older torch")
        assert kernel.eval("native_bf16()") is True
    finally:
        kernel.shutdown()


def _fake_torch_metadata(root: Path, version: str) -> Path:
    """A folder whose only content says "torch <version> is installed" (metadata, no package)."""
    info = root / version / f"torch-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n", encoding="utf-8")
    return info.parent


# installed torch version, PYTORCH_CUDA_ALLOC_CONF before, after (None: unset)
ALLOCATOR_CASES = [
    ("2.0.1+cu118", "max_split_size_mb:128", "max_split_size_mb:128"),  # no expandable_segments before 2.1
    ("1.13.1", None, None),
    (
        "2.1.0a0+git1234",
        "garbage_collection_threshold:0.8",
        "garbage_collection_threshold:0.8,expandable_segments:True",
    ),
    ("10.0.0", None, "expandable_segments:True"),  # numbers, not strings, compared
    ("2.5.1+cu121", "expandable_segments:True", "expandable_segments:True"),  # not twice
]


def test_allocator_config_sets_expandable_segments_only_where_torch_has_them(tmp_path: Path) -> None:
    """Before 2.1 the option makes every CUDA allocation fail ("Unrecognized CachingAllocator
    option"): the snippet reads the installed version from its metadata, without importing
    torch, and sets nothing there but says why."""
    code = render(snippet("allocator-config"))
    body = [line for line in code.split("\n") if not line.startswith("import torch")]
    assert len(body) == len(code.split("\n")) - 1, "one `import torch`, after the setting"
    kernel = Kernel()
    try:
        assert kernel.eval("'torch' in __import__('sys').modules") is False
        for version, before, after in ALLOCATOR_CASES:
            folder = _fake_torch_metadata(tmp_path, version)
            setup = (
                f"import os, sys\nsys.path.insert(0, {str(folder)!r})\n"
                "os.environ.pop('PYTORCH_CUDA_ALLOC_CONF', None)\n"
            )
            if before is not None:
                setup += f"os.environ['PYTORCH_CUDA_ALLOC_CONF'] = {before!r}\n"
            run_cell(kernel, setup, f"torch {version} installed")
            text = run_cell(kernel, "\n".join(body), f"allocator-config with torch {version}")
            assert kernel.eval("os.environ.get('PYTORCH_CUDA_ALLOC_CONF')") == after, version
            if "expandable_segments" in (after or ""):
                assert text == "", text
            else:
                assert version in text and "max_split_size_mb" in text, text
        assert kernel.eval("'torch' in sys.modules") is False, "the snippet imported torch before the setting"
    finally:
        kernel.shutdown()


def test_amp_on_a_torch_without_torch_amp_gradscaler() -> None:
    """PyTorch before 2.3 has torch.cuda.amp.GradScaler only."""
    kernel = Kernel()
    try:
        run_cell(
            kernel,
            TORCH_SETUP + "import torch.amp, torch.cuda.amp\ndel torch.amp.GradScaler\n"
            # That fallback warns on today's torch, which has the new one; not on those that lack it.
            "import warnings\nwarnings.filterwarnings('ignore', r'.*torch\\.cuda\\.amp\\.GradScaler', FutureWarning)\n",
            "setup",
            check_warnings=False,
        )
        run_cell(kernel, render(snippet("amp")), "amp without torch.amp.GradScaler")
        assert kernel.eval("type(scaler) is torch.cuda.amp.GradScaler and not scaler.is_enabled()") is True
        assert kernel.eval("bool(torch.isfinite(batch_loss))") is True
    finally:
        kernel.shutdown()


# A kernel that believes it has a GPU (tensors and modules stay where they are), whose
# profiler reports the given per-operator memory columns, as torch of that age names them.
FAKE_GPU_PROFILER = """\
import torch
import torch.profiler

class _Event:
    def __init__(self, name, **memory):
        self.key = name
        self.__dict__.update(memory)

class _Events(list):
    sorted_by = None

    def table(self, sort_by=None, row_limit=100):
        type(self).sorted_by = sort_by
        rows = sorted(self, key=lambda event: getattr(event, sort_by), reverse=True)[:row_limit]
        return "\\n".join(f"{event.key} {getattr(event, sort_by)}" for event in rows)

class _Profile:
    def __init__(self, activities=None, profile_memory=False, record_shapes=False):
        assert torch.profiler.ProfilerActivity.CUDA in activities

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        return False

    def key_averages(self):
        return _Events([_Event("aten::mm", **{_device_column: 4096, "self_cpu_memory_usage": 0}),
                        _Event("aten::relu", **{_device_column: 512, "self_cpu_memory_usage": 0})])

torch.profiler.profile = _Profile
torch.cuda.is_available = lambda: True
torch.nn.Module.to = lambda self, *args, **kwargs: self
torch.Tensor.to = lambda self, *args, **kwargs: self
"""


@pytest.mark.parametrize("column", ["self_device_memory_usage", "self_cuda_memory_usage"])
def test_profiler_memory_sorts_by_the_device_column_this_torch_has(column: str) -> None:
    """The per-operator device memory column is self_cuda_memory_usage in older torch."""
    kernel = Kernel()
    try:
        run_cell(
            kernel, TORCH_SETUP + FAKE_GPU_PROFILER + f"_device_column = {column!r}\n", "setup", check_warnings=False
        )
        text = run_cell(kernel, render(snippet("profiler-memory")), f"profiler-memory, {column}")
        assert kernel.eval("_Events.sorted_by") == column
        assert text.startswith("aten::mm 4096\naten::relu 512"), text
    finally:
        kernel.shutdown()


def test_allocator_config_keeps_the_options_already_set() -> None:
    kernel = run_snippet(
        snippet("allocator-config"),
        TORCH_SETUP,
        env={"PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:128, expandable_segments:False"},
    )
    try:
        conf = kernel.eval("__import__('os').environ['PYTORCH_CUDA_ALLOC_CONF']")
        assert conf == "max_split_size_mb:128,expandable_segments:True"
        assert kernel.eval("'PYTORCH_ALLOC_CONF' in __import__('os').environ") is False  # not made up
    finally:
        kernel.shutdown()


def test_allocator_config_also_sets_the_newer_variable_where_the_environment_sets_it() -> None:
    """Where PYTORCH_ALLOC_CONF is set, recent PyTorch may read it instead of
    PYTORCH_CUDA_ALLOC_CONF: the option must be in whichever it reads."""
    kernel = run_snippet(
        snippet("allocator-config"),
        TORCH_SETUP,
        env={"PYTORCH_ALLOC_CONF": "garbage_collection_threshold:0.8,expandable_segments:False"},
    )
    try:
        environ = "__import__('os').environ"
        assert (
            kernel.eval(f"{environ}['PYTORCH_ALLOC_CONF']")
            == "garbage_collection_threshold:0.8,expandable_segments:True"
        )
        assert kernel.eval(f"{environ}['PYTORCH_CUDA_ALLOC_CONF']") == "expandable_segments:True"
    finally:
        kernel.shutdown()


def test_evaluation_snippets_give_the_model_back_in_the_mode_it_was_in() -> None:
    """An evaluation in the middle of training leaves the model training; one of a model kept
    in eval mode leaves it in eval mode (dropout and batch norm behave as the notebook set)."""
    kernel = Kernel()
    try:
        run_cell(kernel, TORCH_SETUP, "setup", check_warnings=False)
        for snippet_id in ("no-grad-eval", "inference-mode"):
            for mode in (True, False):
                run_cell(kernel, f"model.train({mode})", f"model.train({mode})")
                run_cell(kernel, render(snippet(snippet_id)), f"{snippet_id} on a model with training={mode}")
                assert kernel.eval("model.training") is mode, (snippet_id, mode)
        # An empty validation loader: no examples, no ZeroDivisionError.
        run_cell(
            kernel,
            "val_loader = DataLoader(TensorDataset(torch.randn(0, 8), torch.randint(0, 2, (0,))))",
            "an empty loader",
        )
        text = run_cell(kernel, render(snippet("no-grad-eval")), "no-grad-eval on no examples")
        assert "accuracy: 0.000 (0 examples)" in text, text
    finally:
        kernel.shutdown()
