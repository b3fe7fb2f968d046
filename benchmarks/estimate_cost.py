"""What one memory estimate costs for each reference model (target: at most 3 s each on a 2-core machine).

Prints figures; it is not a test. For every model of
tests/estimate_reference_models.py, built on the device asked for with a
sample batch of its smallest kit batch size, it calls
``estimate_training_step`` (in this process, as the GPU kit does) for the
model's three batch sizes, ``--tries`` times, fitted to a card of
``--card-gib`` (a planned card on the CPU, so that the largest batch size is
found and confirmed as on a GPU), and prints a table: the first call's time
to the answer and to the whole estimate (a model's first estimate fills
PyTorch's fake-tensor cache for its shapes, and the process's first pays
for the machinery once, in the first model's row); the median time to the answer (the plain step's figures and
the largest batch size that fits, which the panel shows as soon as they
come) and its ratio to the 3 s target; the median and slowest time to the
whole estimate, the remedies included; and the predicted training peak at
each batch size. The models run one after another in one process, so their
ratios are comparable within a run.

    .venv/bin/python benchmarks/estimate_cost.py [--tries 3] [--only mlp resnet ...]
                                                 [--card-gib 80] [--device cpu|cuda] [--json PATH]

With ``--device cuda`` the models and batches live on GPU 0, so the estimate
traces on the card's device and names the largest batch size that fits the
card itself (``--card-gib 0``) or the planned one.
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


def measure(ref: Any, device: str, tries: int, card_gib: float) -> dict[str, Any]:
    from estimate_reference_models import SEED

    from jupyterlab_vram_helper.estimate.training_step import estimate_training_step

    model, optimizer, loss_fn, make_batch = ref.build(device)
    sample = make_batch(ref.batch_sizes[0], device)
    seconds, answers, result = [], [], None
    card_bytes = int(card_gib * 2**30) or None
    for _ in range(tries):
        start = time.perf_counter()
        answered: list[float] = []

        def progress(
            stage: str,
            done: int,
            total: int,
            partial: Any = None,
            answered: list[float] = answered,
            start: float = start,
        ) -> None:
            if partial is not None:
                answered.append(time.perf_counter() - start)

        result = estimate_training_step(
            model,
            sample,
            optimizer,
            loss_fn,
            batch_sizes=list(ref.batch_sizes),
            names={"model": ref.name},
            progress=progress,
            card_bytes=card_bytes,
        )
        seconds.append(time.perf_counter() - start)
        answers.append(answered[0] if answered else seconds[-1])
    assert result is not None
    later = seconds[1:] or seconds
    later_answers = answers[1:] or answers
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
        "first_answer_s": round(answers[0], 3),
        "answer_median_s": round(statistics.median(later_answers), 3),
        "median_s": round(statistics.median(later), 3),
        "max_s": round(max(later), 3),
        "elapsed_ms_last": round(result["elapsed_ms"], 1),
        "train_peak_bytes": peaks,
        "largest_batch_size": result["largest_batch_size"],
        "failure": result["failure"],
    }


def print_table(rows: list[dict[str, Any]]) -> None:
    print(
        f"{'model':20s} {'status':9s} {'1st answer':>10s} {'1st all':>8s} {'answer s':>9s} {'÷ 3 s':>6s}"
        f" {'all s':>6s} {'max s':>6s}"
        f" {'largest':>8s}  train peak (MiB)"
    )
    for r in rows:
        peaks = ", ".join(f"{b}: {p / MiB:,.0f}" for b, p in r["train_peak_bytes"].items())
        print(
            f"{r['model']:20s} {r['status']:9s} {r['first_answer_s']:10.2f} {r['first_s']:8.2f}"
            f" {r['answer_median_s']:9.2f}"
            f" {r['answer_median_s'] / TARGET_S:6.2f} {r['median_s']:6.2f} {r['max_s']:6.2f}"
            f" {r['largest_batch_size'] or '-':>8}  {peaks}" + ("" if r["state_unchanged"] else "  STATE CHANGED")
        )
        if r["failure"]:
            print(f"    failure: {r['failure']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=3, help="estimates per model (default 3; the first is apart)")
    parser.add_argument("--only", nargs="*", default=None, metavar="NAME", help="these reference models only")
    parser.add_argument(
        "--card-gib", type=float, default=80.0, help="plan for a card of this many GiB (default 80; 0: the device's)"
    )
    add_common_arguments(parser)
    args = parser.parse_args()
    require_device(args.device)
    from estimate_reference_models import REFERENCE_MODELS

    chosen = [r for r in REFERENCE_MODELS if not args.only or r.name in args.only]
    rows = []
    for ref in chosen:
        rows.append(measure(ref, args.device, args.tries, args.card_gib))
        print(f"  {ref.name}: {rows[-1]['answer_median_s']:.2f} s", file=sys.stderr, flush=True)
    card = f"a planned card of {args.card_gib:g} GiB" if args.card_gib else "the device's card"
    print(f"device: {args.device}; {card}; {args.tries} estimates per model, each of its three batch sizes")
    print_table(rows)
    worst = max(rows, key=lambda r: r["answer_median_s"])
    print(
        f"slowest answer: {worst['model']} {worst['answer_median_s']:.2f} s median (target <= {TARGET_S:.0f} s per "
        f"estimate); the remedies follow, {max(r['median_s'] for r in rows):.2f} s at most for the whole estimate"
    )
    write_json(
        args.json,
        "estimate_cost",
        args.device,
        {"tries": args.tries, "models": [r.name for r in chosen], "card_gib": args.card_gib},
        {"models": rows},
        [target(f"answer for {r['model']}, median", r["answer_median_s"], TARGET_S, "s") for r in rows],
    )


if __name__ == "__main__":
    main()
