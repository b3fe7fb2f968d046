"""What delivering the helper costs a fresh kernel: the bootstrap, then the first sample.

Prints figures; it is not a test. For each of ``--kernels`` fresh ipykernels
(the interpreter running this script), it sends the bootstrap code exactly as
the frontend does (one silent execute of what ``node scripts/bundle-helper.mjs
--stdout`` prints) and reads:

- bootstrap: the kernel's own busy->idle time of that execute (its status
  messages' timestamps): inflating the bundle, compiling and importing the
  helper, installing the comm target, the hooks and the sampler thread;
- first sample: from sending the comm open to the arrival of the helper's
  ``initial`` sample (client clock), what the panel waits for after that;
- the bootstrap code's size, as it travels in the execute request.

    .venv/bin/python benchmarks/bootstrap_cost.py [--kernels 10] [--device cpu|cuda] [--json PATH]

With ``--device cuda`` every kernel has put CUDA into use first, so the first
sample also reads the allocator and NVML.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from _common import CUDA_IN_USE, add_common_arguments, require_device, target, write_json  # noqa: E402
from kernel_harness import Kernel, bootstrap_code  # noqa: E402

BOOTSTRAP_TARGET_MS = 50.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=10, help="fresh kernels to measure (default 10)")
    add_common_arguments(parser)
    args = parser.parse_args()
    require_device(args.device)

    code = bootstrap_code()
    bootstrap_ms = []
    first_sample_ms = []
    for _ in range(args.kernels):
        kernel = Kernel()
        try:
            if args.device == "cuda":
                assert kernel.execute(CUDA_IN_USE, timeout=300)["status"] == "ok"
            reply = kernel.execute(code, silent=True, store_history=False)
            assert reply["status"] == "ok", reply
            busy, idle = kernel.status_times(reply["_msg_id"])
            bootstrap_ms.append((idle - busy) * 1000)
            sent = time.time()
            comm_id = kernel.open_comm({"type": "open", "protocol": 1})
            kernel.wait_for(comm_id, lambda d: d.get("reason") == "initial", 30)
            initial = next(m for m in kernel.comm_messages(comm_id) if m["content"]["data"].get("reason") == "initial")
            # When the message arrived, not when the harness's polling saw it.
            first_sample_ms.append((kernel.arrival[initial["header"]["msg_id"]] - sent) * 1000)
        finally:
            kernel.shutdown()

    bootstrap_median = statistics.median(bootstrap_ms)
    sample_median = statistics.median(first_sample_ms)
    print(f"fresh kernels: {args.kernels}; device {args.device}; Python {sys.version.split()[0]}")
    print(f"bootstrap code: {len(code):,} characters")
    print(f"bootstrap in the kernel (busy->idle), ms: {', '.join(f'{x:.1f}' for x in bootstrap_ms)}")
    print(f"comm open -> first sample, ms:           {', '.join(f'{x:.1f}' for x in first_sample_ms)}")
    print(f"medians: bootstrap {bootstrap_median:.1f} ms, first sample {sample_median:.1f} ms")
    verdict = "met" if bootstrap_median <= BOOTSTRAP_TARGET_MS else "NOT met"
    print(f"target: the bootstrap's own time in the kernel <= {BOOTSTRAP_TARGET_MS:.0f} ms: "
          f"{bootstrap_median:.1f} ms, {verdict}")
    write_json(
        args.json, "bootstrap_cost", args.device, {"kernels": args.kernels},
        {"bootstrap_code_chars": len(code), "bootstrap_ms_median": round(bootstrap_median, 1),
         "bootstrap_ms": [round(x, 1) for x in bootstrap_ms],
         "first_sample_ms_median": round(sample_median, 1), "first_sample_ms": [round(x, 1) for x in first_sample_ms]},
        [target("bootstrap in the kernel, median", bootstrap_median, BOOTSTRAP_TARGET_MS, "ms")],
    )


if __name__ == "__main__":
    main()
