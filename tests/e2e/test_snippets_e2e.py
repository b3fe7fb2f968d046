"""The default snippets of schema/plugin.json run cleanly in a real kernel.

Each snippet is rendered the way the frontend renders it when the kernel found
no names (``{{model}}`` -> ``model``, ``{{dataloader}}`` -> ``train_loader``,
``{{eval_dataloader}}`` -> ``val_loader``,
...), then executed in a fresh ipykernel after a setup cell that defines those
names (CPU torch, or TensorFlow). ``top`` snippets run first, before the
framework is imported, as the frontend places them. A snippet passes when its
cell replies ``ok``, raises nothing, and prints no warning or deprecation
(torch.cuda.amp.* and friends warn on stderr).

TensorFlow's C++ start-up log goes to the kernel process's file descriptor 2,
not to the cell's output, so it never reaches these checks.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path
from typing import List

import pytest

from kernel_harness import Kernel
from snippet_cells import DEFAULT_NAMES, SCHEMA, TORCH_SETUP, default_snippets, render, run_cell, run_snippet, snippet

pytestmark = pytest.mark.kernel

# The contract: every one of these must be among the defaults.
CONTRACT_TORCH = (
    "no-grad-eval", "inference-mode", "amp", "bf16-autocast", "grad-accumulation", "grad-checkpointing",
    "allocator-config", "memory-fraction", "memory-summary", "profiler-memory", "batch-size-search",
    "dataloader-pinning", "loss-item",
)
CONTRACT_TENSORFLOW = ("tf-memory-growth", "tf-clear-session", "tf-memory-limit")
# id -> (placement, requiresFresh) the contract fixes
CONTRACT_PLACEMENT = {
    "allocator-config": ("top", "cuda"),
    "tf-memory-growth": ("top", "tensorflow"),
    "tf-memory-limit": ("top", "tensorflow"),
}

OTHER_NAMES = {"model": "net", "optimizer": "opt", "dataloader": "loader_x", "loss": "loss_fn", "scaler": "amp_scaler",
               "eval_dataloader": "loader_val"}
KEBAB = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*\Z")
TF_SETUP = """\
import tensorflow as tf
model = tf.keras.Sequential([tf.keras.Input(shape=(8,)), tf.keras.layers.Dense(2)])
model(tf.zeros((1, 8)))
"""

# Pretend the TensorFlow kernel has one GPU, so that the "top" snippets really
# call set_memory_growth / set_logical_device_configuration; the fakes raise
# what TF raises once its runtime is initialised (tensorflow/python/eager/context.py).
FAKE_TF_GPU = """\
import sys as _sys
import tensorflow as _tf
_ctx = _sys.modules["tensorflow.python.eager.context"]
_PhysicalDevice = type(_tf.config.list_physical_devices("CPU")[0])
_real_list = _tf.config.list_physical_devices

def _list_physical_devices(device_type=None):
    if device_type == "GPU":
        return [_PhysicalDevice(name="/physical_device:GPU:0", device_type="GPU")]
    return _real_list(device_type)

def _refuse(what):
    def f(*args, **kwargs):
        if _ctx.context()._context_handle is not None:
            raise RuntimeError(what + " cannot be modified after being initialized")
        raise AssertionError("this check runs after TensorFlow initialised")
    return f

for _ns in (_tf.config, _tf.config.experimental):
    _ns.list_physical_devices = _list_physical_devices
