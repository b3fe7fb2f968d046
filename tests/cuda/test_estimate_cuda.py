"""The memory estimate against the card: for every reference model, the predicted
training peak against ``torch.cuda.max_memory_allocated`` of real steps, and the
recommended batch size against the true largest found by real steps; and an
estimate of a CPU model creates no CUDA context.

The GPU work runs in child processes (tests/cuda/estimate_on_gpu.py): the test
process never initialises CUDA, and the child's per-process memory cap, which
makes the card small enough for the true largest to be found in seconds, dies
with it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from estimate_kit import Bracket, accuracy_row, recommendation_share, share_within
from gpu_helpers import MemoryHolder, MiB, Nvml

pytestmark = [pytest.mark.cuda]

ROOT = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).resolve().parent / "estimate_on_gpu.py"
# The child's card: small enough that a search for the true largest costs a few GiB per try.
CAP_GIB = 12.0
MARGIN = 0.1
TOLERANCE_PERCENT = 10.0
WITHIN_SHARE = 0.9
RECOMMENDED_SHARE = 0.85
CHILD_TIMEOUT_S = 130
REFERENCE_MODEL_COUNT = 8  # tests/estimate_reference_models.py
# No new search for a true largest starts after this, so that the child ends within its timeout.
SEARCH_DEADLINE_S = 90


def child_env() -> dict[str, str]:
    """This environment, with the helper's source tree after any PYTHONPATH already set (which then wins)."""
    paths = [os.environ.get("PYTHONPATH", ""), str(ROOT / "python_helper")]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}


def run_child(out: Path) -> tuple[dict[str, Any], str]:
    """The child's figures (what it wrote before any timeout) and its last output lines."""
    command = [
        sys.executable,
        str(CHILD),
        str(out),
        "--cap-gib",
        str(CAP_GIB),
        "--margin",
        str(MARGIN),
        "--deadline-s",
        str(SEARCH_DEADLINE_S),
    ]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=CHILD_TIMEOUT_S, env=child_env())
        tail = (done.stdout + done.stderr)[-3000:]
    except subprocess.TimeoutExpired as exc:
        tail = f"the child ran past {CHILD_TIMEOUT_S} s; its output: {exc.stdout!r}"[-3000:]
    seen = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {"models": []}
    return seen, tail


def problems_of(model: dict[str, Any], cap_bytes: int) -> list[str]:
    """What one model's figures break of the kit's rules besides the accuracy share."""
    name = model["model"]
    if "error" in model:
        return [f"{name}: {model['error']}"]
    if model["status"] != "estimated":
        return [f"{name}: the estimate was {model['status']}: {model.get('failure')}"]
    found = []
    card = model["card"]
    # The recommendation can only hold under the cap if the estimate counts with it.
    if card is None or card["free_for_step_bytes"] > cap_bytes:
        found.append(f"{name}: the estimate does not read the per-process memory fraction (card {card})")
    recommended = model.get("recommended")
    if recommended is None:
        found.append(f"{name}: no recommended batch size")
        return found
    if not model.get("recommended_ran"):
        found.append(f"{name}: the recommended batch size {recommended} ran out of memory")
    if "true_largest" not in model:
        found.append(f"{name}: the kit's deadline came before the search for the true largest")
    else:
        bracket = Bracket(**model["true_largest"])
        if bracket.largest_at_most < 1:
            found.append(f"{name}: not even a batch of 1 ran under the cap")
        elif recommendation_share(recommended, bracket) < RECOMMENDED_SHARE:
            found.append(f"{name}: recommended {recommended} is under {RECOMMENDED_SHARE:.0%} of {bracket}")
    return found


@pytest.mark.timeout(CHILD_TIMEOUT_S + 20)
def test_predicted_peaks_and_recommended_batch_sizes_hold_on_the_card(
    tmp_path: Path, figures: Callable[..., Any]
) -> None:
    seen, tail = run_child(tmp_path / "estimate.json")
    models = seen["models"]
    rows = [
        accuracy_row(m["model"], s["batch_size"], s["predicted_bytes"], s["measured_bytes"])
        for m in models
        for s in m.get("sizes", ())
    ]
    recommendations = [
        {
            key: m.get(key)
            for key in ("model", "variant", "recommended", "recommended_ran", "true_largest", "estimate_ms", "seconds")
        }
        for m in models
    ]
    within = share_within(rows, TOLERANCE_PERCENT)
    shares = [
        recommendation_share(m["recommended"], Bracket(**m["true_largest"]))
        for m in models
        if m.get("recommended") and m.get("true_largest", {}).get("fits")
    ]
    # Every figure goes to the report before any check can stop the test.
    figures(
        estimate_accuracy=rows,
        estimate_within_share=within,
        estimate_recommendations=recommendations,
        estimate_recommended_shares=[round(s, 3) for s in shares],
        estimate_cap_bytes=seen.get("cap_bytes"),
        estimate_cards=[{"model": m["model"], "card": m.get("card")} for m in models],
        estimate_errors=[{"model": m["model"], "error": m["error"]} for m in models if "error" in m],
    )
    # The report prints the rows as a table (scripts/gpu_report.py); the test's log has them too.
    print("\n".join(json.dumps(r) for r in rows))
    print(tail)
    problems = [p for m in models for p in problems_of(m, seen.get("cap_bytes", 0))]
    if len(models) != REFERENCE_MODEL_COUNT:
        problems.append(f"the child checked {len(models)} of the {REFERENCE_MODEL_COUNT} reference models: {tail}")
    if within < WITHIN_SHARE:
        problems.append(f"{within:.0%} of {len(rows)} peaks within ±{TOLERANCE_PERCENT:.0f} % (needs 90 %)")
    assert not problems, "\n".join(problems)


ESTIMATE_ON_CPU = """\
import json, os, sys, torch
sys.path.insert(0, sys.argv[1])
from estimate_reference_models import mlp
from jupyterlab_vram_helper.estimate.training_step import estimate_training_step
model, optimizer, loss_fn, make_batch = mlp("cpu")
result = estimate_training_step(model, make_batch(64, "cpu"), optimizer, loss_fn, batch_sizes=[64, 1024])
print(json.dumps({"pid": os.getpid(), "cuda_initialized": torch.cuda.is_initialized(), "status": result["status"],
                  "context": torch._C._cuda_hasPrimaryContext(0)}), flush=True)
sys.stdin.read()  # until the test has read NVML's list
"""


@pytest.mark.timeout(120)
def test_an_estimate_of_a_cpu_model_creates_no_cuda_context(nvml: Nvml, figures: Callable[..., Any]) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", ESTIMATE_ON_CPU, str(ROOT / "tests")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=child_env(),
    )
    try:
        line = child.stdout.readline() if child.stdout else ""
        seen = json.loads(line)
        listed = nvml.pids()
    finally:
        if child.stdin:
            child.stdin.close()
        child.wait(timeout=60)
    figures(estimate_child=seen, nvml_pids=sorted(listed))
    assert seen["status"] == "estimated", seen
    assert seen["cuda_initialized"] is False and seen["context"] is False, seen
    assert seen["pid"] not in listed
    # The control: NVML on this machine does list a process that has a context.
    holder = MemoryHolder(64 * MiB)
    try:
        assert holder.pid in nvml.pids(), "NVML lists no process with a CUDA context here: the check proves nothing"
    finally:
        holder.close()
