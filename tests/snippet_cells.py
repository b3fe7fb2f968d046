"""The default snippets of schema/plugin.json as cells, rendered the way the
frontend renders them and then run in a real kernel the way a user runs them.

The CPU end-to-end snippet tests and the GPU suite share this module.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from kernel_harness import Kernel

# JLVRAM_SNIPPETS_SCHEMA may name a JSON file of the same shape, so that a
# candidate list can be checked before it goes into the schema.
SCHEMA = Path(
    os.environ.get("JLVRAM_SNIPPETS_SCHEMA") or Path(__file__).resolve().parents[1] / "schema" / "plugin.json"
)

# These are the frontend's default placeholder names, which a snippet gets when
# the kernel found none.
DEFAULT_NAMES = {
    "model": "model",
    "optimizer": "optimizer",
    "dataloader": "train_loader",
    "loss": "criterion",
    "scaler": "scaler",
    "eval_dataloader": "val_loader",
}
PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*\}\}")
WARNING_TEXT = re.compile(r"warning|deprecat", re.IGNORECASE)
# These warnings come from this environment, not from a snippet. Whichever cell
# imports torch first prints them (a top snippet may be that cell), so they are
# removed before the check. The one listed is about the deprecated `pynvml`
# package, a dependency of some tools, which torch.cuda imports when it is
# installed; the helper's own NVML package is nvidia-ml-py.
ENVIRONMENT_WARNINGS = (
    re.compile(r"^.*FutureWarning: The pynvml package is deprecated.*\n(?:[ \t]+.*\n)?", re.MULTILINE),
)

TORCH_SETUP = """\
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
train_loader = DataLoader(TensorDataset(torch.randn(64, 8), torch.randint(0, 2, (64,))), batch_size=16)
val_loader = DataLoader(TensorDataset(torch.randn(32, 8), torch.randint(0, 2, (32,))), batch_size=16)
criterion = nn.CrossEntropyLoss()
"""


def default_snippets() -> list[dict[str, Any]]:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    prop = schema.get("properties", {}).get("snippets", {})
    return list(prop.get("default", []))


def snippet(snippet_id: str) -> dict[str, Any]:
    matches = [s for s in default_snippets() if s.get("id") == snippet_id]
    if not matches:
        pytest.fail(f"default snippet {snippet_id!r} is missing from {SCHEMA.name}")
    return matches[0]


def render(s: dict[str, Any], names: dict[str, str] = DEFAULT_NAMES) -> str:
    """Do what the frontend's renderSnippet does: replace each {{key}} with the chosen name."""
    code = "\n".join(s["code"])
    unknown = sorted({m.group(1) for m in PLACEHOLDER.finditer(code)} - set(names))
    assert not unknown, f"{s['id']}: unknown placeholders {unknown}"
    return PLACEHOLDER.sub(lambda m: names[m.group(1)], code)


def run_cell(kernel: Kernel, code: str, what: str, check_warnings: bool = True) -> str:
    """Execute one cell; fail on an error or a warning in its output. Returns its text output."""
    reply = kernel.execute(code, timeout=180)
    msg_id = reply["_msg_id"]
    mine = [m for m in kernel.iopub if m["parent_header"].get("msg_id") == msg_id]
    errors = [m["content"] for m in mine if m["msg_type"] == "error"]
    streams = [(m["content"]["name"], m["content"]["text"]) for m in mine if m["msg_type"] == "stream"]
    text = "".join(t for _, t in streams)
    stderr = "".join(t for name, t in streams if name == "stderr")
    detail = f"\n--- {what} ---\n{code}\n--- output ---\n{text}"
    assert reply["status"] == "ok", f"{reply.get('ename')}: {reply.get('evalue')}{detail}"
    assert not errors, f"{errors}{detail}"
    assert "Traceback" not in text, detail
    if check_warnings:
        for known in ENVIRONMENT_WARNINGS:
            stderr = known.sub("", stderr)
        assert not WARNING_TEXT.search(stderr), f"a warning on stderr{detail}"
    return text


def run_snippet(s: dict[str, Any], setup: str, env: dict[str, str] | None = None) -> Kernel:
    """Run the snippet in a fresh kernel, in the order a user would, and return the kernel.

    A top snippet runs before the setup, because it must come before torch
    initialises; any other snippet runs after the setup that defines its names.
    """
    kernel = Kernel(env=env)
    try:
        code = render(s)
        if s["placement"] == "top":
            run_cell(kernel, code, f"snippet {s['id']} (first cell)")
            run_cell(kernel, setup, "setup", check_warnings=False)
        else:
            run_cell(kernel, setup, "setup", check_warnings=False)
            run_cell(kernel, code, f"snippet {s['id']}")
    except BaseException:
        kernel.shutdown()
        raise
    return kernel