_tf.config.experimental.set_memory_growth = _refuse("Physical devices")
_tf.config.set_logical_device_configuration = _refuse("Virtual devices")
_tf.config.experimental.set_virtual_device_configuration = _refuse("Virtual devices")
_tf.config.set_visible_devices = _refuse("Visible devices")
_tf.config.experimental.set_visible_devices = _refuse("Visible devices")
"""

HAS_TENSORFLOW = importlib.util.find_spec("tensorflow") is not None


def _cuda_amp_outside_the_fallback(code: str) -> List[str]:
    """Uses of torch.cuda.amp.* other than the GradScaler of PyTorch before 2.3, in the else
    branch of `if hasattr(torch.amp, "GradScaler"):` (never run where torch.amp has one)."""
    tree = ast.parse(code)
    fallback = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) == "hasattr(torch.amp, 'GradScaler')":
            fallback |= {id(n) for branch in node.orelse for n in ast.walk(branch)}
    uses = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and ast.unparse(n).startswith("torch.cuda.amp")]
    return [ast.unparse(n) for n in uses
            if id(n) not in fallback or ast.unparse(n) not in ("torch.cuda.amp", "torch.cuda.amp.GradScaler")]


def _ids(framework: str, contract: tuple) -> List[str]:
    """The contract's ids, then any other default snippet of that framework."""
    extra = [s.get("id") for s in default_snippets() if s.get("framework") == framework and s.get("id") not in contract]
    return list(contract) + [i for i in extra if isinstance(i, str)]


# --- the list itself ----------------------------------------------------------------------


def test_the_defaults_have_every_contract_snippet() -> None:
    ids = [s.get("id") for s in default_snippets()]
    missing = [i for i in CONTRACT_TORCH + CONTRACT_TENSORFLOW if i not in ids]
    assert not missing, f"missing default snippets in {SCHEMA.name}: {missing}"
    assert len(ids) == len(set(ids)), "snippet ids must be unique"


def test_every_default_snippet_is_well_formed() -> None:
    snippets = default_snippets()
    assert snippets
    for s in snippets:
        sid = s.get("id")
        assert isinstance(sid, str) and KEBAB.match(sid), sid
        for key in ("title", "description"):
            assert isinstance(s.get(key), str) and s[key].strip(), (sid, key)
        assert s.get("framework") in ("torch", "tensorflow"), sid
        assert s.get("placement") in ("below", "top"), sid
        assert s.get("requiresFresh", None) in ("cuda", "tensorflow", None), sid
        assert isinstance(s.get("hidden", False), bool), sid
        assert isinstance(s.get("code"), list) and all(isinstance(line, str) for line in s["code"]), sid
        assert all("\n" not in line for line in s["code"]), f"{sid}: one line per array item"
        if sid in CONTRACT_PLACEMENT:
            assert (s["placement"], s.get("requiresFresh")) == CONTRACT_PLACEMENT[sid], sid
        if sid.startswith("tf-"):
            assert s["framework"] == "tensorflow", sid
        code = render(s)
        compile(code, f"<snippet {sid}>", "exec")  # valid Python once rendered
        compile(render(s, OTHER_NAMES), f"<snippet {sid}>", "exec")
        # Modern APIs only: torch.cuda.amp.* is deprecated and warns (but for older torch's fallback).
        assert not _cuda_amp_outside_the_fallback(code), f"{sid}: use torch.amp.*"


