"""The default snippets of schema/plugin.json: the list is well formed and holds every contract
snippet, and each snippet runs cleanly in a real kernel, with the default names and with the
notebook's own.

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

What particular snippets do: test_snippet_effects_e2e.py, test_batch_size_search_snippet_e2e.py.
"""

from __future__ import annotations

import ast
import importlib.util
import re

import pytest
from kernel_harness import Kernel
from snippet_cells import DEFAULT_NAMES, SCHEMA, TORCH_SETUP, default_snippets, render, run_cell, run_snippet, snippet

pytestmark = pytest.mark.kernel

# The contract: every one of these must be among the defaults.
CONTRACT_TORCH = (
    "no-grad-eval",
    "inference-mode",
    "amp",
    "bf16-autocast",
    "grad-accumulation",
    "grad-checkpointing",
    "allocator-config",
    "memory-fraction",
    "memory-summary",
    "profiler-memory",
    "batch-size-search",
    "dataloader-pinning",
    "loss-item",
)
CONTRACT_TENSORFLOW = ("tf-memory-growth", "tf-clear-session", "tf-memory-limit")
# id -> (placement, requiresFresh) the contract fixes
CONTRACT_PLACEMENT = {
    "allocator-config": ("top", "cuda"),
    "tf-memory-growth": ("top", "tensorflow"),
    "tf-memory-limit": ("top", "tensorflow"),
}

OTHER_NAMES = {
    "model": "net",
    "optimizer": "opt",
    "dataloader": "loader_x",
    "loss": "loss_fn",
    "scaler": "amp_scaler",
    "eval_dataloader": "loader_val",
}
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


def _cuda_amp_outside_the_fallback(code: str) -> list[str]:
    """Uses of torch.cuda.amp.* other than the GradScaler of PyTorch before 2.3, in the else
    branch of `if hasattr(torch.amp, "GradScaler"):` (never run where torch.amp has one)."""
    tree = ast.parse(code)
    fallback = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) == "hasattr(torch.amp, 'GradScaler')":
            fallback |= {id(n) for branch in node.orelse for n in ast.walk(branch)}
    uses = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and ast.unparse(n).startswith("torch.cuda.amp")]
    return [
        ast.unparse(n)
        for n in uses
        if id(n) not in fallback or ast.unparse(n) not in ("torch.cuda.amp", "torch.cuda.amp.GradScaler")
    ]


def _ids(framework: str, contract: tuple) -> list[str]:
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
            "    criterion(model(_x.to(next(model.parameters()).device)), "
            "_y.to(next(model.parameters()).device)).backward()\n"
            "    optimizer.step()\n"
            "    break\n",
            "a training step after the snippet",
        )
        if snippet_id == "allocator-config":
            # Set before torch was imported, so the allocator will read it at the first CUDA use.
            conf = kernel.eval(
                "__import__('os').environ.get('PYTORCH_CUDA_ALLOC_CONF', '') + "
                "__import__('os').environ.get('PYTORCH_ALLOC_CONF', '')"
            )
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


# A notebook whose names are not the defaults; its loss function is called `loss`,
# the name a training loop is most tempted to give its loss tensor.
USER_NAMES = {
    "model": "net",
    "optimizer": "opt",
    "dataloader": "train_dl",
    "loss": "loss",
    "scaler": "grad_scaler",
    "eval_dataloader": "val_dl",
}
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
