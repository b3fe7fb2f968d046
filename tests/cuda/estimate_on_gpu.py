"""Run by tests/cuda/test_estimate_cuda.py in a child process: estimates, then real steps, of every reference model.

    python tests/cuda/estimate_on_gpu.py OUT_JSON [--cap-gib 12] [--margin 0.1] [--deadline-s 110] [--only NAME ...]

For each model of tests/estimate_reference_models.py, on GPU 0 capped to
``--cap-gib`` by ``torch.cuda.set_per_process_memory_fraction`` (so that the
true largest batch size is found in a few GiB rather than on the whole card):
the estimate, the measured peak of steady training steps at the model's three
batch sizes, 20 training steps and one evaluation at the recommended batch
size, and the true largest found by real steps. Writes what it saw as JSON; a
model that raised is recorded with its error and the others still run.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
# The helper comes from PYTHONPATH, which the test sets: the kit's own tree, or
# another one named before it (a branch whose estimator is under review). It is
# imported where it is used, since that tree is not the one mypy reads.

from estimate_kit import largest_that_fits  # noqa: E402
from estimate_reference_models import (  # noqa: E402
    REFERENCE_MODELS,
    Batch,
    Built,
    ReferenceModel,
    evaluation_step,
    training_step,
)

GiB = 1 << 30
RECOMMENDED_STEPS = 20
# Steady state: one step first makes the optimizer's state, then the peak of two more is measured.
MEASURED_STEPS = 2
# cuDNN and cuBLAS report a failed allocation as a RuntimeError of their own, not as torch's OOM.
ALLOCATION_FAILURES = ("out of memory", "ALLOC_FAILED", "NOT_ENOUGH_WORKSPACE")


def out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc`` says the card had no room, from torch's allocator or from a CUDA library."""
    return isinstance(exc, torch.cuda.OutOfMemoryError) or (
        isinstance(exc, RuntimeError) and any(s in str(exc) for s in ALLOCATION_FAILURES)
    )


def release() -> None:
    """Give every freed block back, so that the next try starts from the model alone."""
    gc.collect()
    torch.cuda.empty_cache()


def steady_peak(built: Built, size: int, amp: bool) -> int:
    """``max_memory_allocated`` over steady training steps at ``size``, the batch on the card included."""
    batch = built[3](size, "cuda")
    training_step(built, batch, amp)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    for _ in range(MEASURED_STEPS):
        training_step(built, batch, amp)
    torch.cuda.synchronize()
    return int(torch.cuda.max_memory_allocated())


def runs(built: Built, size: int, amp: bool, steps: int, evaluate: bool = False) -> bool:
    """Whether ``steps`` training steps (and one evaluation) at ``size`` run without running out of memory."""
    batch: Batch | None = None
    try:
        batch = built[3](size, "cuda")
        for _ in range(steps):
            training_step(built, batch, amp)
        if evaluate:
            evaluation_step(built, batch, amp)
        torch.cuda.synchronize()
        return True
    except (torch.cuda.OutOfMemoryError, RuntimeError) as exc:
        if not out_of_memory(exc):
            raise
        return False
    finally:
        # The failed step's gradients and the exception's frames hold blocks until they go.
        built[1].zero_grad(set_to_none=True)
        batch = None
        release()


def predictions(result: dict[str, Any], ref: ReferenceModel) -> tuple[dict[int, int], int | None]:
    """The predicted training peak per batch size and the recommended batch size, of the variant the model trains as."""
    if ref.variant == "plain":
        return {r["batch_size"]: r["train_peak_bytes"] for r in result["rows"]}, result["largest_batch_size"]
    variant = next(v for v in result["variants"] if v["variant"] == ref.variant)
    if not variant["applicable"]:
        raise RuntimeError(f"the estimate's {ref.variant} variant is not applicable: {variant['reason']}")
    # The variant gives its line (what does not grow with the batch, and what each sample adds).
    line = {b: variant["fixed_bytes"] + variant["per_sample_bytes"] * b for b in ref.batch_sizes}
    return line, variant["largest_batch_size"]


def check_model(ref: ReferenceModel, margin: float, bisect: bool) -> dict[str, Any]:
    """Everything the kit compares for one reference model."""
    started = time.perf_counter()
    built = ref.build("cuda")
    sample = built[3](ref.batch_sizes[0], "cuda")
    estimate = importlib.import_module("jupyterlab_vram_helper.estimate.training_step").estimate_training_step
    result = estimate(built[0], sample, built[1], built[2], batch_sizes=list(ref.batch_sizes), margin=margin)
    del sample
    seen: dict[str, Any] = {
        "model": ref.name,
        "variant": ref.variant,
        "status": result["status"],
        "traced_on": result.get("traced_on"),
        "estimate_ms": result["elapsed_ms"],
        "card": result["card"],
        "notes": result["notes"],
        "failure": result["failure"],
    }
    if result["status"] != "estimated":
        return seen
    predicted, recommended = predictions(result, ref)
    seen["sizes"] = []
    for size in ref.batch_sizes:
        measured = steady_peak(built, size, ref.amp)
        release()
        seen["sizes"].append({"batch_size": size, "predicted_bytes": predicted[size], "measured_bytes": measured})
    seen["recommended"] = recommended
    if recommended is not None:
        seen["recommended_ran"] = runs(built, recommended, ref.amp, RECOMMENDED_STEPS, evaluate=True)
    if bisect:
        bracket = largest_that_fits(
            lambda n: runs(built, n, ref.amp, MEASURED_STEPS), recommended or ref.batch_sizes[-1]
        )
        seen["true_largest"] = bracket._asdict()
    seen["seconds"] = round(time.perf_counter() - started, 2)
    return seen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--cap-gib", type=float, default=12.0)
    parser.add_argument("--margin", type=float, default=0.1)
    parser.add_argument("--deadline-s", type=float, default=110.0, help="no new search for the true largest after")
    parser.add_argument("--only", nargs="*", default=None, help="these reference models only")
    args = parser.parse_args()
    started = time.perf_counter()
    total = torch.cuda.get_device_properties(0).total_memory
    cap = min(1.0, args.cap_gib * GiB / total)
    torch.cuda.set_per_process_memory_fraction(cap, 0)
    seen: dict[str, Any] = {
        "cap_bytes": int(cap * total),
        "total_bytes": total,
        "fraction": cap,
        "fraction_read_back": torch.cuda.get_per_process_memory_fraction(0),
        "models": [],
    }
    for ref in REFERENCE_MODELS:
        if args.only and ref.name not in args.only:
            continue
        bisect = time.perf_counter() - started < args.deadline_s
        try:
            seen["models"].append(check_model(ref, args.margin, bisect))
        except Exception as exc:
            seen["models"].append({"model": ref.name, "error": "".join(traceback.format_exception_only(exc)).strip()})
            traceback.print_exc()
        release()
        # Written after every model: a child stopped by the test's timeout still leaves what it saw.
        args.out.write_text(json.dumps(seen, indent=1) + "\n", encoding="utf-8")
        print(f"{ref.name}: {time.perf_counter() - started:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