@pytest.mark.parametrize("snippet_id", _ids("torch", CONTRACT_TORCH) + _ids("tensorflow", CONTRACT_TENSORFLOW))
def test_a_snippet_uses_its_placeholders_not_the_default_names(snippet_id: str) -> None:
    """Rendered with the user's own names (net, opt, ...), a snippet must not
    still read a default name it never defines (e.g. ``criterion`` written
    literally where ``{{loss}}`` was meant)."""
    code = render(snippet(snippet_id), OTHER_NAMES)
    tree = ast.parse(code)
    stored = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}
    stored |= {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stored.add(node.name)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            stored |= {(a.asname or a.name).split(".")[0] for a in node.names}
    loaded = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    stray = sorted((loaded - stored) & set(DEFAULT_NAMES.values()))
    assert not stray, f"{snippet_id}: reads {stray} literally; use the placeholder ({{{{...}}}}) instead"


# --- running them ------------------------------------------------------------------------


@pytest.mark.parametrize("snippet_id", _ids("torch", CONTRACT_TORCH))
def test_torch_snippet_runs_cleanly(snippet_id: str) -> None:
    s = snippet(snippet_id)
    assert s["framework"] == "torch"
    kernel = run_snippet(s, TORCH_SETUP)
    try:
        # The notebook still works afterwards: a training step with the same names.
        run_cell(
            kernel,
            "for _x, _y in train_loader:\n"
            "    optimizer.zero_grad()\n"
            "    criterion(model(_x.to(next(model.parameters()).device)), _y.to(next(model.parameters()).device)).backward()\n"
            "    optimizer.step()\n"
            "    break\n",
            "a training step after the snippet",
        )
        if snippet_id == "allocator-config":
            # Set before torch was imported, so the allocator will read it at the first CUDA use.
            conf = kernel.eval("__import__('os').environ.get('PYTORCH_CUDA_ALLOC_CONF', '') + "
                               "__import__('os').environ.get('PYTORCH_ALLOC_CONF', '')")
            assert "expandable_segments:True" in conf
    finally:
        kernel.shutdown()


@pytest.mark.skipif(not HAS_TENSORFLOW, reason="tensorflow is not installed (requirements-dev.txt: tensorflow-cpu)")
@pytest.mark.parametrize("snippet_id", _ids("tensorflow", CONTRACT_TENSORFLOW))
def test_tensorflow_snippet_runs_cleanly(snippet_id: str) -> None:
    s = snippet(snippet_id)
    assert s["framework"] == "tensorflow"
    kernel = run_snippet(s, TF_SETUP)
    try:
        run_cell(kernel, "model(tf.zeros((2, 8)))\n", "the model still runs after the snippet")
        if snippet_id == "tf-memory-growth":
            # TF_FORCE_GPU_ALLOW_GROWTH, if the snippet sets it, must be "true" (TF reads it at start).
            value = kernel.eval("__import__('os').environ.get('TF_FORCE_GPU_ALLOW_GROWTH')")
            assert value in (None, "true"), value
    finally:
        kernel.shutdown()


@pytest.mark.skipif(not HAS_TENSORFLOW, reason="tensorflow is not installed (requirements-dev.txt: tensorflow-cpu)")
def test_tensorflow_top_snippets_after_initialisation_say_so_clearly() -> None:
    """Inserted too late (TF already initialised, e.g. the user ignored the
    restart warning): the snippet must catch TF's RuntimeError and print a
    clear message, not a traceback. A fake GPU makes the calls happen on CPU."""
    kernel = Kernel()
    try:
        run_cell(kernel, TF_SETUP, "setup", check_warnings=False)
        reply = kernel.execute(FAKE_TF_GPU, silent=True, store_history=False)
        assert reply["status"] == "ok", reply
        for snippet_id in ("tf-memory-growth", "tf-memory-limit"):
            text = run_cell(kernel, render(snippet(snippet_id)), f"snippet {snippet_id} after TF initialised")
            assert re.search(r"restart", text, re.IGNORECASE), (
                f"{snippet_id}: after initialisation it should tell the user to restart the kernel; printed {text!r}"
            )
    finally:
        kernel.shutdown()


# --- what the snippets do ----------------------------------------------------------------

# A notebook whose names are not the defaults; its loss function is called `loss`,
# the name a training loop is most tempted to give its loss tensor.
USER_NAMES = {"model": "net", "optimizer": "opt", "dataloader": "train_dl", "loss": "loss", "scaler": "grad_scaler",
              "eval_dataloader": "val_dl"}
# TORCH_SETUP with the user's names: each default name replaced by the user's.
USER_SETUP = re.sub(
    r"\b(" + "|".join(DEFAULT_NAMES.values()) + r")\b",
    lambda m: USER_NAMES[next(k for k, v in DEFAULT_NAMES.items() if v == m.group(1))],
    TORCH_SETUP,
)
TORCH_WITH_PLACEHOLDERS = [
    s["id"] for s in default_snippets() if s.get("framework") == "torch" and "{{" in "\n".join(s.get("code", []))
]


@pytest.mark.parametrize("snippet_id", TORCH_WITH_PLACEHOLDERS)
def test_torch_snippet_runs_with_the_users_own_names(snippet_id: str) -> None:
    """Rendered with the notebook's own names and run: the snippet must not rebind any of
    them to something else (a loss function called `loss` stays the loss function)."""
    kernel = Kernel()
    try:
        run_cell(kernel, USER_SETUP, "setup", check_warnings=False)
        run_cell(kernel, render(snippet(snippet_id), USER_NAMES), f"snippet {snippet_id} with the user's names")
        assert kernel.eval("isinstance(loss, nn.CrossEntropyLoss)") is True, f"{snippet_id} rebound `loss`"
        assert kernel.eval("isinstance(opt, torch.optim.AdamW) and isinstance(net, nn.Sequential)") is True
        run_cell(
            kernel,
            "for _x, _y in train_dl:\n"
            "    opt.zero_grad()\n"
            "    loss(net(_x.to(next(net.parameters()).device)), _y.to(next(net.parameters()).device)).backward()\n"
            "    opt.step()\n"
            "    break\n",
            "a training step after the snippet",
        )
    finally:
        kernel.shutdown()


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
        run_cell(kernel, f"_ckpt_mib = _peak_mib({checkpointed!r})", "checkpointed training, profiled",
                 check_warnings=False)
        plain_mib, ckpt_mib = kernel.eval("(_plain_mib, _ckpt_mib)")
        if plain_mib is None:
            pytest.skip("this torch's profiler reports no allocation events")
        # 32 layers: plain keeps about 32 activations of 8 MiB, checkpointed about 6 + 6.
        assert ckpt_mib < 0.75 * plain_mib, f"checkpointed peak {ckpt_mib:.0f} MiB, plain {plain_mib:.0f} MiB"

        # In-place activations, one of them at the start of a segment (10 layers in 3 segments);
        # the checkpointed gradients are those of the plain model.
        run_cell(kernel, "model = deep(5, inplace=True)\noptimizer = torch.optim.SGD(model.parameters(), lr=1e-3)\n"
                         "train_loader = DataLoader(TensorDataset(torch.randn(64, 256), torch.randint(0, 256, (64,))),"
                         " batch_size=16)\n", "an in-place model", check_warnings=False)
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
        run_cell(kernel, TORCH_SETUP + """\
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
""", "setup", check_warnings=False)
        text = run_cell(kernel, render(snippet("grad-checkpointing")), "grad-checkpointing on a custom module")
        assert "not an nn.Sequential" in text and "forward()" in text, text
        run_cell(kernel, "model = PretrainedNet()\noptimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)\n",
                 "a model with gradient_checkpointing_enable")
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
        run_cell(kernel, TORCH_SETUP + "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                 "train_loader = DataLoader(TensorDataset(torch.randn(96, 8), torch.randint(0, 2, (96,))),"
                 " batch_size=16)\n" + RECORD_STEPS, "setup", check_warnings=False)
        run_cell(kernel, render(snippet("grad-accumulation")), "grad-accumulation")
        assert kernel.eval("len(_steps)") == 2
        # The gradient each step got is the mean of its micro-batches' gradients, at the same parameters.
        run_cell(kernel, """\
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
""", "expected gradients")
        assert kernel.eval("_matches") == [True, True]
        # An empty loader trains nothing, and says nothing went wrong.
        run_cell(kernel, "train_loader = DataLoader(TensorDataset(torch.randn(0, 8), torch.randint(0, 2, (0,))),"
                 " batch_size=16)\n_steps.clear()\n", "an empty loader")
        run_cell(kernel, render(snippet("grad-accumulation")), "grad-accumulation on an empty loader")
        assert kernel.eval("len(_steps)") == 0
    finally:
        kernel.shutdown()


# A model with batch norm that "runs out of memory" above some batch size, after its
# forward pass has run (so a try that fails has moved the running statistics too).
FAKE_OOM = """\
model = nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 2))
with torch.no_grad():
    model[1].running_mean.fill_(0.5)
    model[1].running_var.fill_(2.0)
model.eval()
_fits_up_to = 0
_real_forward = model.forward

def _out_of_memory():
    raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB (fake)")

def _forward(x):
    if x.shape[0] > _fits_up_to:
        if x.shape[0] > 1:  # batch norm refuses a single example in training mode
            _real_forward(x)
        _out_of_memory()
    return _real_forward(x)

model.forward = _forward
_buffers_before = {k: v.clone() for k, v in model.named_buffers()}

def _buffers_unchanged():
    return all(torch.equal(_buffers_before[k], v) for k, v in model.named_buffers())
"""


@pytest.mark.parametrize("fits_up_to", [300, 1023, 5000, 0])
def test_batch_size_search_finds_the_exact_size_and_leaves_the_model_as_it_was(fits_up_to: int) -> None:
    kernel = Kernel()
    try:
        run_cell(kernel, TORCH_SETUP + FAKE_OOM + f"_fits_up_to = {fits_up_to}\n", "setup", check_warnings=False)
        text = run_cell(kernel, render(snippet("batch-size-search")), "batch-size-search")
        assert kernel.eval("_buffers_unchanged()") is True, "the search moved batch norm's running statistics"
        assert kernel.eval("model.training") is False, "the search left the model in training mode"
        assert kernel.eval("all(p.grad is None for p in model.parameters())") is True
        if fits_up_to == 0:
            assert "not even one example fits" in text, text
        elif fits_up_to >= 1024:
            assert kernel.eval("batch_size") == 1024
            assert "at least 1024" in text, text
        else:
            assert kernel.eval("batch_size") == fits_up_to
            assert f"largest batch size that fits: {fits_up_to}" in text, text
    finally:
        kernel.shutdown()


# What each kind of out-of-memory raises, in the fake model above.
OUT_OF_MEMORY = {
    # Host RAM, CPU torch: a plain RuntimeError from its allocator.
    "torch-host": "raise RuntimeError(\"[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate "
                  "memory: you tried to allocate 3221225472 bytes. Error code 12 (Cannot allocate memory)\")",
    # Host RAM, NumPy (data preparation in the forward pass): a real MemoryError.
    "numpy": "__import__('numpy').empty(2**62, dtype='uint8')",
    # PyTorch 1.13 to 2.4: torch.cuda.OutOfMemoryError, no torch.OutOfMemoryError.
    "torch-2.4": "raise torch.cuda.OutOfMemoryError('CUDA out of memory. Tried to allocate 2.00 GiB (fake)')",
    # PyTorch before 1.13: neither name; a RuntimeError.
    "torch-1.12": "raise RuntimeError('CUDA out of memory. Tried to allocate 2.00 GiB (fake)')",
}
# An older torch, as far as these names go.
WITHOUT_OOM_NAMES = {
    "torch-2.4": "del torch.OutOfMemoryError\n",
    "torch-1.12": "import torch.cuda\ndel torch.OutOfMemoryError, torch.cuda.OutOfMemoryError\n",
}


@pytest.mark.parametrize("kind", list(OUT_OF_MEMORY))
def test_batch_size_search_halves_on_every_kind_of_out_of_memory(kind: str) -> None:
    """The snippet is offered for host-RAM out-of-memory errors too, and runs on older torch."""
    kernel = Kernel()
    try:
        run_cell(kernel, TORCH_SETUP + FAKE_OOM + "_fits_up_to = 300\n"
                 f"def _out_of_memory():\n    {OUT_OF_MEMORY[kind]}\n" + WITHOUT_OOM_NAMES.get(kind, ""),
                 "setup", check_warnings=False)
        text = run_cell(kernel, render(snippet("batch-size-search")), f"batch-size-search, {kind}")
        assert "largest batch size that fits: 300 (301 does not)" in text, text
        assert kernel.eval("_buffers_unchanged() and not model.training") is True
    finally:
        kernel.shutdown()


def test_batch_size_search_lets_other_errors_through_and_leaves_the_model_as_it_was() -> None:
    kernel = Kernel()
    try:
        run_cell(kernel, TORCH_SETUP + FAKE_OOM + "_fits_up_to = 300\n"
                 "def _out_of_memory():\n    raise RuntimeError('mat1 and mat2 shapes cannot be multiplied')\n",
                 "setup", check_warnings=False)
        reply = kernel.execute(render(snippet("batch-size-search")), timeout=180)
        assert (reply["status"], reply.get("ename")) == ("error", "RuntimeError"), reply
        assert "shapes cannot be multiplied" in reply["evalue"], reply
        assert kernel.eval("_buffers_unchanged() and not model.training") is True
    finally:
        kernel.shutdown()


# Real host out-of-memory on CPU: a cap on the kernel's address space (2 GiB above what it uses)
# and a model that needs 256 MiB of scratch memory per example, from torch or from NumPy.
HUNGRY = """\
import resource
import numpy as np

class Hungry(nn.Module):
    def __init__(self, scratch):
        super().__init__()
        self.scratch = scratch
        self.linear = nn.Linear(8, 2)

    def forward(self, x):
        self.scratch(x.shape[0] << 28)
        return self.linear(x)

def _address_space():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))

_cap = _address_space() + 2 * 2**30
resource.setrlimit(resource.RLIMIT_AS, (_cap, resource.getrlimit(resource.RLIMIT_AS)[1]))
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize("scratch", ["lambda n: torch.empty(n, dtype=torch.uint8)", "lambda n: np.empty(n, np.uint8)"])
def test_batch_size_search_on_a_real_host_out_of_memory(scratch: str) -> None:
    kernel = Kernel()
    try:
        run_cell(kernel, TORCH_SETUP + HUNGRY + f"model = Hungry({scratch})\n", "setup", check_warnings=False)
        text = run_cell(kernel, render(snippet("batch-size-search")), "batch-size-search in capped host memory")
        batch_size, too_large = kernel.eval("(batch_size, too_large)")
        # 2 GiB hold at most 7 examples' scratch (and the search must have run out at least once).
        assert 1 <= batch_size <= 7 and too_large == batch_size + 1, text
        assert f"largest batch size that fits: {batch_size}" in text, text
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
dropping = DataLoader(_data, batch_size=16, drop_last=True, collate_fn=_collate, num_workers=1, timeout=30)
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
        assert kernel.eval("streaming.num_workers") == 0  # each worker would yield the whole stream
        if kernel.eval("__import__('multiprocessing').get_start_method()") == "fork":
            assert kernel.eval("dropping.num_workers > 0 and dropping.persistent_workers") is True
        # Where workers would not start by fork, the loader keeps its number of workers and the cell says why.
        run_cell(kernel, "dropping = DataLoader(_data, batch_size=16, collate_fn=_collate)\n"
                 "__import__('multiprocessing').set_start_method('spawn', force=True)\n", "spawn")
        text = run_cell(kernel, render(snippet("dataloader-pinning"), {**DEFAULT_NAMES, "dataloader": "dropping"}),
                        "dataloader-pinning under spawn")
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
        run_cell(kernel, "torch.cuda.is_bf16_supported = lambda including_emulation=True: including_emulation\n",
                 "a pre-Ampere GPU")
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
    ("2.1.0a0+git1234", "garbage_collection_threshold:0.8", "garbage_collection_threshold:0.8,expandable_segments:True"),
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
            setup = f"import os, sys\nsys.path.insert(0, {str(folder)!r})\nos.environ.pop('PYTORCH_CUDA_ALLOC_CONF', None)\n"
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
        run_cell(kernel, TORCH_SETUP + "import torch.amp, torch.cuda.amp\ndel torch.amp.GradScaler\n"
                 # That fallback warns on today's torch, which has the new one; not on those that lack it.
                 "import warnings\nwarnings.filterwarnings('ignore', r'.*torch\\.cuda\\.amp\\.GradScaler', FutureWarning)\n",
                 "setup", check_warnings=False)
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
        run_cell(kernel, TORCH_SETUP + FAKE_GPU_PROFILER + f"_device_column = {column!r}\n", "setup",
                 check_warnings=False)
        text = run_cell(kernel, render(snippet("profiler-memory")), f"profiler-memory, {column}")
        assert kernel.eval("_Events.sorted_by") == column
        assert text.startswith("aten::mm 4096\naten::relu 512"), text
    finally:
        kernel.shutdown()


def test_allocator_config_keeps_the_options_already_set() -> None:
    kernel = run_snippet(snippet("allocator-config"), TORCH_SETUP,
                         env={"PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:128, expandable_segments:False"})
    try:
        conf = kernel.eval("__import__('os').environ['PYTORCH_CUDA_ALLOC_CONF']")
        assert conf == "max_split_size_mb:128,expandable_segments:True"
    finally:
        kernel.shutdown()
