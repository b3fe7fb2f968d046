"""What one memory estimate costs for each reference model (target: at most 3 s each on a 2-core machine).

Prints figures; it is not a test. For every model of
tests/estimate_reference_models.py, built on the device asked for with a
sample batch of its smallest kit batch size, it calls
``estimate_training_step`` (in this process, as the GPU kit does) for the
model's three batch sizes, ``--tries`` times, and prints a table: the first
call (which pays for PyTorch's fake-tensor machinery once per process in the
first model's row), the median and the slowest of the others, the ratio of
the median to the 3 s target, the estimate's own elapsed_ms, and the predicted
training peak at each batch size. The models run one after another in one
process, so their ratios are comparable within a run.

    .venv/bin/python benchmarks/estimate_cost.py [--tries 3] [--only mlp resnet ...]
                                                 [--device cpu|cuda] [--json PATH]

With ``--device cuda`` the models and batches live on GPU 0, so the estimate
traces on the card's device and names the largest batch size that fits.
``--json PATH`` also writes these figures and the targets' verdicts as JSON.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
# Appended, not prepended: a PYTHONPATH naming another helper tree (a branch under
# review) comes first, so its estimator is the one measured.
sys.path.append(str(ROOT / "python_helper"))

from _common import add_common_arguments, require_device, target, write_json  # noqa: E402

TARGET_S = 3.0
MiB = 1 << 20


def measure(ref: Any, device: str, tries: int) -> dict[str, Any]:
    from estimate_reference_models import SEED

    from jupyterlab_vram_helper.estimate.training_step import estimate_training_step

    model, optimizer, loss_fn, make_batch = ref.build(device)
    sample = make_batch(ref.batch_sizes[0], device)
    seconds, result = [], None
    for _ in range(tries):
        start = time.perf_counter()
        result = estimate_training_step(
            model, sample, optimizer, loss_fn, batch_sizes=list(ref.batch_sizes), names={"model": ref.name}
        )
        seconds.append(time.perf_counter() - start)
    assert result is not None
    later = seconds[1:] or seconds
    peaks = {r["batch_size"]: r["train_peak_bytes"] for r in result["rows"]}
    if ref.amp:
        # The model trains under autocast: its figures are the amp_bf16 variant's line.
        amp = next(v for v in result["variants"] if v["variant"] == "amp_bf16")
        if amp["applicable"]:
            peaks = {b: amp["fixed_bytes"] + amp["per_sample_bytes"] * b for b in ref.batch_sizes}
    return {
        "model": ref.name,
        "seed": SEED,
        "status": result["status"],
        "state_unchanged": result["state_unchanged"],
        "first_s": round(seconds[0], 3),
        "median_s": round(statistics.median(later), 3),
        "max_s": round(max(later), 3),
        "elapsed_ms_last": round(result["elapsed_ms"], 1),
        "train_peak_bytes": peaks,
        "largest_batch_size": result["largest_batch_size"],
        "failure": result["failure"],
    }


def print_table(rows: list[dict[str, Any]]) -> None:
    print(f"{'model':20s} {'status':9s} {'first s':>8s} {'median s':>9s} {'max s':>6s} {'÷ 3 s':>6s}  train peak (MiB)")
    for r in rows:
        peaks = ", ".join(f"{b}: {p / MiB:,.0f}" for b, p in r["train_peak_bytes"].items())
        print(
            f"{r['model']:20s} {r['status']:9s} {r['first_s']:8.2f} {r['median_s']:9.2f} {r['max_s']:6.2f}"
            f" {r['median_s'] / TARGET_S:6.2f}  {peaks}" + ("" if r["state_unchanged"] else "  STATE CHANGED")
        )
        if r["failure"]:
            print(f"    failure: {r['failure']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=3, help="estimates per model (default 3; the first is apart)")
    parser.add_argument("--only", nargs="*", default=None, metavar="NAME", help="these reference models only")
    add_common_arguments(parser)
    args = parser.parse_args()
    require_device(args.device)
    from estimate_reference_models import REFERENCE_MODELS

    chosen = [r for r in REFERENCE_MODELS if not args.only or r.name in args.only]
    rows = []
    for ref in chosen:
        rows.append(measure(ref, args.device, args.tries))
        print(f"  {ref.name}: {rows[-1]['median_s']:.2f} s", file=sys.stderr, flush=True)
    print(f"device: {args.device}; {args.tries} estimates per model, each of its three batch sizes")
    print_table(rows)
    worst = max(rows, key=lambda r: r["median_s"])
    print(f"slowest: {worst['model']} {worst['median_s']:.2f} s median (target <= {TARGET_S:.0f} s per estimate)")
    write_json(
        args.json,
        "estimate_cost",
        args.device,
        {"tries": args.tries, "models": [r.name for r in chosen]},
        {"models": rows},
        [target(f"estimate of {r['model']}, median", r["median_s"], TARGET_S, "s") for r in rows],
    )


if __name__ == "__main__":
    main()
